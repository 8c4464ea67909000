package shard

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
)

// testCluster is three nodes each hosting groups 0 and 1, bootstrapped on
// node 0 and grown with AddVoter.
type testCluster struct {
	nodes []*Node
	sms   map[string]map[uint32]*kvSM // node id -> group id -> state machine
}

func newTestCluster(t *testing.T) *testCluster {
	t.Helper()
	c := &testCluster{sms: make(map[string]map[uint32]*kvSM)}
	for i := range 3 {
		n := newTestNode(t, fmt.Sprintf("n%d", i), t.TempDir())
		c.nodes = append(c.nodes, n)
		c.sms[n.ID()] = make(map[uint32]*kvSM)
	}
	// Group 0 (meta) first on every node; group 1 on the followers only once
	// the leader is already trying to reach them.
	c.start(t, c.nodes[0], 0, true)
	c.start(t, c.nodes[0], 1, true)
	for _, n := range c.nodes[1:] {
		c.start(t, n, 0, false)
	}
	for id := range uint32(2) {
		waitLeader(t, c.nodes[0].Group(id))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for id := range uint32(2) {
		wg.Go(func() {
			for _, n := range c.nodes[1:] {
				if err := c.nodes[0].Group(id).AddVoter(testCtx(t), n.ID(), n.Addr()); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, n := range c.nodes[1:] {
		c.start(t, n, 1, false)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("AddVoter: %v", err)
	}
	return c
}

func (c *testCluster) start(t *testing.T, n *Node, id uint32, bootstrap bool) {
	sm := newKV()
	c.sms[n.ID()][id] = sm
	startGroup(t, n, GroupConfig{ID: id, Bootstrap: bootstrap}, sm)
}

// leader returns the node leading group id among the open nodes.
func (c *testCluster) leader(t *testing.T, id uint32, open []*Node) *Node {
	t.Helper()
	var leader *Node
	waitFor(t, fmt.Sprintf("a leader of group %d", id), func() bool {
		for _, n := range open {
			if n.Group(id).IsLeader() {
				leader = n
				return true
			}
		}
		return false
	})
	return leader
}

// converged waits until every open node's state machine of group id equals want.
func (c *testCluster) converged(t *testing.T, id uint32, open []*Node, want map[string]string) {
	t.Helper()
	for _, n := range open {
		sm := c.sms[n.ID()][id]
		waitFor(t, fmt.Sprintf("group %d on %s to converge", id, n.ID()), func() bool {
			return maps.Equal(sm.snapshotData(), want)
		})
	}
}

func TestThreeNodesReplicateAndFailOver(t *testing.T) {
	c := newTestCluster(t)
	want := map[uint32]map[string]string{0: {}, 1: {}}
	write := func(open []*Node, id uint32, k, v string) {
		t.Helper()
		propose(t, c.leader(t, id, open).Group(id), k+"="+v)
		want[id][k] = v
	}
	for id := range uint32(2) {
		for i := range 10 {
			write(c.nodes, id, fmt.Sprintf("g%d-k%d", id, i), "before")
		}
		c.converged(t, id, c.nodes, want[id])
	}

	t.Run("followers refuse", func(t *testing.T) {
		for id := range uint32(2) {
			leader := c.leader(t, id, c.nodes)
			if leader.Group(id).soleVoter() {
				t.Errorf("group %d: the leader of three voters is its sole voter", id)
			}
			for _, n := range c.nodes {
				if n == leader {
					continue
				}
				g := n.Group(id)
				if err := g.ReadIndex(testCtx(t)); !errors.Is(err, ErrNotLeader) {
					t.Errorf("ReadIndex on follower %s: %v, want ErrNotLeader", n.ID(), err)
				}
				if _, err := g.Propose(testCtx(t), []byte("x=y")); !errors.Is(err, ErrNotLeader) {
					t.Errorf("Propose on follower %s: %v, want ErrNotLeader", n.ID(), err)
				}
				if lid, addr := g.Leader(); lid != leader.ID() || addr != leader.Addr() {
					t.Errorf("follower %s sees leader %q %q", n.ID(), lid, addr)
				}
			}
		}
	})

	t.Run("leader node killed", func(t *testing.T) {
		old := c.leader(t, 0, c.nodes)
		if err := old.Close(); err != nil {
			t.Fatalf("Close leader node: %v", err)
		}
		var open []*Node
		for _, n := range c.nodes {
			if n != old {
				open = append(open, n)
			}
		}
		for id := range uint32(2) {
			leader := c.leader(t, id, open)
			if err := leader.Group(id).ReadIndex(testCtx(t)); err != nil {
				t.Fatalf("ReadIndex on new leader of group %d: %v", id, err)
			}
			if got := c.sms[leader.ID()][id].snapshotData(); !maps.Equal(got, want[id]) {
				t.Fatalf("new leader of group %d lost writes: %v", id, got)
			}
			for i := range 5 {
				write(open, id, fmt.Sprintf("g%d-after%d", id, i), "after")
			}
			c.converged(t, id, open, want[id])
		}
	})
}
