//go:build soak

package shardtest_test

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/hebbdb/hebb/shard/shardtest"
)

// TestSoak injects random faults into a five-node group under a write load
// for SOAK_DURATION (default 2m): partitions of every shape, kills and
// restarts of leaders and followers, and added latency between all nodes.
// After each fault it heals and checks that every replica has the same
// state hash and every acknowledged write. Run with `make soak`.
func TestSoak(t *testing.T) {
	duration := 2 * time.Minute
	if s := os.Getenv("SOAK_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("SOAK_DURATION: %v", err)
		}
		duration = d
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	c := shardtest.New(t, shardtest.Config{Nodes: 5, NewStateMachine: newFSM, GroupConfig: smallSnapshots})
	w := newWorkload(c)
	faults := []struct {
		name   string
		inject func(leader int) (heal func())
	}{
		{"partition the leader", func(l int) func() { c.Partition(l); return c.Heal }},
		{"partition a minority", func(l int) func() { c.Partition(pick(rng, 5, 2)...); return c.Heal }},
		{"partition a majority", func(l int) func() { c.Partition(pick(rng, 5, 3)...); return c.Heal }},
		{"cut one link", func(l int) func() {
			p := pick(rng, 5, 2)
			c.Network().Disconnect(c.ID(p[0]), c.ID(p[1]))
			return c.Heal
		}},
		{"kill the leader", func(l int) func() { c.Kill(l); return func() { c.Restart(l) } }},
		{"kill a follower", func(l int) func() {
			f := others(c, []int{l})[rng.IntN(4)]
			c.Kill(f)
			return func() { c.Restart(f) }
		}},
		{"add latency", func(int) func() {
			c.Network().SetLatency(time.Duration(5+rng.IntN(40)) * time.Millisecond)
			return func() { c.Network().SetLatency(0) }
		}},
	}
	rounds := 0
	for end := time.Now().Add(duration); time.Now().Before(end); rounds++ {
		f := faults[rng.IntN(len(faults))]
		leader := c.Leader(testGroup)
		stop := w.start(3)
		heal := f.inject(leader)
		time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
		heal()
		w.waitProgress(w.ackedCount(), 5)
		stop()
		c.WaitConverged(testGroup)
		w.checkAcked(t)
		if t.Failed() {
			t.Fatalf("round %d (%s) broke the group", rounds, f.name)
		}
	}
	t.Logf("%d rounds, %d acknowledged writes", rounds, w.ackedCount())
}

// pick returns k distinct node indexes out of n.
func pick(rng *rand.Rand, n, k int) []int {
	return rng.Perm(n)[:k]
}
