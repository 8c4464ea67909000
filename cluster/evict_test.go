package cluster

import (
	"context"
	"errors"
	"testing"
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
