package shard

import (
	"fmt"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// markedLogs is a group's log store as raft sees it: the failures of
// storing entries wrap ErrStorage. Raft hands a leader's failed append to
// the waiting proposals as is, and its log cache keeps only the text of
// the underlying error, so without the mark a full disk reached clients
// as an unknown error. When the append fails raft steps down, and the
// entries were neither stored nor sent to a follower.
//
// It also records whether the last append failed (failing): a follower
// whose disk refuses the leader's entries falls behind for as long, and
// reads through it would wait for entries it cannot store.
type markedLogs struct {
	raft.LogStore
	failing *atomic.Bool
}

func (m markedLogs) StoreLog(l *raft.Log) error { return m.StoreLogs([]*raft.Log{l}) }

func (m markedLogs) StoreLogs(logs []*raft.Log) error {
	if err := m.LogStore.StoreLogs(logs); err != nil {
		m.failing.Store(true)
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	m.failing.Store(false)
	return nil
}
