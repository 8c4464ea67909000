package shard

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// ErrLogGap is a group whose log does not reach back to the snapshot raft
// restored: its newest snapshot was damaged, so raft restored the one
// before it, and the log had since been compacted past that one.
var ErrLogGap = errors.New("the log no longer reaches back to the snapshot restored " +
	"(the newest snapshot is damaged): restore the group's directory from a backup, " +
	"or remove it so that the node rejoins the group from its other replicas")

// newRaft is raft.NewRaft, except that the panic raft raises when a log
// entry after the restored snapshot is missing (ErrLogGap) becomes an
// error: the node crash-looped on it; now the group refuses to start and
// says why. Raft starts no goroutine before that check, so nothing is left
// running. Any other panic goes on.
func newRaft(conf *raft.Config, fsm raft.FSM, logs raft.LogStore, stable raft.StableStore,
	snaps raft.SnapshotStore, trans raft.Transport) (r *raft.Raft, err error) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if e, ok := p.(error); ok && errors.Is(e, raft.ErrLogNotFound) {
			r, err = nil, fmt.Errorf("%w: %w", ErrLogGap, e)
			return
		}
		panic(p)
	}()
	return raft.NewRaft(conf, fsm, logs, stable, snaps, trans)
}
