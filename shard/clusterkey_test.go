package shard

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

var (
	testSecret  = []byte("0123456789abcdef0123456789abcdef-cluster")
	otherSecret = []byte("fedcba9876543210fedcba9876543210-cluster")
)

func newKeyedNode(t *testing.T, id string, secret []byte) *Node {
	t.Helper()
	var key *ClusterKey
	if secret != nil {
		var err error
		if key, err = NewClusterKey(secret, id); err != nil {
			t.Fatal(err)
		}
	}
	n, err := NewNode(NodeConfig{NodeID: id, BindAddr: "127.0.0.1:0", DataDir: t.TempDir(), Logger: testLogger(), ClusterKey: key})
	if err != nil {
		t.Fatalf("NewNode(%s): %v", id, err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func echoRPC(n *Node) {
	n.HandleRPC(func(c net.Conn) {
		defer c.Close()
		io.Copy(c, c)
	})
}

// Nodes holding one cluster key talk over mutual TLS; the RPC pool can
// still reach the socket to peek at an idle connection.
func TestClusterKeyRPC(t *testing.T) {
	a := newKeyedNode(t, "a", testSecret)
	b := newKeyedNode(t, "b", testSecret)
	echoRPC(b)
	c, err := a.DialRPC(b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatalf("DialRPC: %v", err)
	}
	defer c.Close()
	if _, ok := c.(syscall.Conn); !ok {
		t.Fatalf("%T does not reach its socket", c)
	}
	sc, ok := c.(interface{ ConnectionState() tls.ConnectionState })
	if !ok || sc.ConnectionState().Version != tls.VersionTLS13 {
		t.Fatalf("connection %T not under TLS 1.3", c)
	}
	msg := bytes.Repeat([]byte("hebb rpc "), 1000)
	go c.Write(msg)
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo: %v", err)
	}
}

// Whoever lacks the key raises no connection: a plain mux header (what a
// stranger, or a node without the key, sends) is closed unanswered, and a
// node with another key fails its handshake both ways.
func TestClusterKeyRefusesOthers(t *testing.T) {
	keyed := newKeyedNode(t, "keyed", testSecret)
	echoRPC(keyed)
	plain := newKeyedNode(t, "plain", nil)
	echoRPC(plain)
	other := newKeyedNode(t, "other", otherSecret)
	echoRPC(other)

	raw, err := net.Dial("tcp", keyed.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.Write(append(encodeHeader(kindRPC, 0), "ping"...))
	raw.SetReadDeadline(time.Now().Add(10 * time.Second)) // guard only
	got, err := io.ReadAll(raw)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || bytes.Contains(got, []byte("ping")) {
		t.Fatalf("a plain connection was served or left open: %q, %v", got, err)
	}
	for _, tc := range []struct {
		name     string
		from, to *Node
	}{
		{"no key to a keyed node", plain, keyed},
		{"another key to a keyed node", other, keyed},
		{"a key to a node with another", keyed, other},
		{"a key to a node without", keyed, plain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.from.DialRPC(tc.to.Addr(), 3*time.Second)
			if err == nil {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second)) // guard only
				c.Write([]byte("ping"))
				if n, _ := c.Read(make([]byte, 4)); n > 0 {
					t.Fatal("the RPC was served")
				}
			}
		})
	}
}

// A Raft group replicates between nodes of one key.
func TestClusterKeyRaft(t *testing.T) {
	a := newKeyedNode(t, "a", testSecret)
	b := newKeyedNode(t, "b", testSecret)
	ga := startGroup(t, a, GroupConfig{ID: 1, Bootstrap: true}, newKV())
	waitLeader(t, ga)
	kb := newKV()
	startGroup(t, b, GroupConfig{ID: 1}, kb)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ga.AddVoter(ctx, b.ID(), b.Addr()); err != nil {
		t.Fatalf("AddVoter: %v", err)
	}
	propose(t, ga, "replicated=yes")
	deadline := time.Now().Add(30 * time.Second)
	for kb.get("replicated") != "yes" {
		if time.Now().After(deadline) {
			t.Fatal("the entry did not reach the second node")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestClusterKeyTooShort(t *testing.T) {
	if _, err := NewClusterKey([]byte("short"), "n"); err == nil {
		t.Fatal("a 5-byte cluster key was accepted")
	}
}
