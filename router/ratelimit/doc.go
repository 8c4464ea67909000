// Package ratelimit counts events per key (an e-mail address, a client
// address) in fixed windows, for the limits the router's unauthenticated
// endpoints enforce: console sign-in and sign-up, OAuth client
// registration, chat guests. A client address is keyed as ClientAddr says:
// behind trusted proxies the forwarded one, and an IPv6 client by its /64.
// Counts live in the memory of each node: a client spreading
// its requests over n nodes gets n times the limit, which bounds abuse
// without a Raft entry per attempt. Printer throttles the log lines of the
// HTTP servers' connection errors, which clients cause at will.
package ratelimit
