// Package router is hebb's HTTP surface: the REST API under /api/v1, the
// public health probes, and the operator's admin API under /admin/v1. The
// remote tool connector POST /mcp (mcp.go, tools in router/mcptools) runs
// each tool as an in-process REST call (inprocess.go) as the org of its
// OAuth token, issued by router/oauth under /oauth and /.well-known.
//
// A handler authenticates, validates (the limits of interface §8), resolves
// the tenant, calls the group that holds it through the Backend interface
// and encodes the answer. The work lives below the handlers: embedding and
// concept extraction in router/embedder, the state machine in raftfsm.
//
// Invariants:
//   - Every error leaves through writeError in the five-key envelope of
//     interface §7.1 ({code, message, requestId, retryable, details});
//     unknown routes and methods included.
//   - Every response carries X-Request-Id; the same ID is the envelope's
//     requestId.
//   - Write endpoints reject unknown fields; read endpoints ignore them.
//   - A request is pre-authenticated only by the in-process user value
//     (never a header from the network); a forward to another node carries
//     it in a header that forward strips from client requests and only
//     ServeRaw (the node transport) reads. The OAuth endpoints answer in the
//     OAuth error shape their clients parse.
//   - The embedder runs here, once per write, never inside apply.
package router
