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
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
