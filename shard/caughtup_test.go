package shard

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// slowKV applies like kvSM but sleeps per command while slow is set, so a
// restart's replay takes long enough to be seen.
type slowKV struct {
	*kvSM
	slow atomic.Bool
}

func (s *slowKV) Apply(index uint64, cmd []byte) any {
	if s.slow.Load() {
		time.Sleep(5 * time.Millisecond)
	}
	return s.kvSM.Apply(index, cmd)
}

func (s *slowKV) Snapshot() (func(io.Writer) error, error) { return s.kvSM.Snapshot() }

// A restarted group is not caught up until it has applied the log it had on
// disk; a new group as soon as it applied its bootstrap configuration.
func TestCaughtUpAfterReplay(t *testing.T) {
	dir := t.TempDir()
	cfg := GroupConfig{ID: 3, Bootstrap: true}
	n := newTestNode(t, "n1", dir)
	g := startGroup(t, n, cfg, newKV())
	waitLeader(t, g)
	waitFor(t, "new group caught up", g.CaughtUp)
	for i := range 200 {
		propose(t, g, fmt.Sprintf("k%d=v%d", i, i))
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	n2 := newTestNode(t, "n1", dir)
	sm := &slowKV{kvSM: newKV()}
	sm.slow.Store(true)
	g2 := startGroup(t, n2, cfg, sm)
	// 200 commands at 5 ms each cannot have been replayed yet.
	if g2.CaughtUp() {
		t.Fatal("caught up before replaying its log")
	}
	waitFor(t, "replay", g2.CaughtUp)
	if got := sm.get("k199"); got != "v199" {
		t.Fatalf("caught up with k199 = %q, want v199", got)
	}
	sm.slow.Store(false)
	if !g2.CaughtUp() {
		t.Fatal("caught-up latch reset")
	}
}

// A group snapshots once the bytes applied since its last snapshot reach
// SnapshotBytes, however few entries they took.
func TestSnapshotBySize(t *testing.T) {
	dir := t.TempDir()
	cfg := GroupConfig{ID: 4, Bootstrap: true, SnapshotThreshold: 1 << 30, SnapshotBytes: 4 << 10}
	n := newTestNode(t, "n1", dir)
	g := startGroup(t, n, cfg, newKV())
	waitLeader(t, g)
	value := strings.Repeat("x", 200)
	for i := range 10 { // 2 KB: below the size
		propose(t, g, fmt.Sprintf("k%d=%s", i, value))
	}
	time.Sleep(2 * snapshotCheck) // two checks find nothing to do
	if metas, err := g.snaps.List(); err != nil || len(metas) != 0 {
		t.Fatalf("snapshots %v (%v) before the size was reached", metas, err)
	}
	for i := 10; i < 40; i++ { // 8 KB in all
		propose(t, g, fmt.Sprintf("k%d=%s", i, value))
	}
	waitFor(t, "a snapshot by size", func() bool {
		metas, err := g.snaps.List()
		return err == nil && len(metas) > 0
	})
	if got := g.fsm.sinceSnap.Load(); got >= 4<<10 {
		t.Fatalf("%d bytes counted since the snapshot", got)
	}
}
