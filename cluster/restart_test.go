package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestRestartTogether restarts every node of a cluster at once, none of
// them able to join another through gossip (each tried before the others
// listened). Each node's gossip then knows only itself; once its view
// settles (DeadGrace), a leader must not take the others for gone: it
// finds them through its groups' configurations and joins them.
func TestRestartTogether(t *testing.T) {
	t.Parallel()
	ids := []string{"n1", "n2", "n3"}
	cfgs, nodes := startKilled(t, nil, ids...)
	restartAll(t, cfgs, nodes)
	waitUntil(t, "every node's gossip to have the others alive", func() bool {
		for _, n := range nodes {
			for _, id := range ids {
				if memberStatus(n, id) != StatusAlive {
					return false
				}
			}
		}
		return true
	})
	time.Sleep(3 * cfgs[0].DeadGrace) // every view settled, reconciled since
	for gid := uint32(0); gid <= testGroups; gid++ {
		for _, n := range nodes {
			if v := sortedVoters(n, gid); !slices.Equal(v, ids) {
				t.Errorf("group %d voters seen from %s: %v, want %v", gid, n.NodeID(), v, ids)
			}
		}
	}
	for _, n := range nodes {
		if st := n.Status(); st.GroupsWithLeader != testGroups || !st.MetaLeader {
			t.Errorf("%s: %s", n.NodeID(), fmt.Sprintf("%+v", st))
		}
	}
}

// TestRestartOnAnotherAddress restarts a node on another Raft address (its
// --raft-addr changed, a container given a new IP): the leaders point their
// configurations at it, and it serves again.
func TestRestartOnAnotherAddress(t *testing.T) {
	t.Parallel()
	nodes := startNodesWith(t, func(cfg *Config) {
		cfg.DeadGrace = time.Minute // n2 keeps its replicas while it is down
	}, "n1", "n2", "n3")
	for gid := uint32(1); gid <= testGroups; gid++ {
		waitVoters(t, nodes, gid, "n1", "n2", "n3")
	}
	cfg := nodes[1].cfg
	nodes[1].kill()
	cfg.RaftAddr = freeLoopbackAddr(t)
	nodes[1] = startWith(t, cfg)
	moved := nodes[1].node.Addr()
	for gid := uint32(0); gid <= testGroups; gid++ {
		waitUntil(t, fmt.Sprintf("group %d to give n2 its new address", gid), func() bool {
			for _, n := range nodes {
				if n.raftAddrOf(n.node.Group(gid), "n2") != moved {
					return false
				}
			}
			return true
		})
	}
	for gid := uint32(0); gid <= testGroups; gid++ {
		if v := sortedVoters(nodes[0], gid); !slices.Equal(v, []string{"n1", "n2", "n3"}) {
			t.Errorf("group %d voters %v", gid, v)
		}
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for gid := uint32(1); gid <= testGroups; gid++ {
		id := writeAtom(t, nodes[1], tenantIn(gid), rng)
		mustRead(t, nodes[1], tenantIn(gid), id)
	}
}

// A node that would join with another embedder than the cluster's is
// refused before it becomes a member, told which flags to use.
func TestJoinWithAnotherEmbedder(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "n1")
	cfg.Embedder = "builtin/2"
	n1 := startWith(t, cfg)
	joiner := testConfig(t, "n2", n1.self.GossipAddr)
	joiner.Embedder = "hash"
	err := startRefused(t, joiner, "a node with the hash embedder joining a builtin/2 cluster")
	if !errors.Is(err, ErrEmbedderMismatch) || !strings.Contains(err.Error(), "start it with --embedder builtin") {
		t.Errorf("join: %v, want ErrEmbedderMismatch naming --embedder builtin", err)
	}
	if v := sortedVoters(n1, MetaGroupID); !slices.Equal(v, []string{"n1"}) {
		t.Errorf("meta voters after the refused join: %v", v)
	}
}

func TestEmbedderFlags(t *testing.T) {
	for id, want := range map[string]string{"builtin/2": "--embedder builtin", "hash": "--embedder hash",
		"http:text-embedding-3-small": "--embedder http --embedder-model text-embedding-3-small"} {
		if got := embedderFlags(id); got != want {
			t.Errorf("embedderFlags(%q) = %q, want %q", id, got, want)
		}
	}
}

