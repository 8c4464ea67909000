// Package ratelimit counts events per key (an e-mail address, a client
// address) in fixed windows, for the limits the router's unauthenticated
// endpoints enforce: console sign-in and sign-up, OAuth client
// registration. Counts live in the memory of each node: a client spreading
// its requests over n nodes gets n times the limit, which bounds abuse
// without a Raft entry per attempt. Printer throttles the log lines of the
// HTTP servers' connection errors, which clients cause at will.
package ratelimit
