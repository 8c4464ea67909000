package cluster

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/shard"
)

// Node-to-node RPC runs over the shard's multiplexed listener (the RPC
// stream kind): one gob request and one gob response per connection.
const (
	opPropose    = "propose"
	opReadIndex  = "readindex"
	opJoin       = "join"
	opMembership = "membership"
	opApplied    = "applied"
	opHTTP       = "http"
	opLeader     = "leader"
	opRoomsOf    = "roomsof"
	opChatRooms  = "chatrooms"
	opInRoom     = "inroom"
	opChatWatch  = "chatwatch"
	opConfig     = "config"
	opSelf       = "self"
	opSync       = "sync"
)

type rpcRequest struct {
	Op       string
	Org      string                 // roomsof
	Now      int64                  // roomsof
	Filter   raftfsm.ChatRoomFilter // chatrooms
	Atom     raftfsm.ID             // inroom
	Watch    ChatWatch              // chatwatch
	Group    uint32
	Cmd      []byte
	Node     NodeInfo
	Embedder string // join: the joining node's embedder identity and dimension
	Dim      int
	Change   string // membership: add_nonvoter, add_voter, remove
	Deadline time.Time
	HTTP     []byte
}

type rpcResponse struct {
	Result    any
	Index     uint64
	Leader    NodeInfo               // leader: the group's leader as the answering node sees it
	Rooms     []raftfsm.RoomView     // roomsof
	Chats     []raftfsm.ChatRoomView // chatrooms
	Found     bool                   // inroom
	Watch     ChatWatchResult        // chatwatch
	Voters    []string               // config: voters then non-voters
	Nonvoters []string               // config: the non-voters
	Self      NodeInfo               // self: the answering node
	State     string                 // self: the asking node's recorded state (NodeLeft, ...)

	Err  string
	Kind string // sentinel name of Err
	HTTP []byte
}

func init() {
	for _, v := range []any{&raftfsm.WriteResults{}, &raftfsm.FeedbackResult{}, &raftfsm.DeleteAtomResult{},
		&raftfsm.DeleteDomainResult{}, &raftfsm.ConsolidateResult{}, &raftfsm.RoomResult{},
		ClusterInfo{}, Org{}, KeyInfo{}, SettingsOverride{}, &remoteError{}} {
		gob.Register(v)
	}
}

// errDial marks a request that never reached the other node, so retrying
// it elsewhere cannot apply it twice.
var errDial = errors.New("cluster: dial failed")

// errNoAnswer marks a request sent (or perhaps sent) whose answer never
// came: the other node may have acted on it.
var errNoAnswer = errors.New("cluster: no answer")

// remoteError carries an error apply result (a meta command's failure).
type remoteError struct {
	Kind string
	Msg  string
}

func (e *remoteError) Error() string { return e.Msg }

var sentinels = map[string]error{
	"not_leader": shard.ErrNotLeader, "timeout": shard.ErrTimeout, "shutdown": shard.ErrShutdown,
	"unknown_group": shard.ErrUnknownGroup, "unavailable": ErrUnavailable,
	"unknown_org": ErrUnknownOrg, "unknown_key": ErrUnknownKey, "invalid_command": ErrInvalidCommand,
	"org_exists": ErrOrgExists, "key_exists": ErrKeyExists, "not_hosted": ErrNotHosted,
	"storage": shard.ErrStorage, "embedder_mismatch": ErrEmbedderMismatch,
}

func kindOf(err error) string {
	for name, s := range sentinels {
		if errors.Is(err, s) {
			return name
		}
	}
	return ""
}

// Unwrap maps a remote error back onto its sentinel for errors.Is.
func (e *remoteError) Unwrap() error { return sentinels[e.Kind] }

func errorOf(kind, msg string) error {
	if msg == "" {
		return nil
	}
	return &remoteError{Kind: kind, Msg: msg}
}

// call sends one request to the node at addr, over a pooled connection
// when there is one (rpcpool.go).
func (c *Cluster) call(ctx context.Context, addr string, req *rpcRequest) (*rpcResponse, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(shard.DefaultTimeout)
	}
	req.Deadline = deadline
	if rc := c.pool.get(addr); rc != nil {
		resp, usable, err := c.exchange(ctx, addr, rc, req, deadline)
		if err == nil {
			return c.answer(addr, rc, resp, usable)
		}
		_ = rc.conn.Close()
		if ctx.Err() != nil || !idempotent[req.Op] {
			return nil, err
		}
		// The other node dropped it: once more on a fresh connection.
	}
	conn, err := c.node.DialRPC(addr, time.Until(deadline))
	if err != nil {
		return nil, fmt.Errorf("%w: %w: cannot reach %s: %w", ErrUnavailable, errDial, addr, err)
	}
	rc := newRPCConn(conn)
	resp, usable, err := c.exchange(ctx, addr, rc, req, deadline)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return c.answer(addr, rc, resp, usable)
}

