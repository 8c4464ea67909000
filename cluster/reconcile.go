package cluster

import (
	"context"
	"hash/fnv"
	"sort"
	"strconv"
	"time"

	"github.com/hebbdb/hebb/shard"
)

// reconcileEvery is how often a node checks the groups it leads.
const reconcileEvery = 500 * time.Millisecond

// catchUpLag is how far (in log entries) a new non-voter may trail the
// leader's commit index before it is promoted to voter.
const catchUpLag = 64

// reconcileLoop keeps the replica sets of the groups this node leads in
// line with the live nodes: each leader moves its own group, one change at a
// time (add a non-voter, let it catch up, promote it, then remove the
// surplus replica), so a join or a death is absorbed group by group.
func (c *Cluster) reconcileLoop() {
	defer close(c.stopped)
	if c.members == nil {
		<-c.stop
		return
	}
	tick := time.NewTicker(reconcileEvery)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			c.reconcileOnce()
		}
	}
}

func (c *Cluster) reconcileOnce() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if time.Since(c.healedAt) >= healEvery {
		c.healed, c.healedAt = c.heal(ctx), time.Now()
	}
	v := c.view()
	c.checkEvictions(ctx, time.Now())
	if c.metaG.IsLeader() {
		if err := c.reconcileMeta(ctx, v); err != nil {
			c.log.Warn("meta membership change failed", "err", err)
		}
	}
	for g := 1; g <= c.info.Groups && len(c.groups) > g; g++ {
		grp := c.groups[g]
		if !grp.IsLeader() {
			continue
		}
		changed, err := c.reconcileGroup(ctx, grp, v)
		if err != nil {
			c.log.Warn("replica change failed", "group", g, "err", err)
		}
		if changed || err != nil {
			return // one change per tick on this node
		}
	}
}

// nodeView is this node's picture of the cluster for placement.
type nodeView struct {
	candidates map[string]NodeInfo // may hold replicas: present and not draining
	alive      map[string]bool     // alive or suspect: may receive a new replica
	present    map[string]bool     // not yet to be replaced (dead for less than the grace period)
	known      map[string]bool     // ever heard of through gossip, whatever its state
	draining   map[string]bool
	// up: the members alive, not suspect (or answering the heal), counted
	// on for a quorum, with their Raft address
	up map[string]string
	// settled: this node has gossiped for longer than the grace period, so
	// a member it never heard of counts as gone.
	settled bool
}

func (c *Cluster) view() nodeView {
	rec, _ := c.meta.ClusterInfo()
	v := nodeView{candidates: map[string]NodeInfo{}, alive: map[string]bool{}, present: map[string]bool{},
		known: map[string]bool{}, up: map[string]string{}, draining: c.meta.DrainingNodes(),
		settled: time.Since(c.members.started) > c.cfg.DeadGrace}
	for _, st := range c.members.snapshot() {
		if c.foreign(st.info) {
			c.warnForeign(st.info)
			continue
		}
		id := st.info.NodeID
		v.known[id] = true
		if st.status == StatusAlive {
			v.up[id] = st.info.RaftAddr
		}
		if st.status == StatusLeft || st.status == StatusDead && time.Since(st.since) > c.cfg.DeadGrace {
			continue
		}
		v.present[id] = true
		if st.status != StatusDead {
			v.alive[id] = true
		}
		if !v.draining[id] && rec.accepts(st.info) {
			v.candidates[id] = st.info
		}
	}
	for id, info := range c.healed { // answering though gossip lost them
		if v.alive[id] {
			continue
		}
		v.known[id], v.present[id], v.alive[id] = true, true, true
		v.up[id] = info.RaftAddr
		if !v.draining[id] && rec.accepts(info) {
			v.candidates[id] = info
		}
	}
	return v
}

// rendezvous orders candidate nodes for a group: highest score first.
func rendezvous(group uint32, nodes map[string]NodeInfo) []string {
	ids := make([]string, 0, len(nodes))
	for id := range nodes {
		ids = append(ids, id)
	}
	score := func(id string) uint64 {
		h := fnv.New64a()
		_, _ = h.Write([]byte(strconv.FormatUint(uint64(group), 10) + "/" + id))
		return h.Sum64()
	}
	sort.Slice(ids, func(i, j int) bool { return score(ids[i]) > score(ids[j]) })
	return ids
}

