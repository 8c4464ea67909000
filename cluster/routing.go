package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/shard"
)

// leaderWait is how often a request without a known leader looks again.
const leaderWait = 50 * time.Millisecond

// propose replicates cmd in group g from any node: locally when this node
// leads g, else over the node transport to the leader. Until the deadline
// it tries again, leaderWait apart, whatever was refused before it reached
// the log: a missing leader, one that cannot be dialled, one that no longer
// runs g (a node stopping), and one that no longer leads (leadership moved,
// an election or a transfer under way: shard.ErrNotLeader is returned only
// for a command that never reached the log). Then the error is
// ErrUnavailable. An answer lost after the command was sent is not tried
// again: it may have been applied.
func (c *Cluster) propose(ctx context.Context, g *shard.Group, cmd []byte) (any, error) {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	for {
		out, err := c.proposeOnce(ctx, g, cmd)
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, shard.ErrNotLeader) && !errors.Is(err, errNoLeader) && !errors.Is(err, errDial) &&
			!errors.Is(err, shard.ErrUnknownGroup) {
			return nil, maybeApplied(unavailable(err))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: group %d: %w", ErrUnavailable, g.ID(), err)
		case <-time.After(leaderWait):
		}
	}
}

// maybeApplied marks with ErrOutcomeUnknown an error after which the
// command may have been applied: the leader took it but did not confirm it
// in time (shard.ErrTimeout, here or on the leader that answered) or
// stopped meanwhile (shard.ErrShutdown), or its answer was lost
// (errNoAnswer).
func maybeApplied(err error) error {
	if errors.Is(err, shard.ErrTimeout) || errors.Is(err, shard.ErrShutdown) || errors.Is(err, errNoAnswer) {
		return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	return err
}

var errNoLeader = errors.New("cluster: no leader known")

// errLeftGroup: a barrier found this node no longer holds the group.
var errLeftGroup = errors.New("cluster: this node left the group")

func (c *Cluster) proposeOnce(ctx context.Context, g *shard.Group, cmd []byte) (any, error) {
	if g.IsLeader() {
		return g.Propose(ctx, cmd)
	}
	id, addr := c.cachedLeader(ctx, g)
	if addr == "" || id == c.cfg.NodeID {
		return nil, errNoLeader
	}
	forwarded.WithLabelValues("propose").Inc()
	resp, err := c.call(ctx, addr, &rpcRequest{Op: opPropose, Group: g.ID(), Cmd: cmd})
	if err != nil {
		c.leaders.Delete(g.ID()) // propose retries a moved leader
		return nil, err
	}
	return resp.Result, nil
}

// barrier makes the local replica of g safe for a linearizable read: on
// the leader a read index; on a follower the leader's read index, then a
// wait until the local state machine applied it.
//
// A replica removed from g without learning it finds no leader, or waits
// for an index the leader no longer sends it; once the eviction check marks
// it (evict.go) the barrier stops waiting and returns errLeftGroup, so the
// caller asks the group's leader instead of failing at the deadline.
func (c *Cluster) barrier(ctx context.Context, g *shard.Group) error {
	ctx, cancel := withDeadline(ctx)
	defer cancel()
	for {
		err := c.barrierOnce(ctx, g)
		if err == nil || !(errors.Is(err, shard.ErrNotLeader) || errors.Is(err, errNoLeader) || errors.Is(err, errDial) ||
			errors.Is(err, shard.ErrUnknownGroup)) {
			return unavailable(err)
		}
		if c.leftGroup(g) {
			return fmt.Errorf("%w: group %d", errLeftGroup, g.ID())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: group %d: %w", ErrUnavailable, g.ID(), err)
		case <-time.After(leaderWait):
		}
	}
}

func (c *Cluster) barrierOnce(ctx context.Context, g *shard.Group) error {
	if g.IsLeader() {
		return g.ReadIndex(ctx)
	}
	id, addr := g.Leader()
	if addr == "" || id == c.cfg.NodeID {
		return errNoLeader
	}
	resp, err := c.call(ctx, addr, &rpcRequest{Op: opReadIndex, Group: g.ID()})
	if err != nil {
		return err
	}
	return c.waitIndex(ctx, g, resp.Index)
}

// leftGroup reports whether this node learned it was removed from g: the
// eviction check marked g for the configuration it still has.
func (c *Cluster) leftGroup(g *shard.Group) bool {
	voters, nonvoters, err := g.Voters()
	return err == nil && c.evictedFrom(g.ID(), voters, nonvoters)
}

// leftPoll is how often a wait for the leader's read index checks whether
// this node left the group.
const leftPoll = 250 * time.Millisecond

// waitIndex waits until g's local replica applied idx, in slices of
// leftPoll, returning errLeftGroup once this node learns it left g.
func (c *Cluster) waitIndex(ctx context.Context, g *shard.Group, idx uint64) error {
	for {
		slice, cancel := context.WithTimeout(ctx, leftPoll)
		err := g.WaitIndex(slice, idx)
		cancel()
		if err == nil || ctx.Err() != nil || slice.Err() == nil {
			return err
		}
		if c.leftGroup(g) {
			return fmt.Errorf("%w: group %d", errLeftGroup, g.ID())
		}
	}
}

// Hosts reports whether this node holds a replica of tenant's group, so
// that ReadFSM can read it here.
func (c *Cluster) Hosts(tenant string) bool { return c.hosts(c.groups[c.GroupOf(tenant)]) }

// hosts reports whether this node holds a replica (voter or non-voter) of g:
// its configuration names it, and the group's leader has not removed it
// without its learning (evict.go).
func (c *Cluster) hosts(g *shard.Group) bool {
	voters, nonvoters, err := g.Voters()
	if err != nil || !(contains(voters, c.cfg.NodeID) || contains(nonvoters, c.cfg.NodeID)) {
		return false
	}
	return !c.evictedFrom(g.ID(), voters, nonvoters)
}

func withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, shard.DefaultTimeout)
}

