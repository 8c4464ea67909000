package shard

import (
	"fmt"
	"io"
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
