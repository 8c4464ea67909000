package cluster

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/raft"

	"github.com/hebbdb/hebb/shard"
)

// NodeStatus is one node of GET /admin/v1/cluster.
type NodeStatus struct {
	NodeID     string `json:"node_id"`
	HTTPAddr   string `json:"http_addr"`
	RaftAddr   string `json:"raft_addr"`
	GossipAddr string `json:"gossip_addr"`
	Status     string `json:"status"`
}

// GroupStatus is one data group of GET /admin/v1/cluster.
type GroupStatus struct {
	GroupID      uint32   `json:"group_id"`
	LeaderNodeID *string  `json:"leader_node_id"`
	Replicas     []string `json:"replicas"`
	AppliedIndex uint64   `json:"applied_index"`
}

// MetaStatus is the meta group of GET /admin/v1/cluster.
type MetaStatus struct {
	LeaderNodeID *string  `json:"leader_node_id"`
	Voters       []string `json:"voters"`
}

// AdminStatus is the body of GET /admin/v1/cluster (operator.md §3).
type AdminStatus struct {
	Nodes  []NodeStatus  `json:"nodes"`
	Meta   MetaStatus    `json:"meta"`
	Groups []GroupStatus `json:"groups"`
}

// Status summarises health for the readiness probe and the admin API.
type Status struct {
	MetaLeader       bool
	Groups           int
	GroupsWithLeader int
	// Replaying counts this node's replicas (meta included) that have not
	// yet applied the log they had on disk at start (shard.Group.CaughtUp);
	// the readiness probe waits for none.
	Replaying int
	// StorageFailing counts this node's replicas whose last log append
	// failed (shard.Group.StorageFailing): the node is not ready.
	StorageFailing int
	Admin          AdminStatus
}

// Placement is the body of GET /admin/v1/placement.
type Placement struct {
	Tenant       string   `json:"tenant"`
	GroupID      uint32   `json:"group_id"`
	LeaderNodeID *string  `json:"leader_node_id"`
	Replicas     []string `json:"replicas"`
}

func leaderOf(r *raft.Raft) *string {
	_, id := r.LeaderWithID()
	if id == "" {
		return nil
	}
	s := string(id)
	return &s
}

func replicasOf(r *raft.Raft) []string {
	out := []string{}
	f := r.GetConfiguration()
	if f.Error() != nil {
		return out
	}
	for _, s := range f.Configuration().Servers {
		if s.Suffrage == raft.Voter {
			out = append(out, string(s.ID))
		}
	}
	return out
}

// Status reports this node's view of the cluster.
func (c *Cluster) Status() Status {
	st := Status{Groups: c.info.Groups}
	mr := c.metaG.Raft()
	st.Admin.Meta = MetaStatus{LeaderNodeID: leaderOf(mr), Voters: replicasOf(mr)}
	st.MetaLeader = st.Admin.Meta.LeaderNodeID != nil
	st.Replaying = c.Replaying()
	if c.metaG.StorageFailing() {
		st.StorageFailing++
	}
	st.Admin.Groups = make([]GroupStatus, 0, c.info.Groups)
	for g := 1; g <= c.info.Groups; g++ {
		if c.groups[g].StorageFailing() {
			st.StorageFailing++
		}
		gs := c.groupStatus(c.groups[g])
		if gs.LeaderNodeID != nil {
			st.GroupsWithLeader++
		}
		st.Admin.Groups = append(st.Admin.Groups, gs)
	}
	st.Admin.Nodes = c.nodeStatuses(st.Admin.Groups)
	return st
}

