// Package linger lets an HTTP server's connection drain what the client
// still sends before it closes.
//
// A body over a server's limit is answered 413 before it is read (fasthttp
// refuses it from its Content-Length, or once a chunked body passes the
// cap), and the connection is closed. Closing a socket with unread input
// sends a reset, and a client that sends its whole body before it reads
// the answer (anything without Expect: 100-continue) got the reset instead
// of the 413. So the connection of such an answer lingers on close, as
// nginx's lingering_close does: it sends the answer and its end (FIN), then
// reads and discards what the client still sends, up to the listener's
// MaxBytes or MaxTime, whichever comes first, and only then closes.
// OnError does the same after the answer to any error met before a
// handler runs (headers over the read buffer, a malformed request), except
// a read timeout. Framed refuses, as malformed, a request that carries both
// chunks and a Content-Length, and closes its connection (RFC 9112 §6.1).
package linger
