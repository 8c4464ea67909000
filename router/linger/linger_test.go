package linger

import (
	"errors"
	"io"
	"net"
	"os"
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
