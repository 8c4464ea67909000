package cluster

import (
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/hebbdb/hebb/shard"
)

// handOffLeadership is a graceful stop's last act as a leader: each group
// this node leads (the meta group included) hands its leadership to another
// voter that gossip has alive, all groups at once, before the node shuts
// Raft down. The group then has a leader again as soon as the target wins
// its election, where a leader that just stopped left the others to notice
// its silence first (a heartbeat timeout, 0.5–1 s, then a pre-vote and a
// vote): a rolling restart no longer stalls every group the stopping node
// led. Raft brings the target's log up to date before it tells it to
// campaign, and gives up after its election timeout; a group whose handoff
// fails is stopped as it was before. The reconcile loop has stopped by
// then, so no membership change starts behind the handoff.
func (c *Cluster) handOffLeadership() {
	if c.members == nil {
		return
	}
	up := c.view().up
	var wg sync.WaitGroup
	for _, g := range c.node.Groups() { // the meta group and the data groups still running
		if !g.IsLeader() {
			continue
		}
		id, addr, ok := c.handOffTarget(g, up)
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := g.Raft().LeadershipTransferToServer(raft.ServerID(id), raft.ServerAddress(addr)).Error()
			if err != nil {
				c.log.Warn("leadership handoff before stopping failed", "group", g.ID(), "to", id, "err", err)
				return
			}
			c.log.Info("handed leadership over before stopping", "group", g.ID(), "to", id)
		}()
	}
	wg.Wait()
}

// handOffTarget picks a voter of g, other than this node, that gossip has
// alive, with the address g's configuration gives it. Any will do (raft
// brings it up to date first); the group's ID chooses among them, so that
// the groups a stopping node led spread over the others instead of all
// landing on the node a rolling restart may stop next.
func (c *Cluster) handOffTarget(g *shard.Group, up map[string]string) (id, addr string, ok bool) {
	f := g.Raft().GetConfiguration()
	if f.Error() != nil {
		return "", "", false
	}
	var targets []raft.Server
	for _, s := range f.Configuration().Servers {
		_, alive := up[string(s.ID)]
		if s.Suffrage == raft.Voter && string(s.ID) != c.cfg.NodeID && alive {
			targets = append(targets, s)
		}
	}
	if len(targets) == 0 {
		return "", "", false
	}
	slices.SortFunc(targets, func(a, b raft.Server) int { return strings.Compare(string(a.ID), string(b.ID)) })
	t := targets[int(g.ID())%len(targets)]
	return string(t.ID), string(t.Address), true
}
