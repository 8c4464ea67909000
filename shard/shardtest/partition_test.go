package shardtest_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hebbdb/hebb/shard"
	"github.com/hebbdb/hebb/shard/shardtest"
)

// others returns the nodes of c not in set, in order.
func others(c *shardtest.Cluster, set []int) []int {
	var out []int
	for i := range c.Size() {
		if !slices.Contains(set, i) {
			out = append(out, i)
		}
	}
	return out
}

// TestPartitions cuts a five-node group in the ways the issue lists, under a
// write load, heals, and checks after each that every replica has the same
// state hash and every acknowledged write.
func TestPartitions(t *testing.T) {
	c := shardtest.New(t, shardtest.Config{Nodes: 5, NewStateMachine: newFSM, GroupConfig: smallSnapshots})
	w := newWorkload(c)
	tests := []struct {
		name string
		far  func(leader int) []int // the side cut off from the rest
	}{
		{"leader alone", func(l int) []int { return []int{l} }},
		{"one follower", func(l int) []int { return others(c, []int{l})[:1] }},
		{"minority holding the leader", func(l int) []int { return append([]int{l}, others(c, []int{l})[:1]...) }},
		{"majority holding the leader", func(l int) []int { return append([]int{l}, others(c, []int{l})[:2]...) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			leader := c.Leader(testGroup)
			stop := w.start(3)
			w.waitProgress(w.ackedCount(), 10)
			far := tc.far(leader)
			near := others(c, far)
			majority := near
			if len(far) > len(near) {
				majority = far
			}
			c.Partition(far...)
			// The majority side keeps (or elects) a leader and commits.
			newLeader := c.LeaderAmong(testGroup, majority...)
			w.waitProgress(w.ackedCount(), 20)
			if slices.Contains(majority, leader) && newLeader != leader {
				t.Logf("leadership moved from %s to %s inside the majority", c.ID(leader), c.ID(newLeader))
			}
			c.Heal()
			w.waitProgress(w.ackedCount(), 10)
			stop()
			c.WaitConverged(testGroup)
			w.checkAcked(t)
		})
	}
	t.Logf("%d writes acknowledged", w.ackedCount())
}

// TestKillAndRestart kills a follower and then the leader under a write
// load; each restarted node catches up (by snapshot: its peers compacted
// their logs meanwhile) and every replica converges.
func TestKillAndRestart(t *testing.T) {
	c := shardtest.New(t, shardtest.Config{Nodes: 3, NewStateMachine: newFSM, GroupConfig: smallSnapshots})
	w := newWorkload(c)
	for _, victim := range []string{"follower", "leader"} {
		t.Run(victim, func(t *testing.T) {
			leader := c.Leader(testGroup)
			k := leader
			if victim == "follower" {
				k = others(c, []int{leader})[0]
			}
			stop := w.start(3)
			w.waitProgress(w.ackedCount(), 10)
			c.Kill(k)
			c.LeaderAmong(testGroup, others(c, []int{k})...)
			w.waitProgress(w.ackedCount(), 100) // beyond TrailingLogs: the restart needs a snapshot
			c.Restart(k)
			w.waitProgress(w.ackedCount(), 10)
			stop()
			c.WaitConverged(testGroup)
			w.checkAcked(t)
		})
	}
}

// TestProposeToCutOffLeader: a command a leader appended and then could not
// commit (the leader was cut off and stepped down) has an open outcome, so
// Propose must not answer ErrNotLeader, which callers may retry elsewhere
// (a retry of a committed command would apply twice).
func TestProposeToCutOffLeader(t *testing.T) {
	c := shardtest.New(t, shardtest.Config{Nodes: 3, NewStateMachine: newFSM})
	leader := c.Leader(testGroup)
	g := c.Group(leader, testGroup)
	c.Partition(leader)
	before := g.Raft().LastIndex()
	_, cmd := newWrite(rand.New(rand.NewPCG(1, 2)), 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := g.Propose(ctx, cmd)
	if err == nil {
		t.Fatal("a leader cut off from every follower committed a command")
	}
	appended := g.Raft().LastIndex() > before
	if appended && errors.Is(err, shard.ErrNotLeader) {
		t.Errorf("appended command answered %v: want an open outcome (shard.ErrTimeout), not ErrNotLeader", err)
	}
	if appended && !errors.Is(err, shard.ErrTimeout) {
		t.Errorf("appended command answered %v, want shard.ErrTimeout", err)
	}
	c.Heal()
	c.WaitConverged(testGroup)
}
