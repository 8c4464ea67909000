package main

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// The metrics listener logs no request bytes, refuses bodies, and its stop
// does not wait for a client that holds a request half sent.
func TestMetricsListenerBounds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	stop, _ := serveMetrics(ln, slog.New(slog.NewTextHandler(&logs, nil)))
	addr := ln.Addr().String()
	send := func(req string) string {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.WriteString(c, req)
		b, _ := io.ReadAll(io.LimitReader(c, 1<<20))
		return string(b)
	}
	if got := send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); !strings.Contains(got, "200 OK") {
		t.Fatalf("GET /metrics: %.200s", got)
	}
	if got := send("GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer scrape-secret-XYZ\r\nContent-Length: 100000\r\n\r\n"); strings.Contains(got, " 200 ") || !strings.Contains(got, "Connection: close") {
		t.Errorf("a GET with a 100 kB body: %.200s", got)
	}
	send("BROKEN\x00 /metrics HTTP/1.1\r\nAuthorization: Bearer scrape-secret-XYZ\r\n\r\n")
	half, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer half.Close()
	_, _ = io.WriteString(half, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	stop()
	if d := time.Since(start); d > metricsStopWait+2*time.Second {
		t.Errorf("the stop took %v with a request half sent", d)
	}
	if strings.Contains(logs.String(), "scrape-secret") {
		t.Errorf("the log quotes a request's header:\n%s", logs.String())
	}
}
