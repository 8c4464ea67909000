package shard

import (
	"errors"
	"strings"
	"testing"
)

// TestProposeStorageFailure: a command the leader cannot write to its log
// (here the segment file of large commands fails, as on a full disk)
// fails with ErrStorage and is not applied; the group then elects itself
// again and takes the commands it can write.
func TestProposeStorageFailure(t *testing.T) {
	n := newTestNode(t, "n1", t.TempDir())
	sm := newKV()
	g := startGroup(t, n, GroupConfig{ID: 3, Bootstrap: true}, sm)
	waitLeader(t, g)
	large := func(k string) []byte { return []byte(k + "=" + strings.Repeat("v", blobMinBytes)) }
	if _, err := g.Propose(testCtx(t), large("a")); err != nil {
		t.Fatalf("Propose before the failure: %v", err)
	}
	g.blobs.wmu.Lock()
	if err := g.blobs.cur.f.Close(); err != nil {
		t.Fatal(err)
	}
	g.blobs.wmu.Unlock()

	_, err := g.Propose(testCtx(t), large("b"))
	if !errors.Is(err, ErrStorage) {
		t.Fatalf("Propose on a failed log: %v, want ErrStorage", err)
	}
	if !g.StorageFailing() {
		t.Error("StorageFailing false after a failed append")
	}
	for {
		waitLeader(t, g)
		_, err = g.Propose(testCtx(t), []byte("c=small"))
		if !errors.Is(err, ErrNotLeader) {
			break
		}
	}
	if err != nil {
		t.Fatalf("Propose of a small command after the failure: %v", err)
	}
	if got := sm.snapshotData(); got["b"] != "" || got["c"] != "small" || got["a"] == "" {
		t.Fatalf("state after the failure has keys %v; want a and c, not b", keys(got))
	}
	if g.StorageFailing() {
		t.Error("StorageFailing still true after an append succeeded")
	}
}

// A follower whose log refuses the leader's entries says so; the group
// commits without it.
func TestFollowerStorageFailing(t *testing.T) {
	c := newTestCluster(t)
	leader := c.leader(t, 1, c.nodes)
	var follower *Node
	for _, n := range c.nodes {
		if n != leader {
			follower = n
			break
		}
	}
	fg := follower.Group(1)
	large := []byte("a=" + strings.Repeat("v", blobMinBytes))
	propose(t, leader.Group(1), string(large))
	waitFor(t, "the follower to store the first entry", func() bool {
		fg.blobs.wmu.Lock()
		defer fg.blobs.wmu.Unlock()
		return fg.blobs.cur != nil
	})
	fg.blobs.wmu.Lock()
	if err := fg.blobs.cur.f.Close(); err != nil {
		t.Fatal(err)
	}
	fg.blobs.wmu.Unlock()
	if fg.StorageFailing() {
		t.Fatal("StorageFailing before any failure")
	}
	propose(t, leader.Group(1), "b="+strings.Repeat("w", blobMinBytes))
	waitFor(t, "the follower to report its failing log", fg.StorageFailing)
	if leader.Group(1).StorageFailing() {
		t.Error("the leader reports a failing log")
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