// exchange sends req on rc and reads the answer. A cancelled caller (a
// closed realtime connection's long poll) stops waiting at once instead of
// at the deadline; rc is then no longer usable (its deadline is spent), but
// an answer read in full is still returned.
func (c *Cluster) exchange(ctx context.Context, addr string, rc *rpcConn, req *rpcRequest, deadline time.Time) (resp *rpcResponse, usable bool, err error) {
	_ = rc.conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = rc.conn.SetDeadline(time.Now()) })
	if err := rc.send(req); err != nil {
		stop()
		return nil, false, fmt.Errorf("%w: %w: cannot send to %s: %w", ErrUnavailable, errNoAnswer, addr, err)
	}
	resp = &rpcResponse{}
	err = rc.dec.Decode(resp)
	usable = stop()
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w from %s: %w", ErrUnavailable, errNoAnswer, addr, err)
	}
	return resp, usable, nil
}

// answer returns resp's result, keeping rc for reuse when keep is set, and
// closing it otherwise.
func (c *Cluster) answer(addr string, rc *rpcConn, resp *rpcResponse, keep bool) (*rpcResponse, error) {
	if keep {
		c.pool.put(addr, rc)
	} else {
		_ = rc.conn.Close()
	}
	if re, ok := resp.Result.(*remoteError); ok {
		resp.Result = re
	}
	return resp, errorOf(resp.Kind, resp.Err)
}

// serveRPC answers the requests of one connection, one at a time, until the
// other node closes it or leaves it idle for serveIdle.
func (c *Cluster) serveRPC(conn net.Conn) {
	defer conn.Close()
	rc := newRPCConn(conn)
	for {
		_ = conn.SetDeadline(time.Now().Add(serveIdle))
		var req rpcRequest
		if err := rc.dec.Decode(&req); err != nil {
			return
		}
		_ = conn.SetDeadline(time.Now().Add(shard.DefaultTimeout + time.Second))
		if rc.send(c.serveOne(&req)) != nil {
			return
		}
	}
}

// serveOne answers one request.
func (c *Cluster) serveOne(req *rpcRequest) *rpcResponse {
	ctx, cancel := context.WithDeadline(context.Background(), req.Deadline)
	defer cancel()
	resp := c.handle(ctx, req)
	if resp.Err == "" && resp.Kind == "" {
		if e, ok := resp.Result.(error); ok {
			resp.Result = &remoteError{Kind: kindOf(e), Msg: e.Error()}
		}
	}
	return resp
}

func (c *Cluster) handle(ctx context.Context, req *rpcRequest) *rpcResponse {
	resp := &rpcResponse{}
	fail := func(err error) *rpcResponse {
		resp.Err, resp.Kind = err.Error(), kindOf(err)
		return resp
	}
	if req.Op == opJoin {
		if err := c.admit(ctx, req); err != nil {
			return fail(err)
		}
		return resp
	}
	if req.Op == opSelf {
		resp.Self = c.me()
		if req.Node.NodeID != "" {
			resp.State = c.meta.NodeState(req.Node.NodeID)
		}
		return resp
	}
	if req.Op == opHTTP {
		h := c.httpHandler.Load()
		if h == nil {
			return fail(ErrUnavailable)
		}
		resp.HTTP = (*h)(req.HTTP)
		return resp
	}
	g := c.node.Group(req.Group)
	if g == nil {
		return fail(shard.ErrUnknownGroup)
	}
	var err error
	switch req.Op {
	case opPropose:
		resp.Result, err = g.Propose(ctx, req.Cmd)
	case opReadIndex:
		resp.Index, err = g.LeaderReadIndex(ctx)
	case opApplied:
		resp.Index = g.AppliedIndex()
	case opSync:
		if g.StorageFailing() { // it cannot store the entries to catch up: say so now, not at the deadline
			err = fmt.Errorf("%w: this node cannot write its log", ErrStorage)
		} else {
			err = c.barrier(ctx, g)
		}
	case opLeader:
		if c.hosts(g) {
			resp.Leader.NodeID, resp.Leader.RaftAddr = g.Leader()
		}
	case opConfig:
		var v, nv []string
		if v, nv, err = g.Voters(); err == nil {
			resp.Voters, resp.Nonvoters = append(v, nv...), nv
		}
	case opRoomsOf:
		if err = c.barrier(ctx, g); err == nil {
			resp.Rooms = c.fsms[g.ID()].RoomsOf(req.Org, req.Now)
		}
	case opChatRooms:
		if err = c.barrier(ctx, g); err == nil {
			resp.Chats = c.fsms[g.ID()].ChatRooms(&req.Filter)
		}
	case opInRoom:
		if err = c.barrier(ctx, g); err == nil {
			resp.Found = c.fsms[g.ID()].InRoom(req.Org, req.Atom)
		}
	case opChatWatch:
		if !c.hosts(g) { // a stale leader lookup
			err = &NotHostedError{Tenant: req.Watch.Room}
		} else {
			resp.Watch, err = c.watchLocal(ctx, g, req.Watch)
		}
	case opMembership:
		err = c.changeLocal(ctx, g, req.Change, req.Node)
	default:
		err = fmt.Errorf("unknown rpc op %q", req.Op)
	}
	if err != nil {
		return fail(err)
	}
	return resp
}

func (c *Cluster) changeLocal(ctx context.Context, g *shard.Group, change string, n NodeInfo) error {
	switch change {
	case "add_nonvoter":
		return g.AddNonvoter(ctx, n.NodeID, n.RaftAddr)
	case "add_voter":
		return g.AddVoter(ctx, n.NodeID, n.RaftAddr)
	case "remove":
		return g.RemoveServer(ctx, n.NodeID)
	}
	return fmt.Errorf("unknown membership change %q", change)
}
