package linger

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// A lingering close is bounded: a client that neither sends nor closes
// holds the connection maxTime, one that sends without end maxBytes, and
// the client sees the end of the answer (FIN) before either.
func TestLingerBounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		maxBytes int64
		maxTime  time.Duration
		send     bool // the client writes without end
		linger   bool
	}{
		{"silent client: maxTime", 1 << 30, 200 * time.Millisecond, false, true},
		{"endless body: maxBytes", 1 << 20, time.Hour, true, true},
		{"no linger asked: closes at once", 1 << 30, time.Hour, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inner, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ln := &Listener{Listener: inner, MaxBytes: tc.maxBytes, MaxTime: tc.maxTime}
			defer ln.Close()
			client, err := net.Dial("tcp", inner.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			server, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			if tc.send {
				go func() {
					buf := make([]byte, 32<<10)
					for {
						if _, err := client.Write(buf); err != nil {
							return
						}
					}
				}()
			}
			server.(*conn).linger.Store(tc.linger)
			closed := make(chan error, 1)
			go func() { closed <- server.Close() }()
			if tc.linger {
				_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, err := client.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
					t.Errorf("client read while the server lingers: %v, want EOF (its half-close)", err)
				}
			}
			select {
			case <-closed:
			case <-time.After(30 * time.Second):
				t.Fatal("Close still lingering after 30 s")
			}
		})
	}
}

// OnError lingers after the answer to any transport error but a read
// timeout: the client of a body over the cap, of headers over the buffer
// or of a malformed request may still be sending.
func TestOnErrorSkipsTimeouts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		err    error
		linger bool
	}{
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, false},
		{"body over the cap", fasthttp.ErrBodyTooLarge, true},
		{"headers over the buffer", &fasthttp.ErrSmallBuffer{}, true},
		{"malformed request", errors.New("cannot parse request line"), true},
	} {
		server, client := net.Pipe()
		c := &conn{Conn: server, maxBytes: 1 << 20, maxTime: time.Second}
		var ctx fasthttp.RequestCtx
		ctx.Init2(c, nil, false)
		OnError(&ctx, tc.err)
		if c.linger.Load() != tc.linger {
			t.Errorf("%s: linger %v, want %v", tc.name, c.linger.Load(), tc.linger)
		}
		_ = client.Close()
		_ = server.Close()
	}
}

// TestDrainClosesUnusedConnections: a fasthttp server's graceful shutdown
// behind Drain ends though a client holds a connection that never sent a
// request (fasthttp waited for it until its read timeout), while a request
// in flight is still answered.
func TestDrainClosesUnusedConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv := &fasthttp.Server{ReadTimeout: time.Minute, Handler: func(ctx *fasthttp.RequestCtx) {
		<-release
		ctx.SetBodyString("done")
	}}
	l := &Listener{Listener: ln, MaxBytes: 1 << 20, MaxTime: time.Second}
	go func() { _ = srv.Serve(l) }()
	idle, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	busy, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if _, err := busy.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the request reaches the handler
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- l.Drain(ctx, srv.ShutdownWithContext) }()
	time.Sleep(unusedAfter + 3*drainEvery)
	close(release)
	answer, _ := io.ReadAll(busy)
	if !strings.Contains(string(answer), "done") {
		t.Errorf("the request in flight got %q", answer)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("shutdown: %v (the unused connection held it)", err)
	}
	if _, err := idle.Read(make([]byte, 1)); err == nil {
		t.Error("the unused connection is still open")
	}
}
