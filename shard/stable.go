package shard

import (
	"bytes"
	"log/slog"
	"runtime"
	"sync"
	"time"

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
//
// Raft also panics when the current term cannot be saved (a read-only or
// failing disk), which took the whole process down. SetUint64 of the term
// instead retries until the store takes it: the group stalls (no leader, no
// vote from this node) and carries on once the disk does. When the group
// closes meanwhile, the calling goroutine ends (runtime.Goexit): going on
// with a term that is not on disk could let this node vote twice in it
// after a restart, and raft's goroutines end with deferred calls that
// release what they hold, so raft's shutdown completes.
type stableStore struct {
	mu     sync.RWMutex
	closed bool
	s      raft.StableStore
	done   <-chan struct{} // closed when the group starts closing; nil in tests that never close it
	log    *slog.Logger
}

// termRetry is how long SetUint64 waits between attempts to save a term the
// store refused; termLogEvery how often it says it is still failing.
var (
	termRetry    = 500 * time.Millisecond
	termLogEvery = 30 * time.Second
)

// keyCurrentTerm is raft's key for the current term (raft.go).
var keyCurrentTerm = []byte("CurrentTerm")

func (s *stableStore) Set(key, val []byte) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil
	}
	return s.s.Set(key, val)
}

func (s *stableStore) SetUint64(key []byte, val uint64) error {
	err := s.setUint64(key, val)
	if err == nil || !bytes.Equal(key, keyCurrentTerm) {
		return err
	}
	s.logger().Error("cannot save the raft term: the group stalls until the disk takes writes again", "err", err)
	logged := time.Now()
	for {
		select {
		case <-s.done:
			runtime.Goexit()
		case <-time.After(termRetry):
		}
		if err = s.setUint64(key, val); err == nil {
			s.logger().Info("the raft term is saved again: the group resumes")
			return nil
		}
		if time.Since(logged) >= termLogEvery {
			s.logger().Error("still cannot save the raft term", "err", err)
			logged = time.Now()
		}
	}
}

func (s *stableStore) setUint64(key []byte, val uint64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil
	}
	return s.s.SetUint64(key, val)
}

func (s *stableStore) logger() *slog.Logger {
	if s.log == nil {
		return slog.Default()
	}
	return s.log
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
