package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// NodeInfo is what a node tells the others about itself through gossip.
type NodeInfo struct {
	NodeID     string `json:"node_id"`
	RaftAddr   string `json:"raft_addr"`
	HTTPAddr   string `json:"http_addr"`
	GossipAddr string `json:"gossip_addr"`
	// Embedder and Dim: the node's embedder identity and dimension; a node
	// whose differ from the cluster record never receives a replica.
	Embedder string `json:"embedder,omitempty"`
	Dim      int    `json:"dim,omitempty"`
	// ClusterID: the cluster the node belongs to (clusterid.go); empty on a
	// node that has not joined yet.
	ClusterID string `json:"cluster_id,omitempty"`
}

// Member states of GET /admin/v1/cluster.
const (
	StatusAlive   = "alive"
	StatusSuspect = "suspect"
	StatusDead    = "dead"
	StatusLeft    = "left"
)

type memberState struct {
	info   NodeInfo
	status string
	since  time.Time // when status last changed
}

// membership runs memberlist and keeps every node ever seen with its state.
type membership struct {
	self    NodeInfo
	list    *memberlist.Memberlist
	log     *slog.Logger
	mu      sync.Mutex
	members map[string]*memberState
	changed chan struct{} // poked on every change
	started time.Time
	// claimant: the last node seen gossiping this node's ID from another
	// address (a copy of this data dir, or this node's previous run).
	claimant *NodeInfo
}

// newMembership starts gossip; with key (32 bytes), every gossip message is
// encrypted and authenticated with it, and others are dropped.
func newMembership(self NodeInfo, key []byte, logger *slog.Logger) (*membership, error) {
	m := &membership{self: self, log: logger, members: map[string]*memberState{},
		changed: make(chan struct{}, 1), started: time.Now()}
	m.members[self.NodeID] = &memberState{info: self, status: StatusAlive, since: time.Now()}
	host, portStr, err := net.SplitHostPort(self.GossipAddr)
	if err != nil {
		return nil, fmt.Errorf("bad --gossip-addr %q: %w", self.GossipAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("bad --gossip-addr port %q: %w", portStr, err)
	}
	cfg := memberlist.DefaultLANConfig()
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		cfg = memberlist.DefaultLocalConfig()
	}
	// memberlist sends a broadcast RetransmitMult*ceil(log10(n+1)) times in
	// all, counting each target of a gossip round: the local config's 2 let a
	// join or a death reach only some nodes of a small cluster, the rest
	// learning it at the next push/pull (15 s later), and group leaders
	// with a stale view moved replicas back and forth meanwhile.
	cfg.RetransmitMult = max(cfg.RetransmitMult, 4)
	// A node restarted on another address (a container given a new IP, a
	// changed --gossip-addr) keeps its name; memberlist's default refuses
	// the name at a new address forever, so the node could never be reached
	// again. Once the old address is dead, the name moves.
	cfg.DeadNodeReclaimTime = time.Second
	cfg.Name = self.NodeID
	cfg.BindAddr, cfg.BindPort = host, port
	cfg.AdvertiseAddr, cfg.AdvertisePort = host, port
	cfg.Delegate = &metaDelegate{m: m}
	cfg.Events = &eventDelegate{m: m}
	cfg.Conflict = &conflictDelegate{m: m}
	cfg.Logger = log.New(io.Discard, "", 0)
	cfg.SecretKey = key
	list, err := memberlist.Create(cfg)
	if err != nil {
		return nil, fmt.Errorf("cannot start gossip on %s: %w", self.GossipAddr, err)
	}
	m.list = list
	if port == 0 {
		m.self.GossipAddr = net.JoinHostPort(host, strconv.Itoa(int(list.LocalNode().Port)))
		m.members[self.NodeID].info = m.self
		// Create gossiped the meta with port 0: publish the bound port.
		if err := list.UpdateNode(time.Second); err != nil {
			_ = list.Shutdown()
			return nil, fmt.Errorf("cannot publish gossip address %s: %w", m.self.GossipAddr, err)
		}
	}
	return m, nil
}

// join contacts existing nodes by their gossip addresses.
func (m *membership) join(addrs []string) error {
	if len(addrs) == 0 {
		return nil
	}
	n, err := m.list.Join(addrs)
	if n == 0 && err != nil {
		return fmt.Errorf("cannot join the cluster through %v%s: %w", addrs, keyHint(err), err)
	}
	return nil
}

