package shard

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

func TestHeaderRoundTrip(t *testing.T) {
	f := func(kind byte, group uint32) {
		t.Helper()
		k, g, err := decodeHeader(encodeHeader(kind, group))
		if err != nil || k != kind || g != group {
			t.Fatalf("decode(encode(%d, %d)) = %d, %d, %v", kind, group, k, g, err)
		}
	}
	f(kindRaft, 0)
	f(kindRaft, 1<<32-1)
	f(kindRPC, 0)
}

func TestRPCRoundTrip(t *testing.T) {
	a := newTestNode(t, "a", t.TempDir())
	b := newTestNode(t, "b", t.TempDir())
	b.HandleRPC(func(c net.Conn) {
		defer c.Close()
		io.Copy(c, c) // echo
	})
	c, err := a.DialRPC(b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatalf("DialRPC: %v", err)
	}
	defer c.Close()
	msg := bytes.Repeat([]byte("hebb rpc "), 1000)
	go c.Write(msg)
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read echo: %v", err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("echo differs")
	}
}

func TestBadMuxHeaderRejected(t *testing.T) {
	old := headerTimeout
	headerTimeout = 200 * time.Millisecond
	t.Cleanup(func() { headerTimeout = old })

	n := newTestNode(t, "n", t.TempDir())
	g := startGroup(t, n, GroupConfig{ID: 0, Bootstrap: true}, newKV())
	waitLeader(t, g)

	tests := []struct {
		name string
		send []byte
	}{
		{"garbage", []byte("GET / HTTP/1.1\r\n\r\n")},
		{"bad magic", append([]byte("xebb"), 1, 0, 0, 0, 0)},
		{"unknown kind", append([]byte("hebb"), 9, 0, 0, 0, 0)},
		{"unknown group", encodeHeader(kindRaft, 42)},
		{"rpc without handler", encodeHeader(kindRPC, 0)},
		{"short header then silence", []byte("heb")},
		{"nothing", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", n.Addr())
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer c.Close()
			if _, err := c.Write(tt.send); err != nil {
				t.Fatalf("write: %v", err)
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second)) // guard only
			_, err = c.Read(make([]byte, 1))
			if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("connection not closed by the node")
			}
			if err == nil {
				t.Fatalf("node answered a bad header")
			}
		})
	}
	// The node still serves its group.
	propose(t, g, "still=alive")
}
