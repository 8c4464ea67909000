package shard

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// LeaderReadIndex is ReadIndex run on the leader for a read served by a
// follower: it returns an index that the follower must apply before it
// reads, covering every command acknowledged before the call. That is the
// index of the last command the leader applied once ReadIndex returns: as
// for a read on the leader, every acknowledged command is in its state
// then, and a command committed but not yet applied is concurrent with the
// read. The commit index it returned before made a follower's read under
// batched writes wait for the batches queued for apply on the leader.
func (g *Group) LeaderReadIndex(ctx context.Context) (uint64, error) {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	if err := g.readIndex(ctx); err != nil {
		return 0, fmt.Errorf("cannot read group %d: %w", g.id, err)
	}
	return g.fsm.applied(), nil
}

// WaitIndex waits until this replica has applied every command with index
// up to idx (a read index obtained from the leader), so a follower can serve
// a linearizable read from its own state machine.
func (g *Group) WaitIndex(ctx context.Context, idx uint64) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	for g.raft.CommitIndex() < idx || g.raft.LastIndex() < idx {
		if err := g.usable(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctxError(ctx)
		case <-g.done:
			return ErrShutdown
		case <-time.After(2 * time.Millisecond):
		}
	}
	target, err := g.lastCommandUpTo(idx)
	if err != nil {
		return err
	}
	return g.fsm.waitApplied(ctx, target, g.done)
}

// Voters returns the IDs of the group's voters and non-voters, as this
// replica's latest configuration has them. A replica the leader removed may
// keep that configuration for good: the leader stops replicating to a
// server once it appends its removal.
func (g *Group) Voters() (voters, nonvoters []string, err error) {
	f := g.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, nil, fmt.Errorf("cannot read configuration of group %d: %w", g.id, err)
	}
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			voters = append(voters, string(s.ID))
		} else {
			nonvoters = append(nonvoters, string(s.ID))
		}
	}
	return voters, nonvoters, nil
}