// reconcileGroup makes at most one membership change to g: give a member
// that moved its new address (readdress); else promote a
// caught-up wanted non-voter; else add a wanted node as non-voter; else
// remove a replica that is not wanted (surplus, gone past the grace
// period, or draining). Placement is rendezvous hashing over the candidates,
// so a join moves about R/N of the groups onto the new node.
func (c *Cluster) reconcileGroup(ctx context.Context, g *shard.Group, v nodeView) (bool, error) {
	if changed, err := c.readdress(ctx, g, v); changed || err != nil {
		return changed, err
	}
	voters, nonvoters, err := g.Voters()
	if err != nil {
		return false, err
	}
	if !v.knowsAll(voters, nonvoters) {
		return false, nil
	}
	want := max(1, c.cfg.Replicas)
	want = min(want, len(v.candidates))
	desired := map[string]bool{}
	for _, id := range rendezvous(g.ID(), v.candidates)[:want] {
		desired[id] = true
	}
	for _, id := range nonvoters {
		if desired[id] && v.alive[id] {
			caught, err := c.caughtUp(ctx, g, v.candidates[id])
			if err != nil || !caught {
				return false, err
			}
			c.log.Info("promoting replica", "group", g.ID(), "node", id)
			return true, g.AddVoter(ctx, id, v.candidates[id].RaftAddr)
		}
	}
	for _, id := range rendezvous(g.ID(), v.candidates) {
		if desired[id] && v.alive[id] && !contains(voters, id) && !contains(nonvoters, id) {
			c.log.Info("adding replica", "group", g.ID(), "node", id)
			return true, g.AddNonvoter(ctx, id, v.candidates[id].RaftAddr)
		}
	}
	for _, id := range nonvoters {
		if desired[id] {
			continue
		}
		// A live non-voter learns of its demotion before it goes (evict.go).
		if addr := c.raftAddrOf(g, id); v.alive[id] && addr != "" && !c.knowsDemotion(ctx, g, id, addr) {
			return false, nil
		}
		c.log.Info("removing replica", "group", g.ID(), "node", id)
		return true, g.RemoveServer(ctx, id)
	}
	for _, id := range voters {
		gone := !v.present[id] || v.draining[id]
		if desired[id] || !(gone || len(voters) > want) || len(voters) <= 1 {
			continue
		}
		if id == c.cfg.NodeID {
			c.log.Info("handing over leadership before leaving the group", "group", g.ID())
			return true, g.Raft().LeadershipTransfer().Error()
		}
		if v.alive[id] {
			if !liveMajorityWithout(voters, id, v) {
				continue // the group could not elect without it (another voter is down)
			}
			// Demoted first, so that it stops campaigning; removed once it
			// knows (the non-voter branch above).
			c.log.Info("demoting replica before removing it", "group", g.ID(), "node", id)
			return true, g.DemoteVoter(ctx, id)
		}
		c.log.Info("removing replica", "group", g.ID(), "node", id)
		return true, g.RemoveServer(ctx, id)
	}
	return false, nil
}

// raftAddrOf returns the address g's configuration gives node id.
func (c *Cluster) raftAddrOf(g *shard.Group, id string) string {
	f := g.Raft().GetConfiguration()
	if f.Error() != nil {
		return ""
	}
	for _, s := range f.Configuration().Servers {
		if string(s.ID) == id {
			return string(s.Address)
		}
	}
	return ""
}

// knowsAll reports whether gossip has told this node of every member of a
// group. Until the view settles, a member it never heard of is not taken for
// gone: the view is likely incomplete (gossip not joined yet), and acting on
// it would remove healthy replicas.
func (v nodeView) knowsAll(lists ...[]string) bool {
	if v.settled {
		return true
	}
	for _, ids := range lists {
		for _, id := range ids {
			if !v.known[id] {
				return false
			}
		}
	}
	return true
}

// caughtUp asks a non-voter how far it has applied.
func (c *Cluster) caughtUp(ctx context.Context, g *shard.Group, n NodeInfo) (bool, error) {
	resp, err := c.call(ctx, n.RaftAddr, &rpcRequest{Op: opApplied, Group: g.ID()})
	if err != nil {
		return false, err
	}
	return resp.Index+catchUpLag >= g.AppliedIndex(), nil
}

// reconcileMeta keeps every eligible node in the meta group: voters up to
// MaxMetaVoters, the rest non-voters; nodes gone past the grace period or
// drained are removed.
func (c *Cluster) reconcileMeta(ctx context.Context, v nodeView) error {
	eligible, present := v.candidates, v.present
	if changed, err := c.readdress(ctx, c.metaG, v); changed || err != nil {
		return err
	}
	voters, nonvoters, err := c.metaG.Voters()
	if err != nil {
		return err
	}
	for _, id := range append(append([]string{}, voters...), nonvoters...) {
		gone := (v.known[id] || v.settled) && !present[id]
		if !gone && contains(voters, id) && !liveMajorityWithout(voters, id, v) {
			continue // a drained voter stays while the meta group could not elect without it
		}
		left := v.draining[id] && c.meta.NodeState(id) == NodeLeft
		if left && id == c.cfg.NodeID && len(voters) > 1 {
			// Drained while leading the meta group: the next leader removes it.
			c.log.Info("handing over meta leadership: this node was drained")
			return c.metaG.Raft().LeadershipTransfer().Error()
		}
		if (gone || left) && id != c.cfg.NodeID {
			if left && v.alive[id] {
				// A drained node still running is demoted first and removed
				// once it knows (as in a data group, evict.go): removed as a
				// voter, it never learns of it and campaigns until stopped.
				if contains(voters, id) {
					c.log.Info("demoting drained node before removing it from the meta group", "node", id)
					return c.metaG.DemoteVoter(ctx, id)
				}
				if addr := c.raftAddrOf(c.metaG, id); addr != "" && !c.knowsDemotion(ctx, c.metaG, id, addr) {
					return nil
				}
			}
			c.log.Info("removing node from the meta group", "node", id)
			return c.metaG.RemoveServer(ctx, id)
		}
	}
	if len(voters) < MaxMetaVoters {
		for _, id := range nonvoters {
			if n, ok := eligible[id]; ok {
				return c.metaG.AddVoter(ctx, id, n.RaftAddr)
			}
		}
	}
	ids := make([]string, 0, len(eligible))
	for id := range eligible {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !contains(voters, id) && !contains(nonvoters, id) {
			if len(voters) < MaxMetaVoters {
				return c.metaG.AddVoter(ctx, id, eligible[id].RaftAddr)
			}
			return c.metaG.AddNonvoter(ctx, id, eligible[id].RaftAddr)
		}
	}
	return nil
}
