package cluster

import (
	"context"
	"fmt"
	"time"
)

// drainPoll is how often a drain checks whether the node still holds replicas.
const drainPoll = 250 * time.Millisecond

// Drain moves every replica off a node, then removes it from the cluster:
// the node is recorded as draining (group leaders replace it), and once no
// group lists it, recorded as left (the meta leader removes it from the
// meta group). It returns when the node is gone or ctx ends.
func (c *Cluster) Drain(ctx context.Context, nodeID string) error {
	if !c.knows(nodeID) {
		return fmt.Errorf("%w: node %s", ErrUnknownNode, nodeID)
	}
	if c.members == nil || len(c.members.snapshot()) <= 1 {
		return fmt.Errorf("%w: cannot drain the last node", ErrInvalidCommand)
	}
	if _, err := c.ProposeMeta(ctx, EncodeSetNodeState(SetNodeState{NodeID: nodeID, State: NodeDraining})); err != nil {
		return err
	}
	for {
		held, err := c.holdsReplicas(ctx, nodeID)
		if err == nil && !held {
			_, err = c.ProposeMeta(ctx, EncodeSetNodeState(SetNodeState{NodeID: nodeID, State: NodeLeft}))
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: node %s still holds replicas", ErrUnavailable, nodeID)
		case <-time.After(drainPoll):
		}
	}
}

func (c *Cluster) knows(nodeID string) bool {
	if c.members == nil {
		return nodeID == c.cfg.NodeID
	}
	n, ok := c.members.info(nodeID)
	return ok && !c.foreign(n)
}

// holdsReplicas asks each data group's leader whether nodeID is in its
// configuration.
func (c *Cluster) holdsReplicas(ctx context.Context, nodeID string) (bool, error) {
	for gid := 1; gid <= c.info.Groups; gid++ {
		g := c.groups[gid]
		var ids []string
		if g.IsLeader() {
			v, nv, err := g.Voters()
			if err != nil {
				return true, err
			}
			ids = append(v, nv...)
		} else {
			_, addr := c.leaderOf(ctx, g)
			if addr == "" {
				return true, fmt.Errorf("%w: group %d has no leader", ErrUnavailable, gid)
			}
			resp, err := c.call(ctx, addr, &rpcRequest{Op: opConfig, Group: g.ID()})
			if err != nil {
				return true, err
			}
			ids = resp.Voters
		}
		if contains(ids, nodeID) {
			return true, nil
		}
	}
	return false, nil
}

// removedCheck is how often a restarting node that cannot reach its meta
// group asks the other members whether it was removed.
const removedCheck = 2 * time.Second

// removedError is why a drained and removed node, restarted on its old
// data dir, does not start: no group takes it back, and the state it holds
// is what it had when it left.
func (c *Cluster) removedError() error {
	return fmt.Errorf("%w: node %s was drained and removed (DELETE /admin/v1/cluster/nodes/%s); "+
		"its data dir %s holds the state it had then. To bring this machine back, start it on an "+
		"empty --data-dir with --join: it joins as a new node", ErrRemoved, c.cfg.NodeID, c.cfg.NodeID, c.cfg.DataDir)
}
