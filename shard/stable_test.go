package shard

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// After close the guard drops writes (raft would panic on their error) and
// refuses reads; before it, both reach the store.
func TestStableStoreClose(t *testing.T) {
	inner := raft.NewInmemStore()
	s := &stableStore{s: inner}
	if err := s.SetUint64([]byte("CurrentTerm"), 3); err != nil {
		t.Fatal(err)
	}
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 3 {
		t.Fatalf("GetUint64 = %d, %v", v, err)
	}
	s.close()
	if err := s.SetUint64([]byte("CurrentTerm"), 4); err != nil {
		t.Fatalf("a write after close failed: %v", err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("x")); err != nil {
		t.Fatalf("a write after close failed: %v", err)
	}
	if v, _ := inner.GetUint64([]byte("CurrentTerm")); v != 3 {
		t.Fatalf("the store holds term %d after close, want 3", v)
	}
	if _, err := s.GetUint64([]byte("CurrentTerm")); !errors.Is(err, ErrShutdown) {
		t.Fatalf("a read after close: %v", err)
	}
}

// failingStable refuses every write while fail is set, as a read-only or
// failing disk does.
type failingStable struct {
	raft.StableStore
	fail atomic.Bool
}

func (f *failingStable) Set(k, v []byte) error {
	if f.fail.Load() {
		return errDiskFailing
	}
	return f.StableStore.Set(k, v)
}

func (f *failingStable) SetUint64(k []byte, v uint64) error {
	if f.fail.Load() {
		return errDiskFailing
	}
	return f.StableStore.SetUint64(k, v)
}

var errDiskFailing = errors.New("input/output error")

// A node that cannot save a new term (raft panics on that) stalls the
// group's election instead of taking the process down, and the group
// elects a leader and takes writes once the disk works again.
func TestTermUnsavableStallsThenRecovers(t *testing.T) {
	defer func(d time.Duration) { termRetry = d }(termRetry)
	termRetry = 20 * time.Millisecond
	c := newTestCluster(t)
	old := c.leader(t, 1, c.nodes)
	// Every node holds the configuration of three voters before the leader
	// goes: one that had not yet received it waited for the closed node's
	// vote forever (under load, with the race detector).
	propose(t, old.Group(1), "before=1")
	c.converged(t, 1, c.nodes, map[string]string{"before": "1"})
	var open []*Node
	for _, n := range c.nodes {
		if n != old {
			open = append(open, n)
		}
	}
	s := open[0].Group(1).stable
	disk := &failingStable{StableStore: s.s}
	disk.fail.Store(true)
	s.mu.Lock()
	s.s = disk
	s.mu.Unlock()

	if err := old.Close(); err != nil {
		t.Fatalf("Close leader node: %v", err)
	}
	time.Sleep(2 * time.Second) // several election timeouts
	for _, n := range open {
		if n.Group(1).IsLeader() {
			t.Fatalf("%s leads group 1 while the other voter cannot save a term", n.ID())
		}
	}
	disk.fail.Store(false)
	leader := c.leader(t, 1, open)
	propose(t, leader.Group(1), "after=1")
	c.converged(t, 1, open, map[string]string{"before": "1", "after": "1"})
}

// A group closing while its term cannot be saved ends the goroutine that
// tried, so raft's shutdown does not wait for a disk that never recovers.
func TestTermUnsavableAtClose(t *testing.T) {
	defer func(d time.Duration) { termRetry = d }(termRetry)
	termRetry = 5 * time.Millisecond
	done := make(chan struct{})
	disk := &failingStable{StableStore: raft.NewInmemStore()}
	disk.fail.Store(true)
	s := &stableStore{s: disk, done: done}
	ended := make(chan error)
	go func() {
		returned := false
		defer func() {
			if !returned {
				ended <- nil
			}
		}()
		err := s.SetUint64(keyCurrentTerm, 7)
		returned = true
		ended <- fmt.Errorf("SetUint64 returned %v with the term unsaved", err)
	}()
	select {
	case err := <-ended:
		t.Fatalf("before close: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(done)
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if v, _ := disk.GetUint64(keyCurrentTerm); v != 0 {
		t.Fatalf("term %d saved", v)
	}
}
