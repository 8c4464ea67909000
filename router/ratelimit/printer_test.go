package ratelimit

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

func TestPrinterThrottles(t *testing.T) {
	var buf bytes.Buffer
	p := NewPrinter(slog.NewTextHandler(&buf, nil), slog.LevelWarn, 5, time.Second)
	now := time.Unix(1_000_000, 0)
	p.now = func() time.Time { return now }
	for i := range 100 {
		p.Printf("error when serving connection %d", i)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 5 || !strings.Contains(lines[4], "connection 4") {
		t.Fatalf("a burst of 100 logged %d lines, want the first 5:\n%s", len(lines), buf.String())
	}
	buf.Reset()
	now = now.Add(1500 * time.Millisecond) // one line's budget back
	p.Printf("later %d", 1)
	p.Printf("later %d", 2)
	got := strings.TrimSpace(buf.String())
	if strings.Count(got, "\n") != 0 || !strings.Contains(got, "later 1") || !strings.Contains(got, "suppressed_before=95") ||
		!strings.Contains(got, "level=WARN") {
		t.Fatalf("after 1.5 s: %q, want one WARN line counting the 95 dropped", got)
	}
}

// An error argument is logged up to the first text it quotes or the buffer
// it shows; an error that quotes nothing, and other arguments, as they are.
func TestPrinterQuotesNoRequestBytes(t *testing.T) {
	for _, tc := range []struct{ err, want string }{
		{`error when reading request headers: invalid header value "a\x01b": buffer size=319, contents: "POST / HTTP/1.1\r\nX-Api-Key: k"`,
			"error when reading request headers: invalid header value [request bytes not logged]"},
		{"error when reading request headers: fasthttp: duplicate content-length header: buffer size=326, contents: POST",
			"error when reading request headers: fasthttp: duplicate content-length header [request bytes not logged]"},
		{"cannot read: 'x'", "cannot read [request bytes not logged]"},
		{"empty hex number", "empty hex number"},
	} {
		var buf bytes.Buffer
		p := ConnErrors(slog.NewTextHandler(&buf, nil))
		p.Printf("error when serving connection %q<->%q: %v", "127.0.0.1:1", "127.0.0.1:2", errors.New(tc.err))
		if got := buf.String(); !strings.Contains(got, tc.want) || strings.Contains(got, "X-Api-Key") ||
			!strings.Contains(got, `\"127.0.0.1:2\"`) {
			t.Errorf("%q logged as %q, want %q", tc.err, got, tc.want)
		}
	}
}

// A connection closed on this side (a shutdown closing unused ones) is
// not logged.
func TestPrinterSkipsClosedConnections(t *testing.T) {
	var buf bytes.Buffer
	p := ConnErrors(slog.NewTextHandler(&buf, nil))
	p.Printf("error when serving connection %q<->%q: %v", "a", "b", fmt.Errorf("read tcp: %w", net.ErrClosed))
	if buf.Len() != 0 {
		t.Fatalf("logged %q", buf.String())
	}
}