// ProposeMeta replicates a meta command. Through a node that follows the
// meta group it returns once the local replica applied the command too, as
// the leader's does: callers read meta state locally without a barrier
// (sessions, keys), so a chat session created through a follower was
// refused by that follower for the few milliseconds its apply lagged. The
// command is committed when the barrier runs, so a barrier that fails
// does not fail the call. Except for the background counters (unspread),
// it also waits for every other live node to apply it (spreadMeta).
func (c *Cluster) ProposeMeta(ctx context.Context, cmd []byte) (any, error) {
	out, err := c.propose(ctx, c.metaG, cmd)
	if err == nil && !c.metaG.IsLeader() && c.hosts(c.metaG) {
		if berr := c.barrier(ctx, c.metaG); berr != nil {
			c.log.Warn("meta write committed; the local replica may lag", "err", berr)
		}
	}
	if err == nil && len(cmd) > 0 && !unspread[cmd[0]] {
		c.spreadMeta(ctx)
	}
	return out, err
}

// SyncMeta returns once the local meta replica has applied every command
// committed before the call (a read barrier on the meta group): a lookup
// that missed something another node just wrote finds it after it.
func (c *Cluster) SyncMeta(ctx context.Context) error { return c.barrier(ctx, c.metaG) }

// Propose replicates cmd in tenant's group.
func (c *Cluster) Propose(ctx context.Context, tenant string, cmd []byte) (any, error) {
	return c.propose(ctx, c.groups[c.GroupOf(tenant)], cmd)
}