// keyHint names the likely cause of a join that failed on encryption:
// memberlist says only "no installed keys could decrypt the message" or
// "remote state is encrypted and encryption is not configured".
func keyHint(err error) string {
	if s := err.Error(); strings.Contains(s, "decrypt") || strings.Contains(s, "encrypt") {
		return " (the cluster key differs: give every node the same HEBB_CLUSTER_KEY, or none)"
	}
	return ""
}

func (m *membership) set(n *memberlist.Node, status string) {
	var info NodeInfo
	if err := json.Unmarshal(n.Meta, &info); err != nil || info.NodeID == "" {
		return
	}
	m.mu.Lock()
	st := m.members[info.NodeID]
	if st == nil {
		st = &memberState{}
		m.members[info.NodeID] = st
	}
	if st.status != status {
		st.since = time.Now()
	}
	st.info, st.status = info, status
	m.mu.Unlock()
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// snapshot returns every known member, sorted by node ID, with suspect
// states read live from memberlist.
func (m *membership) snapshot() []memberState {
	suspect := map[string]bool{}
	for _, n := range m.list.Members() {
		if n.State == memberlist.StateSuspect {
			suspect[n.Name] = true
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]memberState, 0, len(m.members))
	for _, st := range m.members {
		s := *st
		if s.status == StatusAlive && suspect[s.info.NodeID] {
			s.status = StatusSuspect
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].info.NodeID < out[j].info.NodeID })
	return out
}

func (m *membership) info(nodeID string) (NodeInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.members[nodeID]
	if st == nil {
		return NodeInfo{}, false
	}
	return st.info, true
}

func (m *membership) leave() {
	_ = m.list.Leave(time.Second)
	_ = m.list.Shutdown()
}

type metaDelegate struct{ m *membership }

// setSelf changes what this node gossips about itself.
func (m *membership) setSelf(info NodeInfo, timeout time.Duration) error {
	m.mu.Lock()
	m.self = info
	m.members[info.NodeID].info = info
	m.mu.Unlock()
	if err := m.list.UpdateNode(timeout); err != nil {
		return fmt.Errorf("cannot gossip this node's new state: %w", err)
	}
	return nil
}

func (d *metaDelegate) NodeMeta(limit int) []byte {
	d.m.mu.Lock()
	self := d.m.self
	d.m.mu.Unlock()
	b, _ := json.Marshal(self)
	if len(b) > limit {
		return nil
	}
	return b
}
func (d *metaDelegate) NotifyMsg([]byte)                {}
func (d *metaDelegate) GetBroadcasts(int, int) [][]byte { return nil }
func (d *metaDelegate) LocalState(bool) []byte          { return nil }
func (d *metaDelegate) MergeRemoteState([]byte, bool)   {}

type eventDelegate struct{ m *membership }

func (e *eventDelegate) NotifyJoin(n *memberlist.Node)   { e.m.set(n, StatusAlive) }
func (e *eventDelegate) NotifyUpdate(n *memberlist.Node) { e.m.set(n, StatusAlive) }
func (e *eventDelegate) NotifyLeave(n *memberlist.Node) {
	if n.State == memberlist.StateLeft {
		e.m.set(n, StatusLeft)
		return
	}
	e.m.set(n, StatusDead)
}

// conflictDelegate hears of two nodes gossiping one name from two addresses.
type conflictDelegate struct{ m *membership }

func (d *conflictDelegate) NotifyConflict(existing, other *memberlist.Node) {
	d.m.mu.Lock()
	self := d.m.self.NodeID
	d.m.mu.Unlock()
	if existing.Name != self {
		return
	}
	var info NodeInfo
	if err := json.Unmarshal(other.Meta, &info); err != nil || info.NodeID == "" {
		info = NodeInfo{NodeID: other.Name, GossipAddr: other.Address()}
	}
	d.m.log.Error("another node gossips this node's id from another address: two processes share one node id "+
		"(a copied data dir?) unless it is this node's previous run", "node", info.NodeID,
		"gossip_addr", info.GossipAddr, "raft_addr", info.RaftAddr)
	d.m.mu.Lock()
	d.m.claimant = &info
	d.m.mu.Unlock()
}

// lastClaimant returns the last node seen gossiping this node's ID from
// another address, if any.
func (m *membership) lastClaimant() (NodeInfo, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.claimant == nil {
		return NodeInfo{}, false
	}
	return *m.claimant, true
}
