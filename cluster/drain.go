package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/hebbdb/hebb/shard"
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
	if c.takers(nodeID) == 0 {
		return fmt.Errorf("%w: cannot drain the last node", ErrInvalidCommand)
	}
	if err := c.drainBlocked(ctx, nodeID); err != nil {
		return err
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

// takers counts the nodes that could take nodeID's replicas: up, of this
// cluster, and neither draining nor drained. With none, a drain would wait
// for ever and finish, unasked, once a node joined.
func (c *Cluster) takers(nodeID string) int {
	if c.members == nil {
		return 0
	}
	n := 0
	for _, m := range c.members.snapshot() {
		if m.info.NodeID != nodeID && m.status == StatusAlive && !c.foreign(m.info) &&
			c.meta.NodeState(m.info.NodeID) == "" {
			n++
		}
	}
	return n
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
		voters, nonvoters, err := c.leaderConfig(ctx, c.groups[gid])
		if err != nil {
			return true, err
		}
		if contains(voters, nodeID) || contains(nonvoters, nodeID) {
			return true, nil
		}
	}
	return false, nil
}

// leaderConfig returns g's voters and non-voters as its leader has them.
func (c *Cluster) leaderConfig(ctx context.Context, g *shard.Group) (voters, nonvoters []string, err error) {
	if g.IsLeader() {
		return g.Voters()
	}
	_, addr := c.leaderOf(ctx, g)
	if addr == "" {
		return nil, nil, fmt.Errorf("%w: group %d has no leader", ErrUnavailable, g.ID())
	}
	resp, err := c.call(ctx, addr, &rpcRequest{Op: opConfig, Group: g.ID()})
	if err != nil {
		return nil, nil, err
	}
	for _, id := range resp.Voters { // voters, then the non-voters
		if !contains(resp.Nonvoters, id) {
			voters = append(voters, id)
		}
	}
	return voters, resp.Nonvoters, nil
}

// drainBlocked refuses to drain nodeID while some group it is a voter of
// could not elect a leader without it: its other voters that are up are
// not a majority of them (another of them is down and not replaced yet).
// Draining then would leave the group without a leader until the down
// node returns.
func (c *Cluster) drainBlocked(ctx context.Context, nodeID string) error {
	configs := make([][]string, c.info.Groups+1) // [0]: the meta group
	for gid := 0; gid <= c.info.Groups; gid++ {
		g := c.metaG
		if gid > 0 {
			g = c.groups[gid]
		}
		voters, _, err := c.leaderConfig(ctx, g)
		if err != nil {
			return err
		}
		configs[gid] = voters
	}
	// Gossip takes seconds to notice a crash: ask the voters themselves.
	v := nodeView{up: c.answering(ctx, configs)}
	for gid := 0; gid <= c.info.Groups; gid++ {
		voters := configs[gid]
		if contains(voters, nodeID) && len(voters) > 1 && !liveMajorityWithout(voters, nodeID, v) {
			name := fmt.Sprintf("group %d", gid)
			if gid == 0 {
				name = "the meta group"
			}
			return fmt.Errorf("%w: cannot drain %s now: %s (voters %v) would be left without a "+
				"majority of voters up; bring the node that is down back, or wait until its replicas are "+
				"replaced (--dead-node-grace), then drain", ErrInvalidCommand, nodeID, name, voters)
		}
	}
	return nil
}

// answering returns the nodes among lists that answer the node RPC now,
// this node included, each asked at the Raft address gossip has, mapped to
// that address.
func (c *Cluster) answering(ctx context.Context, lists [][]string) map[string]string {
	targets := map[string]string{}
	for _, ids := range lists {
		for _, id := range ids {
			if info, ok := c.members.info(id); ok && id != c.cfg.NodeID && info.RaftAddr != "" {
				targets[id] = info.RaftAddr
			}
		}
	}
	up := map[string]string{c.cfg.NodeID: c.me().RaftAddr}
	for id := range c.probe(ctx, targets) {
		up[id] = targets[id]
	}
	return up
}

// liveMajorityWithout reports whether the voters other than id that v has
// up (alive, not merely not yet declared dead) are a majority of them: the
// group can still elect and commit once id is gone.
func liveMajorityWithout(voters []string, id string, v nodeView) bool {
	rest, live := 0, 0
	for _, x := range voters {
		if x == id {
			continue
		}
		rest++
		if _, ok := v.up[x]; ok {
			live++
		}
	}
	return live > rest/2
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
