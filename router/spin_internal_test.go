package router

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// spinPair returns a client connection and the server side of it, accepted
// through a spinListener.
func spinPair(t *testing.T) (*spinListener, net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sl := &spinListener{Listener: ln}
	t.Cleanup(func() { _ = sl.Close() })
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	server, err := sl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := server.(*spinConn); !ok {
		t.Fatalf("accepted a %T, want a *spinConn", server)
	}
	return sl, client, server
}

func TestSpinConnReads(t *testing.T) {
	sl, client, server := spinPair(t)
	buf := make([]byte, 16)
	// Data sent after the poll gave up still arrives through the parked read.
	go func() {
		time.Sleep(5 * idleSpin)
		_, _ = client.Write([]byte("first"))
	}()
	if n, err := server.Read(buf); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if got := sl.inflight.Load(); got != 1 {
		t.Errorf("in flight after a request's bytes: %d, want 1", got)
	}
	// Data already there is read at once, and the next read settles the count.
	if _, err := client.Write([]byte("second")); err != nil {
		t.Fatal(err)
	}
	if n, err := server.Read(buf); err != nil || string(buf[:n]) != "second" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if got := sl.inflight.Load(); got != 1 {
		t.Errorf("in flight: %d, want 1", got)
	}
	// A deadline still bounds a read.
	if err := server.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past the deadline: %v", err)
	}
	if got := sl.inflight.Load(); got != 0 {
		t.Errorf("in flight while waiting for a request: %d, want 0", got)
	}
	if err := server.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	// The peer's close ends the read.
	_ = client.Close()
	if _, err := server.Read(buf); err != io.EOF {
		t.Errorf("read after the peer closed: %v, want EOF", err)
	}
	if sl.spinning.Load() {
		t.Error("a connection is still marked polling")
	}
}

func TestSpinConnCloseSettles(t *testing.T) {
	sl, client, server := spinPair(t)
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := server.Read(buf); err != nil {
		t.Fatal(err)
	}
	if err := server.Close(); err != nil {
		t.Fatal(err)
	}
	if got := sl.inflight.Load(); got != 0 {
		t.Errorf("in flight after close: %d, want 0", got)
	}
}

// TestSpinConnWaitsItsTurn: while another connection's request is in
// flight, a read does not poll; once none is, it does.
func TestSpinConnWaitsItsTurn(t *testing.T) {
	sl, client, server := spinPair(t)
	buf := make([]byte, 1)
	sl.inflight.Add(1) // another connection's request
	if _, err := client.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Read(buf); err != nil {
		t.Fatal(err)
	}
	if n := sl.polls.Load(); n != 0 {
		t.Errorf("%d polls while another request was in flight", n)
	}
	sl.inflight.Add(-1)
	if _, err := client.Write([]byte("b")); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Read(buf); err != nil { // settles its own request first
		t.Fatal(err)
	}
	if n := sl.polls.Load(); n != 1 {
		t.Errorf("%d polls with nothing else in flight, want 1", n)
	}
}
