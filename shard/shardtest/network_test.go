package shardtest

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"
)

// TestIdentify checks that the proxy reads the sender of each raft request
// type from the bytes hashicorp/raft writes, and hands every byte on.
func TestIdentify(t *testing.T) {
	hdr := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("node7"), Addr: []byte("127.0.0.1:1")}
	tests := []struct {
		name    string
		kind    byte
		rpcType byte
		req     any
		want    string
	}{
		{"append entries", kindRaft, 0, &raft.AppendEntriesRequest{RPCHeader: hdr, Term: 3,
			Entries: []*raft.Log{{Index: 1, Term: 1, Type: raft.LogCommand, Data: []byte("node0 node1")}}}, "node7"},
		{"request vote", kindRaft, 1, &raft.RequestVoteRequest{RPCHeader: hdr, Term: 4}, "node7"},
		{"install snapshot", kindRaft, 2, &raft.InstallSnapshotRequest{RPCHeader: hdr, Size: 10}, "node7"},
		{"timeout now", kindRaft, 3, &raft.TimeoutNowRequest{RPCHeader: hdr}, "node7"},
		{"pre-vote", kindRaft, 4, &raft.RequestPreVoteRequest{RPCHeader: hdr, Term: 5}, "node7"},
		{"node rpc", 2, 0, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var wire bytes.Buffer
			wire.Write([]byte{'h', 'e', 'b', 'b', tc.kind, 0, 0, 0, 1})
			if tc.req != nil {
				w := bufio.NewWriter(&wire)
				_ = w.WriteByte(tc.rpcType)
				if err := codec.NewEncoder(w, &codec.MsgpackHandle{}).Encode(tc.req); err != nil {
					t.Fatal(err)
				}
				_ = w.Flush()
			}
			wire.WriteString("trailing bytes")
			sent := bytes.Clone(wire.Bytes())
			a, b := net.Pipe()
			go func() {
				_, _ = b.Write(sent)
				_ = b.Close()
			}()
			from, prefix, err := identify(a)
			if err != nil {
				t.Fatalf("identify: %v", err)
			}
			if from != tc.want {
				t.Errorf("sender %q, want %q", from, tc.want)
			}
			rest, _ := io.ReadAll(a)
			if got := append(prefix, rest...); !bytes.Equal(got, sent) {
				t.Errorf("bytes handed on differ from the bytes sent")
			}
		})
	}
}

func TestLinkIsUnordered(t *testing.T) {
	n := NewNetwork()
	defer n.Close()
	n.Disconnect("node1", "node0")
	for _, tc := range []struct {
		x, y string
		cut  bool
	}{{"node0", "node1", true}, {"node1", "node0", true}, {"node0", "node2", false}, {"", "node0", false}} {
		if got := n.isCut(tc.x, tc.y); got != tc.cut {
			t.Errorf("isCut(%q, %q) = %v, want %v", tc.x, tc.y, got, tc.cut)
		}
	}
	n.Heal()
	if n.isCut("node0", "node1") {
		t.Error("link still cut after Heal")
	}
}
