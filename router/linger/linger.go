package linger

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
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

	mu    sync.Mutex
	conns map[*conn]struct{} // open connections, for Drain
}

func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	lc := &conn{Conn: c, maxBytes: l.MaxBytes, maxTime: l.MaxTime, l: l, accepted: time.Now()}
	l.mu.Lock()
	if l.conns == nil {
		l.conns = map[*conn]struct{}{}
	}
	l.conns[lc] = struct{}{}
	l.mu.Unlock()
	return lc, nil
}

// drainEvery and unusedAfter pace Drain: a connection accepted that long
// ago has had its first read started, so no byte read means none sent.
const (
	drainEvery  = 100 * time.Millisecond
	unusedAfter = time.Second
)

// Drain runs shutdown (the server's graceful shutdown, which stops
// accepting and waits for its connections to finish) while closing, every
// drainEvery, the connections that have sent nothing in the unusedAfter
// since they were accepted. fasthttp counts a new connection busy until its
// first request, so one that never sent any (a browser's preconnect, a
// client pool's spare) held every stop until its read timeout: 30 s, the
// shutdown's deadline, for one idle socket. A nil l (a server not
// serving yet) only runs shutdown.
func (l *Listener) Drain(ctx context.Context, shutdown func(context.Context) error) error {
	if l == nil {
		return shutdown(ctx)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(drainEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				l.closeUnused(now)
			}
		}
	}()
	return shutdown(ctx)
}

func (l *Listener) closeUnused(now time.Time) {
	l.mu.Lock()
	var unused []*conn
	for c := range l.conns {
		if !c.used.Load() && now.Sub(c.accepted) >= unusedAfter {
			unused = append(unused, c)
		}
	}
	l.mu.Unlock()
	for _, c := range unused {
		_ = c.Close()
	}
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
	l        *Listener
	accepted time.Time
	used     atomic.Bool // a byte was read
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.used.Load() {
		c.used.Store(true)
	}
	return n, err
}

func (c *conn) Close() error {
	if c.l != nil {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	}
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
	if TimedOut(err) {
		return
	}
	OnClose(ctx)
}

// TimeoutMessage is the answer's message to a request that TimedOut.
const TimeoutMessage = "Request timeout: the request was not received in time"

// TimedOut reports whether err, an error the server met reading a
// request, is its read timeout: the client did not send it in time.
func TimedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// OnClose makes the connection of ctx linger when it closes after the
// answer, unless the request announced a body too large to drain.
func OnClose(ctx *fasthttp.RequestCtx) {
	c, ok := ctx.Conn().(*conn)
	if ok && int64(ctx.Request.Header.ContentLength()) <= c.maxBytes {
		c.linger.Store(true)
	}
}
