package shard

import (
	"errors"
	"testing"

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
