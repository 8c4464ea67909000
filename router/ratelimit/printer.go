package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"
)

// Printer is the logger of an HTTP server's connection errors (fasthttp's
// Logger): those are mostly what clients cause (a body over the limit, a
// malformed request, a dropped connection), so anyone could otherwise
// write a log line a request. It logs at most burst lines, then one each
// interval, at level; the next line it logs says how many it dropped.
// An error among a line's arguments is logged without any text it quotes
// (quietError): the HTTP layer quotes the bytes of a request it refuses,
// and those hold API keys, session cookies and vault values.
type Printer struct {
	log      *slog.Logger
	level    slog.Level
	burst    float64
	interval time.Duration
	now      func() time.Time // a variable for tests

	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped int
}

// ConnErrors is the Printer of the servers' connection errors: WARN, 20
// lines, then one a second.
func ConnErrors(h slog.Handler) *Printer { return NewPrinter(h, slog.LevelWarn, 20, time.Second) }

// NewPrinter returns a Printer writing to h.
func NewPrinter(h slog.Handler, level slog.Level, burst int, interval time.Duration) *Printer {
	return &Printer{log: slog.New(h), level: level, burst: float64(burst), interval: interval,
		now: time.Now, tokens: float64(burst)}
}

// Printf logs the line unless the budget is spent, or an error among its
// arguments is a connection closed on this side (net.ErrClosed: the
// server's shutdown closing connections that never sent a request).
func (p *Printer) Printf(format string, args ...any) {
	for _, a := range args {
		if err, ok := a.(error); ok && errors.Is(err, net.ErrClosed) {
			return
		}
	}
	p.mu.Lock()
	now := p.now()
	if !p.last.IsZero() {
		p.tokens = min(p.burst, p.tokens+float64(now.Sub(p.last))/float64(p.interval))
	}
	p.last = now
	if p.tokens < 1 {
		p.dropped++
		p.mu.Unlock()
		return
	}
	p.tokens--
	dropped := p.dropped
	p.dropped = 0
	p.mu.Unlock()
	for i, a := range args {
		if err, ok := a.(error); ok {
			args[i] = quietError(err)
		}
	}
	msg := fmt.Sprintf(format, args...)
	if dropped > 0 {
		p.log.Log(context.Background(), p.level, msg, "suppressed_before", dropped)
		return
	}
	p.log.Log(context.Background(), p.level, msg)
}

// quietError is err's text up to the first text it quotes, or the buffer
// it shows: "error when reading request headers: invalid header value
// \"...\": buffer size=319, contents: ..." becomes "error when reading
// request headers: invalid header value [request bytes not logged]".
func quietError(err error) string {
	msg := err.Error()
	cut := len(msg)
	for _, mark := range []string{`"`, "'", "`", "buffer size=", "contents:"} {
		if i := strings.Index(msg, mark); i >= 0 && i < cut {
			cut = i
		}
	}
	if cut == len(msg) {
		return msg
	}
	return strings.TrimRight(msg[:cut], ": ") + " [request bytes not logged]"
}
