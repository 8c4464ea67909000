package shard

import (
	"sync"

	"github.com/hashicorp/raft"
)

// stableStore is a group's Raft stable store (current term, vote) guarded
// against the group closing its log store. Raft's transport answers a
// heartbeat on its own goroutine, which can pass raft's shutdown check just
// before Group.close shuts raft down and closes the store; its write of the
// current term then fails and raft panics ("failed to save current term:
// database not open"). Once closed, writes are dropped: that raft instance
// is shut down and reads nothing more, and a restart reads the store as it
// was.
type stableStore struct {
	mu     sync.RWMutex
	closed bool
	s      raft.StableStore
}

func (s *stableStore) Set(key, val []byte) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil
	}
	return s.s.Set(key, val)
}

func (s *stableStore) SetUint64(key []byte, val uint64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil
	}
	return s.s.SetUint64(key, val)
}

func (s *stableStore) Get(key []byte) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrShutdown
	}
	return s.s.Get(key)
}

func (s *stableStore) GetUint64(key []byte) (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrShutdown
	}
	return s.s.GetUint64(key)
}

// close waits for the calls under way and drops every later write.
func (s *stableStore) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}
