package ratelimit

import (
	"bytes"
	"log/slog"
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
