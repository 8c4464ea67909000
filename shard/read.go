package shard

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// ReadIndex is the linearizable-read barrier: when it returns nil, this node
// was the leader after the call started and the local StateMachine reflects
// every command acknowledged before the call. Errors wrap ErrNotLeader,
// ErrTimeout or ErrShutdown. In the steady state it writes nothing to the
// log and waits for nothing but leadership: the first read of a leadership
// term commits one barrier, later reads only confirm leadership with a
// heartbeat round, or not at all when this node is the group's only voter
// (soleVoter).
//
// A read need not wait for the commands committed but not yet applied: a
// command is acknowledged with its result, which the leader's StateMachine
// gives as it applies it (raft's ApplyFuture), so every command
// acknowledged in this term is already in the local state, and those of
// earlier terms are in it once this term's barrier is applied. A command
// still unapplied has not been acknowledged: it is concurrent with the
// read, which may then be ordered before it. Waiting for the commit index
// made a read under batched writes wait for the batches queued for apply
// (hebb bench: searches beside 500-item batch writes took 18 ms at the
// median and 300 ms at p99 inside the server).
func (g *Group) ReadIndex(ctx context.Context) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := g.readIndex(ctx); err != nil {
		return fmt.Errorf("cannot read group %d: %w", g.id, err)
	}
	return nil
}

func (g *Group) readIndex(ctx context.Context) error {
	if err := g.usable(ctx); err != nil {
		return err
	}
	if g.raft.State() != raft.Leader {
		return ErrNotLeader
	}
	term := g.raft.CurrentTerm()
	if !g.soleVoter() {
		if err := g.await(ctx, g.raft.VerifyLeader()); err != nil {
			return err
		}
	}
	if g.raft.CurrentTerm() != term || g.readyTerm.Load() != term {
		// A new leader may not know the commit index of earlier terms until an
		// entry of its own term commits. The barrier's future returns once the
		// FSM has applied it, and it lies after everything committed before
		// this call.
		if err := g.await(ctx, g.raft.Barrier(untilDeadline(ctx))); err != nil {
			return err
		}
		g.readyTerm.Store(term)
	}
	return nil
}

// soleVoter reports whether this node is the only voter of the group's
// latest configuration. Then, while it is leader, no other node can be
// elected: a candidate needs a majority of voters, and a voter being
// removed (still in the committed configuration) would need this node's
// vote, which raft refuses while it knows a leader. So a read needs no
// VerifyLeader, which waits for the leader loop, busy with every log
// write's fsync (1 to 3 ms each on a VM disk: a single-node read's p99).
func (g *Group) soleVoter() bool {
	f := g.raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	self, voters := false, 0
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			voters++
			self = self || string(s.ID) == g.node.ID()
		}
	}
	return voters == 1 && self
}

// lastCommandUpTo returns the index of the last command entry in
// (AppliedIndex, ci], 0 when there is none. raft's own applied index runs
// ahead of the FSM and counts entries the FSM never sees (noop, barrier,
// configuration), so the log is inspected. An entry missing because the log
// was compacted is covered by a snapshot the FSM already holds: compaction
// only follows a snapshot of, or a restore into, this FSM.
func (g *Group) lastCommandUpTo(ci uint64) (uint64, error) {
	applied := g.fsm.applied()
	for idx := ci; idx > applied; idx-- {
		var entry raft.Log
		err := g.logs.GetLog(idx, &entry)
		if errors.Is(err, raft.ErrLogNotFound) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("cannot read log entry %d: %w", idx, err)
		}
		if entry.Type == raft.LogCommand {
			return idx, nil
		}
	}
	return 0, nil
}
