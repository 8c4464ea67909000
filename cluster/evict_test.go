package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hebbdb/hebb/shard"
)

// TestEvictionMark: a group marked evicted for this node's configuration of
// it is not hosted here (reads answer NotHosted, so the router forwards
// them); a leader heard clears the mark; and a replica the leader's
// configuration still names is not taken for removed.
func TestEvictionMark(t *testing.T) {
	t.Parallel()
	n2 := startNodes(t, 0, "e1", "e2")[1]
	const gid = 1
	tenant := tenantIn(gid)
	g := n2.groups[gid]
	waitUntil(t, "the second node is a voter of group 1 and hears its leader", func() bool {
		_, addr := g.Leader()
		voters, _, err := g.Voters()
		return err == nil && contains(voters, "e2") && len(voters) == 2 && addr != ""
	})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	if n2.removedFrom(ctx, g) {
		t.Fatal("a replica the leader's configuration names was taken for removed")
	}

	voters, nonvoters, err := g.Voters()
	if err != nil {
		t.Fatal(err)
	}
	n2.evicted.Store(uint32(gid), configKey(voters, nonvoters))
	if n2.hosts(g) {
		t.Fatal("a group marked evicted for the current configuration is still hosted")
	}
	var nh *NotHostedError
	if _, err := n2.ReadFSM(ctx, tenant); !errors.As(err, &nh) {
		t.Fatalf("ReadFSM of an evicted group: %v, want NotHostedError", err)
	}

	n2.evicted.Store(uint32(gid), configKey(voters, append(nonvoters, "someone-else")))
	if !n2.hosts(g) {
		t.Fatal("a mark for another configuration hides the group")
	}

	// The reconcile loop hears the group's leader and clears the mark.
	n2.evicted.Store(uint32(gid), configKey(voters, nonvoters))
	waitUntil(t, "a leader heard clears the mark", func() bool { return n2.hosts(g) })
}

// leaderlessReplica starts two nodes holding group 1 and kills the first:
// the second keeps listing itself in a group that has no leader from then
// on, as a replica removed without learning it does. mark marks the group
// evicted there, as the eviction check would.
func leaderlessReplica(t *testing.T, prefix string) (n *Cluster, g *shard.Group, mark func()) {
	nodes := startNodes(t, 0, prefix+"1", prefix+"2")
	n, g = nodes[1], nodes[1].groups[1]
	waitUntil(t, "both nodes are voters of group 1 with a leader", func() bool {
		_, addr := g.Leader()
		voters, _, err := g.Voters()
		return err == nil && len(voters) == 2 && addr != ""
	})
	nodes[0].kill() // two voters, one left: no leader from now on
	// Until its heartbeat timeout the replica remembers the leader, and the
	// reconcile loop drops an eviction mark while it does (checkEvictions).
	waitUntil(t, "the replica to forget its leader", func() bool {
		_, addr := g.Leader()
		return addr == ""
	})
	voters, nonvoters, err := g.Voters()
	if err != nil {
		t.Fatal(err)
	}
	return n, g, func() { n.evicted.Store(g.ID(), configKey(voters, nonvoters)) }
}

// TestBarrierLeavesAnEvictedGroup: a read waiting for a leader of a group
// this node was removed from stops waiting once the node is marked evicted
// and answers NotHosted (the router then forwards it), rather than failing
// as unavailable at its deadline.
func TestBarrierLeavesAnEvictedGroup(t *testing.T) {
	t.Parallel()
	n2, _, mark := leaderlessReplica(t, "b")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := n2.ReadFSM(ctx, tenantIn(1))
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("ReadFSM of a leaderless group returned before the eviction: %v", err)
	default:
	}
	mark()
	var nh *NotHostedError
	if err := <-done; !errors.As(err, &nh) {
		t.Fatalf("ReadFSM waiting on a group this node left: %v, want NotHostedError", err)
	}
}

// TestWaitIndexLeavesAnEvictedGroup: a follower that got a read index from
// the leader after the leader removed it never reaches that index; the
// wait ends with errLeftGroup once the node learns it left, not at the
// deadline.
func TestWaitIndexLeavesAnEvictedGroup(t *testing.T) {
	t.Parallel()
	n, g, mark := leaderlessReplica(t, "w")
	time.AfterFunc(3*leftPoll/2, mark)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	if err := n.waitIndex(ctx, g, g.AppliedIndex()+1000); !errors.Is(err, errLeftGroup) {
		t.Fatalf("waiting for an index that never comes, after leaving: %v, want errLeftGroup", err)
	}
}
