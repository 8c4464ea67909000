package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

const (
	// healEvery is how often a node looks for members of its groups that
	// gossip does not have alive.
	healEvery = 2 * time.Second
	// healProbe bounds one such member's answer.
	healProbe = 500 * time.Millisecond
	// healWarnEvery spaces the warning that a member answers over Raft but
	// not through gossip.
	healWarnEvery = time.Minute
)

// heal asks every member of this node's groups that gossip does not have
// alive, at the Raft address the group gives it, who it is. Gossip can miss
// a live node: nodes restarted together each try to join the others before
// they listen, and stay alone (and a leader alone in its gossip would take
// the others for gone once its view settles). A member that answers is
// joined through gossip and returned in reachable, counted as a live
// member until the next heal even when the join fails.
func (c *Cluster) heal(ctx context.Context) (reachable map[string]NodeInfo) {
	alive := map[string]bool{}
	for _, st := range c.members.snapshot() {
		if st.status == StatusAlive || st.status == StatusSuspect {
			alive[st.info.NodeID] = true
		}
	}
	missing := map[string]string{} // node ID -> raft address
	rafts := []*raft.Raft{c.metaG.Raft()}
	for g := 1; g < len(c.groups); g++ {
		if c.groups[g] != nil {
			rafts = append(rafts, c.groups[g].Raft())
		}
	}
	for _, r := range rafts {
		f := r.GetConfiguration()
		if f.Error() != nil {
			continue
		}
		for _, s := range f.Configuration().Servers {
			if id := string(s.ID); id != c.cfg.NodeID && !alive[id] {
				missing[id] = string(s.Address)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var gossip []string
	reachable = c.probe(ctx, missing)
	for id, self := range reachable {
		if c.foreign(self) {
			delete(reachable, id)
		} else if self.GossipAddr != "" {
			gossip = append(gossip, self.GossipAddr)
		}
	}
	if len(gossip) > 0 {
		if err := c.members.join(gossip); err != nil {
			if time.Since(c.healWarned) >= healWarnEvery {
				c.healWarned = time.Now()
				c.log.Warn("members of this node's groups answer but cannot be joined through gossip (is the gossip port reachable?)",
					"err", err)
			}
		} else {
			c.log.Info("joined members gossip had lost", "addrs", gossip)
		}
	}
	return reachable
}

// probe asks each node of targets (node ID -> Raft address) at once who it
// is, waiting healProbe at most, and returns those that answer with the ID
// they were asked under.
func (c *Cluster) probe(ctx context.Context, targets map[string]string) map[string]NodeInfo {
	answered := map[string]NodeInfo{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, addr := range targets {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, healProbe)
			defer cancel()
			resp, err := c.call(pctx, addr, &rpcRequest{Op: opSelf, Node: c.me()})
			if err == nil && resp.Self.NodeID == id {
				mu.Lock()
				answered[id] = resp.Self
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return answered
}
