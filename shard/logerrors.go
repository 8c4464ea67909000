package shard

import (
	"fmt"

	"github.com/hashicorp/raft"
)

// markedLogs is a group's log store as raft sees it: the failures of
// storing entries wrap ErrStorage. Raft hands a leader's failed append to
// the waiting proposals as is, and its log cache keeps only the text of
// the underlying error, so without the mark a full disk reached clients
// as an unknown error. When the append fails raft steps down, and the
// entries were neither stored nor sent to a follower.
type markedLogs struct{ raft.LogStore }

func (m markedLogs) StoreLog(l *raft.Log) error { return m.StoreLogs([]*raft.Log{l}) }

func (m markedLogs) StoreLogs(logs []*raft.Log) error {
	if err := m.LogStore.StoreLogs(logs); err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return nil
}
