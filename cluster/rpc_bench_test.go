package cluster

import (
	"context"
	"testing"
)

// BenchmarkNodeRPC times one node-to-node request (a group's applied
// index) between two nodes on loopback: a dial and a fresh gob stream each
// way (one write a message since writeGob: alternated on the 2-core VM,
// 538 / 528 / 429 µs a request against 583 / 582 / 617 unbuffered):
//
//	go test -run '^$' -bench NodeRPC -benchtime 2000x ./cluster/
func BenchmarkNodeRPC(b *testing.B) {
	n1 := startTestNode(b, "b1")
	n2 := startTestNode(b, "b2", n1.self.GossipAddr)
	ctx := context.Background()
	for b.Loop() {
		if _, err := n1.call(ctx, n2.self.RaftAddr, &rpcRequest{Op: opApplied, Group: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
