package router

import (
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// A body over MaxBodySize is answered 413 before it is read (fasthttp
// refuses it from its Content-Length, or once a chunked body passes the
// cap), and the connection is closed. Closing a socket with unread input
// sends a reset, and a client that sends its whole body before it reads
// the answer (anything without Expect: 100-continue) got the reset instead
// of the 413. So the connection of such an answer lingers on close, as
// nginx's lingering_close does: it sends the answer and its end (FIN), then
// reads and discards what the client still sends, up to lingerBytes or
// lingerTime, whichever comes first, and only then closes.
const (
	// lingerBytes is the most a lingering connection reads: bodies up to
	// twice the cap get their 413 (a larger announced one is closed at
	// once: it would be reset anyway).
	lingerBytes = 2 * MaxBodySize
	// lingerTime bounds the linger of a client that sends slowly or not at
	// all; less than the ReadTimeout any connection may take for a request.
	lingerTime = 10 * time.Second
)

// lingerListener hands out connections that can be told to linger on
// close (lingerConn).
type lingerListener struct {
	net.Listener
	maxBytes int64
	maxTime  time.Duration
}

func (l *lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &lingerConn{Conn: c, maxBytes: l.maxBytes, maxTime: l.maxTime}, nil
}

// lingerConn is a connection whose Close, once linger was called, first
// half-closes it and discards its input, bounded in bytes and time. The
// discard uses io.Discard's pooled buffer, so a lingering connection holds
// no memory of its own.
type lingerConn struct {
	net.Conn
	maxBytes int64
	maxTime  time.Duration
	linger   atomic.Bool
}

func (c *lingerConn) Close() error {
	if c.linger.Swap(false) {
		if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite() // the client reads the answer to its end
		}
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.maxTime))
		_, _ = io.CopyN(io.Discard, c.Conn, c.maxBytes)
	}
	return c.Conn.Close()
}

// lingerOnClose makes the connection of ctx linger when it closes after
// the answer, unless the request announced a body too large to drain.
func lingerOnClose(ctx *fasthttp.RequestCtx) {
	c, ok := ctx.Conn().(*lingerConn)
	if ok && int64(ctx.Request.Header.ContentLength()) <= c.maxBytes {
		c.linger.Store(true)
	}
}