// withUnseen adds to nodes (what gossip has seen since this node started)
// the nodes the meta group records or that hold a replica but gossip has
// not seen: after a restart of the cluster without one of its nodes, that
// node, still a voter and a replica of every group, was in no node's list,
// not even as dead; and a node that joined later did not list those that
// had left. They are listed dead (left when drained), with the Raft
// address the meta group's configuration gives.
func (c *Cluster) withUnseen(nodes []NodeStatus, groups []GroupStatus) []NodeStatus {
	listed := map[string]bool{}
	for _, n := range nodes {
		listed[n.NodeID] = true
	}
	addrs := map[string]string{}
	var ids []string
	if f := c.metaG.Raft().GetConfiguration(); f.Error() == nil {
		for _, srv := range f.Configuration().Servers {
			addrs[string(srv.ID)] = string(srv.Address)
			ids = append(ids, string(srv.ID))
		}
	}
	for _, g := range groups {
		ids = append(ids, g.Replicas...)
	}
	for id := range c.meta.DrainingNodes() {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if listed[id] {
			continue
		}
		status := StatusDead
		if c.meta.NodeState(id) == NodeLeft {
			status = StatusLeft
		}
		nodes = append(nodes, NodeStatus{NodeID: id, RaftAddr: addrs[id], Status: status})
	}
	slices.SortFunc(nodes, func(a, b NodeStatus) int { return strings.Compare(a.NodeID, b.NodeID) })
	return nodes
}

// replaying reports whether g is a group this node holds a replica of that
// is still applying the log it had at start. A group the node is no longer
// a member of learns no commit index, so it is not waited for.
// Replaying counts this node's replicas (meta included) that have not yet
// applied the log they had on disk at start (Status.Replaying), asking no
// other node: Status also asks the leaders of groups held elsewhere.
func (c *Cluster) Replaying() int {
	n := 0
	if c.replaying(c.metaG) {
		n++
	}
	for g := 1; g <= c.info.Groups; g++ {
		if c.replaying(c.groups[g]) {
			n++
		}
	}
	return n
}

func (c *Cluster) replaying(g *shard.Group) bool {
	return !g.CaughtUp() && (c.members == nil || c.hosts(g))
}

// Placement tells where a tenant lives.
func (c *Cluster) Placement(tenant string) Placement {
	gs := c.groupStatus(c.groups[c.GroupOf(tenant)])
	return Placement{Tenant: tenant, GroupID: gs.GroupID, LeaderNodeID: gs.LeaderNodeID, Replicas: gs.Replicas}
}

// remoteStatusTimeout bounds the questions about a group this node holds
// no replica of.
const remoteStatusTimeout = time.Second

// groupStatus is g as this node's replica sees it. A node without a replica
// of g hears none of its heartbeats, so it asks the group's leader instead
// (then Replicas lists non-voters too).
func (c *Cluster) groupStatus(g *shard.Group) GroupStatus {
	r := g.Raft()
	gs := GroupStatus{GroupID: g.ID(), LeaderNodeID: leaderOf(r), Replicas: replicasOf(r),
		AppliedIndex: g.AppliedIndex()}
	if c.members == nil || c.hosts(g) {
		return gs
	}
	ctx, cancel := context.WithTimeout(context.Background(), remoteStatusTimeout)
	defer cancel()
	id, addr := c.leaderOf(ctx, g)
	if addr == "" {
		return gs
	}
	gs.LeaderNodeID = &id
	if resp, err := c.call(ctx, addr, &rpcRequest{Op: opConfig, Group: g.ID()}); err == nil {
		gs.Replicas = resp.Voters
	}
	if resp, err := c.call(ctx, addr, &rpcRequest{Op: opApplied, Group: g.ID()}); err == nil {
		gs.AppliedIndex = resp.Index
	}
	return gs
}

// nodeStatuses lists the nodes: those gossip has seen since this node
// started, then those only the meta group or groups' replicas name.
func (c *Cluster) nodeStatuses(groups []GroupStatus) []NodeStatus {
	if c.members == nil {
		return []NodeStatus{{NodeID: c.cfg.NodeID, HTTPAddr: c.cfg.HTTPAddr, RaftAddr: c.node.Addr(),
			GossipAddr: c.cfg.GossipAddr, Status: StatusAlive}}
	}
	var out []NodeStatus
	for _, m := range c.members.snapshot() {
		if c.foreign(m.info) {
			continue
		}
		status := m.status
		if c.meta.NodeState(m.info.NodeID) == NodeLeft {
			status = StatusLeft
		}
		out = append(out, NodeStatus{NodeID: m.info.NodeID, HTTPAddr: m.info.HTTPAddr, RaftAddr: m.info.RaftAddr,
			GossipAddr: m.info.GossipAddr, Status: status})
	}
	return c.withUnseen(out, groups)
}