// ProposeAll replicates cmd in every data group, in group order.
func (c *Cluster) ProposeAll(ctx context.Context, cmd []byte) ([]any, error) {
	out := make([]any, 0, c.info.Groups)
	for g := 1; g <= c.info.Groups; g++ {
		res, err := c.propose(ctx, c.groups[g], cmd)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// ReadFSM returns tenant's state machine after a linearizable read barrier.
// ErrNotHosted: this node holds no replica, or a follower replica that
// cannot store entries (its disk is full or failing: it would wait for
// entries it cannot have); the caller forwards the request.
func (c *Cluster) ReadFSM(ctx context.Context, tenant string) (*raftfsm.FSM, error) {
	g := c.GroupOf(tenant)
	if gr := c.groups[g]; !c.hosts(gr) || (gr.StorageFailing() && !gr.IsLeader()) {
		return nil, &NotHostedError{Tenant: tenant}
	}
	if err := c.barrier(ctx, c.groups[g]); errors.Is(err, errLeftGroup) {
		return nil, &NotHostedError{Tenant: tenant}
	} else if err != nil {
		return nil, err
	}
	return c.fsms[g], nil
}

// SetHTTPHandler installs the function that answers forwarded HTTP
// requests (raw request bytes in, raw response bytes out).
func (c *Cluster) SetHTTPHandler(h func([]byte) []byte) { c.httpHandler.Store(&h) }

// ForwardHTTP sends a raw HTTP request to a node that hosts tenant's group
// (its leader) and returns the raw response.
func (c *Cluster) ForwardHTTP(ctx context.Context, tenant string, raw []byte) ([]byte, error) {
	g := c.groups[c.GroupOf(tenant)]
	deadline := time.Now().Add(shard.DefaultTimeout)
	retried := false
	for {
		id, addr := c.cachedLeader(ctx, g)
		if addr != "" && id != c.cfg.NodeID {
			forwarded.WithLabelValues("http").Inc()
			resp, err := c.call(ctx, addr, &rpcRequest{Op: opHTTP, HTTP: raw})
			if err == nil && !notHostedAnswer(resp.HTTP) {
				return resp.HTTP, nil
			}
			c.leaders.Delete(g.ID())
			// A request that never reached the node, or that the node
			// refused before doing anything, may go to the leader found
			// afresh; one whose answer was lost may not.
			if !retried && (err == nil || errors.Is(err, errDial)) {
				retried = true
				continue
			}
			if err != nil {
				return nil, unavailable(err)
			}
			return resp.HTTP, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: group %d has no reachable leader", ErrUnavailable, g.ID())
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ErrUnavailable, ctx.Err())
		case <-time.After(leaderWait):
		}
	}
}

// NotHostedError names the tenant whose group this node does not hold.
type NotHostedError struct{ Tenant string }

func (e *NotHostedError) Error() string { return "cluster: group of " + e.Tenant + " not hosted here" }

// Unwrap makes errors.Is(err, ErrNotHosted) hold.
func (e *NotHostedError) Unwrap() error { return ErrNotHosted }

// leaderOf returns the leader of g: from the local replica when this node
// holds one, else as the other nodes see it (a node without a replica hears
// no heartbeats of the group).
func (c *Cluster) leaderOf(ctx context.Context, g *shard.Group) (id, addr string) {
	if id, addr, ok := c.localLeader(g); ok {
		return id, addr
	}
	return c.askLeader(ctx, g)
}

// localLeader returns g's leader as this node knows it; ok is false when
// only the other nodes can tell (a node without a replica hears no
// heartbeats of the group).
func (c *Cluster) localLeader(g *shard.Group) (id, addr string, ok bool) {
	id, addr = g.Leader()
	return id, addr, addr != "" || c.members == nil || c.hosts(g)
}

// cachedLeader is leaderOf for the request paths (proposals and whole
// requests forwarded): the leader of a group this node holds no replica of
// is asked once and cached until a call to it fails or it answers that it
// does not hold the group (NotHostedHeader). Paths that decide membership
// (drain, status, evictions) ask afresh.
func (c *Cluster) cachedLeader(ctx context.Context, g *shard.Group) (id, addr string) {
	if id, addr, ok := c.localLeader(g); ok {
		return id, addr
	}
	if n, ok := c.leaders.Load(g.ID()); ok {
		return n.(NodeInfo).NodeID, n.(NodeInfo).RaftAddr
	}
	if id, addr = c.askLeader(ctx, g); addr != "" {
		c.leaders.Store(g.ID(), NodeInfo{NodeID: id, RaftAddr: addr})
	}
	return id, addr
}

// NotHostedHeader marks the answer of a node that was forwarded a request
// for a group it does not hold (the router sets it): the forwarding node
// then looks for the group's leader again.
const NotHostedHeader = "X-Hebb-Not-Hosted"

// notHostedAnswer reports whether a raw HTTP answer carries NotHostedHeader.
func notHostedAnswer(raw []byte) bool {
	head, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	return bytes.Contains(head, []byte("\r\n"+NotHostedHeader+":"))
}

// askLeader asks the other live nodes for g's leader.
func (c *Cluster) askLeader(ctx context.Context, g *shard.Group) (id, addr string) {
	if c.members == nil {
		return "", ""
	}
	for _, m := range c.members.snapshot() {
		if m.info.NodeID == c.cfg.NodeID || m.status != StatusAlive || c.foreign(m.info) {
			continue
		}
		resp, err := c.call(ctx, m.info.RaftAddr, &rpcRequest{Op: opLeader, Group: g.ID()})
		if err == nil && resp.Leader.RaftAddr != "" {
			return resp.Leader.NodeID, resp.Leader.RaftAddr
		}
		c.log.Debug("leader lookup", "group", g.ID(), "asked", m.info.NodeID, "err", err)
	}
	return "", ""
}

// RoomsOf gathers the rooms org belongs to from every group (scatter and
// gather: any group failing fails the whole answer).
func (c *Cluster) RoomsOf(ctx context.Context, org string, now int64) ([]raftfsm.RoomView, error) {
	var out []raftfsm.RoomView
	err := c.gather(ctx, &rpcRequest{Op: opRoomsOf, Org: org, Now: now}, func(f *raftfsm.FSM) {
		out = append(out, f.RoomsOf(org, now)...)
	}, func(resp *rpcResponse) { out = append(out, resp.Rooms...) })
	return out, err
}

// ChatRoomsOf gathers the live chat rooms filter selects from every data
// group, in group order: a group this node holds is read after a barrier,
// another one is asked of its leader.
func (c *Cluster) ChatRoomsOf(ctx context.Context, filter raftfsm.ChatRoomFilter) ([]raftfsm.ChatRoomView, error) {
	var out []raftfsm.ChatRoomView
	err := c.gather(ctx, &rpcRequest{Op: opChatRooms, Filter: filter}, func(f *raftfsm.FSM) {
		out = append(out, f.ChatRooms(&filter)...)
	}, func(resp *rpcResponse) { out = append(out, resp.Chats...) })
	return out, err
}

// InRoom reports whether atom id lives in a room, looking in every data
// group (asking the leaders of groups this node does not hold).
func (c *Cluster) InRoom(ctx context.Context, org string, id raftfsm.ID) (bool, error) {
	found := false
	err := c.gather(ctx, &rpcRequest{Op: opInRoom, Org: org, Atom: id}, func(f *raftfsm.FSM) {
		found = found || f.InRoom(org, id)
	}, func(resp *rpcResponse) { found = found || resp.Found })
	return found, err
}

// gather visits every data group in order: local reads a group this node
// holds (after a read barrier), remote takes the answer of req sent to the
// leader of one it does not. It fails as a whole on the first group that
// cannot answer.
func (c *Cluster) gather(ctx context.Context, req *rpcRequest, local func(*raftfsm.FSM), remote func(*rpcResponse)) error {
	for gid := 1; gid <= c.info.Groups; gid++ {
		g := c.groups[gid]
		if c.hosts(g) {
			err := c.barrier(ctx, g)
			if err == nil {
				local(c.fsms[gid])
				continue
			}
			if !errors.Is(err, errLeftGroup) {
				return err
			}
		}
		_, addr := c.leaderOf(ctx, g)
		if addr == "" {
			return fmt.Errorf("%w: group %d has no reachable leader", ErrUnavailable, gid)
		}
		r := *req
		r.Group = g.ID()
		resp, err := c.call(ctx, addr, &r)
		if err != nil {
			return unavailable(err)
		}
		remote(resp)
	}
	return nil
}
