package linger

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Time bounds the linger of a client that sends slowly or not at all;
// less than the read timeout the servers give any request.
const Time = 10 * time.Second

// Listener hands out connections that can be told to linger on close
// (OnClose): each reads at most MaxBytes (twice a server's body limit:
// bodies up to that get their 413, a larger announced one is closed at
// once, it would be reset anyway) for at most MaxTime.
type Listener struct {
	net.Listener
	MaxBytes int64
	MaxTime  time.Duration
}

func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, maxBytes: l.MaxBytes, maxTime: l.MaxTime}, nil
}

// conn is a connection whose Close, once OnClose was called, first
// half-closes it and discards its input, bounded in bytes and time. The
// discard uses io.Discard's pooled buffer, so a lingering connection holds
// no memory of its own.
type conn struct {
	net.Conn
	maxBytes int64
	maxTime  time.Duration
	linger   atomic.Bool
}

func (c *conn) Close() error {
	if c.linger.Swap(false) {
		if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite() // the client reads the answer to its end
		}
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.maxTime))
		_, _ = io.CopyN(io.Discard, c.Conn, c.maxBytes)
	}
	return c.Conn.Close()
}

// OnError is OnClose for the answer to err, an error the server met
// before a handler ran (fasthttp's ErrorHandler): the client may still be
// sending (a body over the cap, headers over the buffer, the rest of a
// malformed request), unless err is a read timeout: a client that did not
// send its request in time gains nothing from more of it.
func OnError(ctx *fasthttp.RequestCtx, err error) {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return
	}
	OnClose(ctx)
}

// OnClose makes the connection of ctx linger when it closes after the
// answer, unless the request announced a body too large to drain.
func OnClose(ctx *fasthttp.RequestCtx) {
	c, ok := ctx.Conn().(*conn)
	if ok && int64(ctx.Request.Header.ContentLength()) <= c.maxBytes {
		c.linger.Store(true)
	}
}
