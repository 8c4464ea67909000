// Package relay moves a whole HTTP request to another node as raw bytes and
// back: a node without a replica of a tenant's group sends the request on
// (Forward), and the node it reaches answers it with its own handler
// (Serve). The REST API and the chat surface both use it; the node
// transport carries the bytes.
package relay