// A node gossips before it asks to join: one whose embedder is not the
// cluster's must never be made a member by the reconcile loop meanwhile.
func TestGossipWithAnotherEmbedder(t *testing.T) {
	t.Parallel()
	n1 := startTestNode(t, "n1")
	m, err := newMembership(NodeInfo{NodeID: "x", RaftAddr: freeLoopbackAddr(t), GossipAddr: "127.0.0.1:0",
		Embedder: "hash", Dim: testDim}, nil, clusterTestLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer m.leave()
	if err := m.join([]string{n1.self.GossipAddr}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "n1 to see x alive", func() bool { return memberStatus(n1, "x") == StatusAlive })
	time.Sleep(4 * reconcileEvery)
	if v := sortedVoters(n1, MetaGroupID); !slices.Equal(v, []string{"n1"}) {
		t.Errorf("meta voters with x gossiping another embedder: %v", v)
	}
}

// A second process under a live node's ID (its data dir copied, or the same
// --node-id) is refused at start; the cluster keeps its members.
func TestDuplicateNodeID(t *testing.T) {
	t.Parallel()
	nodes := startNodes(t, 0, "n1", "n2")
	for gid := uint32(1); gid <= testGroups; gid++ {
		waitVoters(t, nodes, gid, "n1", "n2")
	}
	err := startRefused(t, testConfig(t, "n2", nodes[0].self.GossipAddr), "a second n2 beside the live one")
	if !errors.Is(err, ErrDuplicateNode) || !strings.Contains(err.Error(), "empty --data-dir") {
		t.Errorf("second n2: %v, want ErrDuplicateNode saying what to do", err)
	}
	if v := sortedVoters(nodes[0], MetaGroupID); !slices.Equal(v, []string{"n1", "n2"}) {
		t.Errorf("meta voters: %v", v)
	}
}

// A node of another cluster that gossip reaches (a --join naming the wrong
// cluster) is never made a member: its groups have the same IDs, and adding
// it would merge two clusters' logs.
func TestAnotherClustersNode(t *testing.T) {
	t.Parallel()
	a := startTestNode(t, "a1")
	cfg := testConfig(t, "b1")
	b := startWith(t, cfg)
	b.kill()
	cfg.Join = []string{a.self.GossipAddr}
	b = startWith(t, cfg)
	waitUntil(t, "gossip to reach across", func() bool {
		_, ok := a.members.info("b1")
		return ok
	})
	time.Sleep(4 * reconcileEvery)
	for _, tc := range []struct {
		c    *Cluster
		want string
	}{{a, "a1"}, {b, "b1"}} {
		for gid := uint32(0); gid <= testGroups; gid++ {
			if v := sortedVoters(tc.c, gid); !slices.Equal(v, []string{tc.want}) {
				t.Errorf("group %d voters on %s: %v", gid, tc.want, v)
			}
		}
		if nodes := tc.c.Status().Admin.Nodes; len(nodes) != 1 {
			t.Errorf("%s lists nodes %+v", tc.want, nodes)
		}
	}
}

// A new node whose --join names its own gossip address is told so at once,
// rather than after a minute of asking itself to be admitted.
func TestJoinSelf(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "s1")
	cfg.GossipAddr = freeLoopbackAddr(t)
	cfg.Join = []string{cfg.GossipAddr}
	err := startRefused(t, cfg, "a node joining itself")
	if !strings.Contains(err.Error(), "own gossip address") {
		t.Errorf("joining itself: %v", err)
	}
}

// Draining a node while another voter of its groups is down (and not yet
// replaced) would leave those groups without a majority that is up: the
// drain is refused, and a node recorded as draining anyway keeps its
// replicas until the groups can spare it.
func TestDrainWhileAnotherNodeIsDown(t *testing.T) {
	t.Parallel()
	nodes := startNodesWith(t, func(cfg *Config) {
		cfg.DeadGrace = time.Minute // n3's replicas are not replaced during the test
	}, "n1", "n2", "n3")
	for gid := uint32(1); gid <= testGroups; gid++ {
		waitVoters(t, nodes, gid, "n1", "n2", "n3")
	}
	nodes[2].kill()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	waitUntil(t, "n1 to see n3 down", func() bool { return memberStatus(nodes[0], "n3") == StatusDead })
	err := nodes[0].Drain(ctx, "n2")
	if !errors.Is(err, ErrInvalidCommand) || !strings.Contains(err.Error(), "cannot drain n2 now") {
		t.Fatalf("Drain(n2) with n3 down: %v, want a refusal", err)
	}
	if _, err := nodes[0].ProposeMeta(ctx, EncodeSetNodeState(SetNodeState{NodeID: "n2", State: NodeDraining})); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * reconcileEvery)
	for gid := uint32(1); gid <= testGroups; gid++ {
		if v := sortedVoters(nodes[0], gid); !slices.Equal(v, []string{"n1", "n2", "n3"}) {
			t.Errorf("group %d voters with n2 draining and n3 down: %v", gid, v)
		}
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for gid := uint32(1); gid <= testGroups; gid++ {
		writeAtom(t, nodes[0], tenantIn(gid), rng)
	}
}

