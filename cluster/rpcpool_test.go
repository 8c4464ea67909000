package cluster

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

// TestRPCPool: requests reuse a connection; a pooled connection the other
// side closed is not used; one that fails anyway is replaced for an
// idempotent request only; and a cancelled request's connection is not
// kept.
func TestRPCPool(t *testing.T) {
	t.Parallel()
	nodes := startNodes(t, 0, "p1", "p2")
	n1, n2 := nodes[0], nodes[1]
	addr := n2.self.RaftAddr
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	idle := func() int {
		n1.pool.mu.Lock()
		defer n1.pool.mu.Unlock()
		return len(n1.pool.idle[addr])
	}
	applied := func(what string) {
		t.Helper()
		if _, err := n1.call(ctx, addr, &rpcRequest{Op: opApplied, Group: 1}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	applied("first request")
	if idle() != 1 {
		t.Fatalf("%d idle connections after an idempotent request, want 1", idle())
	}
	first := n1.pool.idle[addr][0]
	applied("second request")
	if idle() != 1 || n1.pool.idle[addr][0] != first {
		t.Fatal("the second request did not reuse the pooled connection")
	}

	_ = first.conn.Close() // a pooled connection that can no longer be used
	applied("a request after the pooled connection broke")
	if idle() != 1 || n1.pool.idle[addr][0] == first {
		t.Fatal("the broken connection was not replaced by a fresh one")
	}

	n2.SetHTTPHandler(func([]byte) []byte { return []byte("HTTP/1.1 204 No Content\r\n\r\n") })
	n1.pool.mu.Lock()
	n1.pool.idle = nil
	n1.pool.mu.Unlock()
	if _, err := n1.call(ctx, addr, &rpcRequest{Op: opHTTP, HTTP: []byte("GET / HTTP/1.1\r\n\r\n")}); err != nil {
		t.Fatal(err)
	}
	if idle() != 1 {
		t.Fatalf("%d idle connections after a forwarded request, want 1", idle())
	}
	n1.pool.mu.Lock()
	n1.pool.idle = nil
	n1.pool.mu.Unlock()

	// A long poll of a room with no event after the cursor, cancelled.
	const room = "chat_01JPOOLTEST00000000000000"
	gid := n2.GroupOf(room)
	waitUntil(t, "the second node holds the room's group", func() bool { return n2.hosts(n2.groups[gid]) })
	cmd := raftfsm.ChatCmd{Op: raftfsm.ChatCreateRoom, Room: room, At: time.Now().UnixMicro(), Name: "pool"}
	if _, err := n2.Propose(ctx, room, cmd.Encode()); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the second node applied the room", func() bool {
		_, ok := n2.fsms[gid].ChatRoom(room)
		return ok
	})
	wctx, stop := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, stop)
	_, err := n1.call(wctx, addr, &rpcRequest{Op: opChatWatch, Group: gid,
		Watch: ChatWatch{Room: room, After: 0, Limit: 1, Wait: MaxChatWait}})
	if err == nil || idle() != 0 {
		t.Fatalf("a cancelled long poll: err %v, %d idle connections (want an error and none)", err, idle())
	}
}

// An idle connection is alive until the other side closes it.
func TestRPCConnAlive(t *testing.T) {
	for range 20 {
		conn, server := connPair(t)
		rc := newRPCConn(conn)
		if !rc.alive() {
			t.Fatal("an open idle connection is not alive")
		}
		_ = server.Close()
		// Loopback delivers the close at once; 20 ms is ample.
		time.Sleep(20 * time.Millisecond)
		if rc.alive() {
			t.Fatal("a connection the other side closed is alive")
		}
		_ = conn.Close()
	}
}

// A connection whose socket cannot be peeked at is never reused: no read
// with a deadline can tell a closed one from an idle one for certain.
func TestRPCConnNoDescriptor(t *testing.T) {
	conn, _ := connPair(t)
	defer conn.Close()
	rc := newRPCConn(struct{ net.Conn }{conn})
	if rc.alive() {
		t.Fatal("a connection without a descriptor is taken as alive")
	}
	var p rpcPool
	p.put("a", rc)
	if got := p.get("a"); got != nil {
		t.Fatal("the pool handed out a connection it cannot check")
	}
}

// connPair returns the two ends of a loopback TCP connection.
func connPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}
