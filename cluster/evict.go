package cluster

import (
	"context"
	"strings"
	"time"

	"github.com/hebbdb/hebb/shard"
)

// A leader that removes a replica stops replicating to it as soon as it
// appends the removal, so the removed node may never learn of it: its last
// configuration still lists it, and it would take itself for a replica of
// the group for good, waiting for a leader that never comes on every read.
// Two remedies:
//
//   - Before removing a live voter, the leader demotes it and waits until it
//     knows (reconcileGroup): a non-voter never campaigns, so the removed
//     node does not call elections the group rejects, forever.
//   - A node that lists itself in a group but has heard no leader for
//     evictAfter asks the other nodes for the group's leader, and that
//     leader for its configuration. One that no longer names this node
//     marks the group evicted for the local configuration: hosts then
//     answers false, so requests go to the group's leader. Another local
//     configuration (the node added back) or a leader heard clears it.

// evictAfter is how long a listed replica goes without a leader before it
// asks whether it was removed, and how often it asks again.
const evictAfter = 3 * time.Second

// demoteWait bounds the wait for a demoted replica to learn of its
// demotion before it is removed anyway.
const demoteWait = 10 * time.Second

// configKey identifies a configuration: its voters and its non-voters.
func configKey(voters, nonvoters []string) string {
	return strings.Join(voters, ",") + "|" + strings.Join(nonvoters, ",")
}

// evictedFrom reports whether group id is marked evicted for this
// configuration of it.
func (c *Cluster) evictedFrom(id uint32, voters, nonvoters []string) bool {
	at, ok := c.evicted.Load(id)
	return ok && at.(string) == configKey(voters, nonvoters)
}

// checkEvictions runs on every reconcile tick (one goroutine).
func (c *Cluster) checkEvictions(ctx context.Context, now time.Time) {
	for gid := 1; gid <= c.info.Groups && gid < len(c.groups); gid++ {
		g := c.groups[gid]
		id := g.ID()
		if _, addr := g.Leader(); addr != "" || g.IsLeader() {
			c.evicted.Delete(id) // a leader replicates to its members only
			delete(c.leaderless, id)
			continue
		}
		voters, nonvoters, err := g.Voters()
		listed := err == nil && (contains(voters, c.cfg.NodeID) || contains(nonvoters, c.cfg.NodeID))
		if !listed || c.evictedFrom(id, voters, nonvoters) {
			delete(c.leaderless, id)
			continue
		}
		since, ok := c.leaderless[id]
		if !ok {
			c.leaderless[id] = now
			continue
		}
		if now.Sub(since) < evictAfter {
			continue
		}
		c.leaderless[id] = now // ask again evictAfter later
		if c.removedFrom(ctx, g) {
			c.evicted.Store(id, configKey(voters, nonvoters))
			c.log.Info("this node was removed from the group without learning it; requests for it go to its leader", "group", id)
		}
	}
}

// removedFrom asks the other nodes for g's leader and that leader whether
// its configuration still names this node. No answer is no: only a leader's
// word evicts.
func (c *Cluster) removedFrom(ctx context.Context, g *shard.Group) bool {
	ctx, cancel := context.WithTimeout(ctx, evictAfter)
	defer cancel()
	_, addr := c.askLeader(ctx, g)
	if addr == "" {
		return false
	}
	resp, err := c.call(ctx, addr, &rpcRequest{Op: opConfig, Group: g.ID()})
	return err == nil && len(resp.Voters) > 0 && !contains(resp.Voters, c.cfg.NodeID)
}

// knowsDemotion reports whether node id at addr, a non-voter of g, knows it
// is one (its own configuration lists it as a non-voter, or not at all), or
// has had demoteWait to learn it. An unreachable node cannot learn
// anything: it is removed at once.
func (c *Cluster) knowsDemotion(ctx context.Context, g *shard.Group, id, addr string) bool {
	gid := g.ID()
	first, waiting := c.demoted[gid]
	if !waiting {
		first = time.Now()
		c.demoted[gid] = first
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	resp, err := c.call(ctx, addr, &rpcRequest{Op: opConfig, Group: gid})
	knows := err == nil && (contains(resp.Nonvoters, id) || !contains(resp.Voters, id))
	if err != nil || knows || time.Since(first) > demoteWait {
		delete(c.demoted, gid)
		return true
	}
	return false
}