// A drained node that leads the meta group hands the leadership over, so
// that the next leader removes it from the meta group: it does not keep
// running the cluster's metadata after its drain reported it left.
func TestDrainMetaLeader(t *testing.T) {
	t.Parallel()
	nodes := startNodes(t, 0, "m1", "m2", "m3")
	for gid := uint32(1); gid <= testGroups; gid++ {
		waitVoters(t, nodes, gid, "m1", "m2", "m3")
	}
	var leader, other *Cluster
	waitUntil(t, "a meta leader", func() bool {
		for _, n := range nodes {
			if n.metaG.IsLeader() {
				leader = n
			}
		}
		return leader != nil
	})
	for _, n := range nodes {
		if n != leader {
			other = n
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := other.Drain(ctx, leader.NodeID()); err != nil {
		t.Fatalf("Drain(meta leader %s): %v", leader.NodeID(), err)
	}
	waitUntil(t, "the drained node out of the meta group", func() bool {
		v, _, err := other.metaG.Voters()
		return err == nil && !leader.metaG.IsLeader() && !slices.Contains(v, leader.NodeID())
	})
}

// TestDrainedNodeStopsCampaigning drains a meta voter that does not lead
// and is left running: it must be demoted before it is removed. A voter
// removed at once may never learn of it (the leader stops replicating to
// it as it appends the removal) and then calls elections the meta group
// rejects until it is stopped; a non-voter never campaigns. The test
// watches the leader's configuration for the demotion, since whether a
// removed voter learns of its removal is a race.
func TestDrainedNodeStopsCampaigning(t *testing.T) {
	t.Parallel()
	nodes := startNodes(t, 0, "c1", "c2", "c3")
	for gid := uint32(1); gid <= testGroups; gid++ {
		waitVoters(t, nodes, gid, "c1", "c2", "c3")
	}
	var leader, drained *Cluster
	waitUntil(t, "a meta leader", func() bool {
		for _, n := range nodes {
			if n.metaG.IsLeader() {
				leader = n
			}
		}
		return leader != nil
	})
	for _, n := range nodes {
		if n != leader {
			drained = n
		}
	}
	id := drained.NodeID()
	demoted := make(chan bool, 1)
	go func() {
		seen := false
		for end := time.Now().Add(testTimeout); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			v, nv, err := leader.metaG.Voters()
			if err != nil {
				continue
			}
			seen = seen || slices.Contains(nv, id)
			if !slices.Contains(v, id) && !slices.Contains(nv, id) {
				break
			}
		}
		demoted <- seen
	}()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := leader.Drain(ctx, id); err != nil {
		t.Fatalf("Drain(%s): %v", id, err)
	}
	if !<-demoted {
		t.Fatalf("%s left the meta group without being demoted first", id)
	}
	// Several election timeouts: a voter that hears no leader campaigns.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if st := drained.metaG.Raft().State(); st == raft.Candidate || st == raft.Leader {
			t.Fatalf("the drained node's meta replica is a %v after its removal", st)
		}
	}
}

// A node that does not come back after the cluster restarts is still
// listed, as dead: gossip never saw it, and it was in no node's list
// although a voter and a replica of every group.
func TestRestartWithoutOneNodeListsIt(t *testing.T) {
	t.Parallel()
	ids := []string{"u1", "u2", "u3"}
	cfgs, nodes := startKilled(t, func(c *Config) { c.DeadGrace = time.Minute }, ids...) // nothing replaced meanwhile
	restartAll(t, cfgs[:2], nodes[:2])
	for _, n := range nodes[:2] {
		var got *NodeStatus
		for _, s := range n.Status().Admin.Nodes {
			if s.NodeID == "u3" {
				got = &s
			}
		}
		if got == nil || got.Status != StatusDead || got.RaftAddr != cfgs[2].RaftAddr {
			t.Errorf("%s lists u3 as %+v, want dead at %s", n.NodeID(), got, cfgs[2].RaftAddr)
		}
	}
}

// startKilled starts nodes ids on Raft addresses kept across a restart
// (set changes each config), the others joining the first, waits until
// every data group has them all as voters, then kills them all.
func startKilled(t *testing.T, set func(*Config), ids ...string) ([]Config, []*Cluster) {
	t.Helper()
	cfgs := make([]Config, len(ids))
	nodes := make([]*Cluster, len(ids))
	for i, id := range ids {
		cfgs[i] = testConfig(t, id)
		cfgs[i].RaftAddr = freeLoopbackAddr(t)
		if set != nil {
			set(&cfgs[i])
		}
		if i > 0 {
			cfgs[i].Join = []string{nodes[0].self.GossipAddr}
		}
		nodes[i] = startWith(t, cfgs[i])
	}
	for gid := uint32(1); gid <= testGroups; gid++ {
		waitVoters(t, nodes, gid, ids...)
	}
	for _, n := range nodes {
		n.kill()
	}
	return cfgs, nodes
}

// restartAll starts cfgs again all at once (Start returns once the meta
// group has a leader), into nodes.
func restartAll(t *testing.T, cfgs []Config, nodes []*Cluster) {
	t.Helper()
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i := range cfgs {
		cfgs[i].Join, cfgs[i].noGossipRejoin = nil, true
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			nodes[i], errs[i] = Start(ctx, cfgs[i])
		})
	}
	wg.Wait()
	for _, n := range nodes {
		if n != nil {
			t.Cleanup(func() { _ = n.Close() })
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("restarting %s: %v", cfgs[i].NodeID, err)
		}
	}
}
