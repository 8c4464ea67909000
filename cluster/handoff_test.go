package cluster

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestCloseHandsOffLeadership: a node that stops cleanly hands each group it
// leads to another voter first. The other nodes are told to wait an hour for
// a silent leader before they campaign, so a group that was not handed over
// would have no leader for the whole test.
func TestCloseHandsOffLeadership(t *testing.T) {
	t.Parallel()
	nodes := startNodes(t, 3, "h1", "h2", "h3")
	leader, _ := leaderAndFollower(t, nodes, 1)
	var others []*Cluster
	for _, n := range nodes {
		if n != leader {
			others = append(others, n)
		}
	}
	var led []uint32
	for gid := uint32(0); gid <= testGroups; gid++ {
		if gid > 0 {
			waitVoters(t, nodes, gid, "h1", "h2", "h3")
		}
		if leader.node.Group(gid).IsLeader() {
			led = append(led, gid)
		}
		for _, n := range others {
			patient(t, n.node.Group(gid).Raft())
		}
	}
	if err := leader.Close(); err != nil {
		t.Fatal(err)
	}
	for _, gid := range led {
		waitUntil(t, fmt.Sprintf("another node to lead group %d", gid), func() bool {
			return others[0].node.Group(gid).IsLeader() || others[1].node.Group(gid).IsLeader()
		})
	}
	if _, _, err := proposeAtom(others[0], tenantIn(1), rand.New(rand.NewPCG(3, 4))); err != nil {
		t.Fatalf("a write after the leader stopped: %v", err)
	}
}

// patient makes r wait an hour for word from a leader before it campaigns.
func patient(t *testing.T, r *raft.Raft) {
	t.Helper()
	rc := r.ReloadableConfig()
	rc.HeartbeatTimeout, rc.ElectionTimeout = time.Hour, time.Hour
	if err := r.ReloadConfig(rc); err != nil {
		t.Fatal(err)
	}
}
