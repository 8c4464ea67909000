package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/shard"
)

// MetaGroupID is the Raft group of the meta state; data groups are 1..N.
const MetaGroupID = 0

// Cluster defaults (DESIGN.md §2).
const (
	MaxMetaVoters    = 5
	DefaultDeadGrace = 30 * time.Second
	// DefaultVectorsOnDiskAbove keeps a group's vectors in memory up to
	// 256Ki rows (384 MiB at 384 dimensions).
	DefaultVectorsOnDiskAbove = 1 << 18
)

// Config is the cluster part of `hebb serve`.
type Config struct {
	NodeID     string // empty: read from (or create) DataDir/node-id
	DataDir    string
	RaftAddr   string
	GossipAddr string
	HTTPAddr   string
	Join       []string
	Groups     int // data groups of a new cluster; 0: DefaultGroups (a restart keeps the recorded number)
	Replicas   int
	Embedder   string
	Dim        int
	// SnapshotThreshold overrides the groups' log-size snapshot trigger.
	SnapshotThreshold uint64
	// DeadGrace is how long a node may be dead before its replicas are
	// replaced (default DefaultDeadGrace).
	DeadGrace time.Duration
	// WaitTimeout bounds Start's waits for the cluster (a meta leader,
	// admission, the cluster record, a new cluster's group leaders); 0:
	// ctx alone bounds them. Starting this node's data groups (restoring
	// their snapshots) is work, not a wait: it is not bounded, and ends
	// when ctx is cancelled.
	WaitTimeout time.Duration
	// VectorsOnDiskAbove is the rows of a data group from which the vectors
	// of its domains searched through codes live in a file under DataDir (raftfsm.FSM.DiskVectors);
	// 0 keeps them all in memory.
	VectorsOnDiskAbove int
	// ClusterKey, when set (at least shard.MinClusterKeyLen bytes, the same
	// on every node), makes the node listener mutual TLS that only nodes
	// holding it pass, and encrypts gossip; empty leaves both open to
	// whoever reaches them.
	ClusterKey []byte
	Logger     *slog.Logger

	// noGossipRejoin (tests): a restart joins no one through gossip, as when
	// every peer is still starting.
	noGossipRejoin bool
}

// Cluster is this node's view of the cluster: the meta group and the data
// groups it hosts, with the state machines behind them.
type Cluster struct {
	cfg         Config
	log         *slog.Logger
	node        *shard.Node
	members     *membership // nil without a gossip address (embedded single node)
	spreadSkip  spreadSkips // nodes meta writes do not wait for, for a while
	self        NodeInfo
	bootstrap   bool // this start created the cluster
	meta        *Meta
	metaG       *shard.Group
	groups      []*shard.Group // index = group ID; [0] unused
	fsms        []*raftfsm.FSM // index = group ID
	info        ClusterInfo
	httpHandler atomic.Pointer[func([]byte) []byte]
	stop        chan struct{}
	stopped     chan struct{}
	closeOnce   sync.Once
	// evictions: groups this node was removed from without learning it
	// (evict.go), and the reconcile loop's bookkeeping of them.
	evicted sync.Map // group ID (uint32) -> the local configuration it holds for (configKey)
	// leaders caches the leader of groups this node holds no replica of,
	// for the request paths (cachedLeader); group ID (uint32) -> NodeInfo.
	leaders    sync.Map
	pool       rpcPool // idle node RPC connections (rpcpool.go)
	leaderless map[uint32]time.Time
	demoted    map[uint32]time.Time
	// healed: the members that answered the last heal though gossip did not
	// have them alive (heal.go); reconcile loop only.
	healed     map[string]NodeInfo
	healedAt   time.Time
	healWarned time.Time
	// foreignSeen: nodes of other clusters gossip reached, warned of once.
	foreignSeen sync.Map
	selfMu      sync.RWMutex // guards self after Start (recordClusterID)
}

// me returns what this node tells the others about itself.
func (c *Cluster) me() NodeInfo {
	c.selfMu.RLock()
	defer c.selfMu.RUnlock()
	return c.self
}

func (c *Cluster) setSelf(n NodeInfo) {
	c.selfMu.Lock()
	c.self = n
	c.selfMu.Unlock()
}

// Start opens this node's groups. On a new data dir without --join it
// bootstraps a new cluster; with --join it gossips into an existing one, is
// admitted to the meta group and waits for the cluster record. On an
// existing data dir the embedder and dimension must match the ones the
// cluster was created with. Cancelling ctx ends the start promptly: no data
// group starts after it (one restoring its snapshot finishes first), what
// started is closed, and the error wraps ctx's.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DeadGrace == 0 {
		cfg.DeadGrace = DefaultDeadGrace
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create data dir: %w", err)
	}
	id, err := nodeID(cfg)
	if err != nil {
		return nil, err
	}
	cfg.NodeID = id
	var key *shard.ClusterKey
	if len(cfg.ClusterKey) > 0 {
		if key, err = shard.NewClusterKey(cfg.ClusterKey, id); err != nil {
			return nil, err
		}
	}
	node, err := shard.NewNode(shard.NodeConfig{NodeID: id, BindAddr: cfg.RaftAddr, DataDir: cfg.DataDir, Logger: cfg.Logger,
		ClusterKey: key})
	if err != nil {
		return nil, fmt.Errorf("cannot start raft node: %w", err)
	}
	c := &Cluster{cfg: cfg, log: cfg.Logger, node: node, meta: NewMeta(), stop: make(chan struct{}), stopped: make(chan struct{}),
		leaderless: map[uint32]time.Time{}, demoted: map[uint32]time.Time{}}
	c.meta.SetSync(c.SyncMeta)
	node.HandleRPC(c.serveRPC)
	if err := c.start(ctx); err != nil {
		c.shutdownMembers()
		_ = node.Close()
		return nil, err
	}
	collector.add(c)
	go c.reconcileLoop()
	return c, nil
}

// gossipKey is memberlist's key: derived from the cluster key, none
// without one.
func (c *Cluster) gossipKey() []byte {
	if k := c.node.ClusterKey(); k != nil {
		return k.GossipKey()
	}
	return nil
}

func (c *Cluster) start(ctx context.Context) error {
	wait := ctx
	if c.cfg.WaitTimeout > 0 {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(ctx, c.cfg.WaitTimeout)
		defer cancel()
	}
	fresh := !HoldsState(c.cfg.DataDir)
	if fresh {
		if err := checkNoOrphans(c.cfg.DataDir); err != nil {
			return err
		}
	}
	clusterID, err := readClusterID(c.cfg.DataDir)
	if err != nil {
		return err
	}
	unjoined := !fresh && clusterID == "" && joinUnfinished(c.cfg.DataDir)
	if unjoined && len(c.cfg.Join) == 0 {
		return fmt.Errorf("data dir %s never finished joining a cluster (a start with --join did not complete): "+
			"start it with --join again, naming a node of the cluster, or move the data dir aside to start a new cluster", c.cfg.DataDir)
	}
	joining := (fresh || unjoined) && len(c.cfg.Join) > 0
	if joining {
		if err := markJoin(c.cfg.DataDir); err != nil {
			return err
		}
	}
	c.bootstrap = (fresh && !joining) || (!fresh && bootUnfinished(c.cfg.DataDir))
	if c.bootstrap {
		if err := markBoot(c.cfg.DataDir); err != nil {
			return err
		}
	}
	self := NodeInfo{NodeID: c.cfg.NodeID, RaftAddr: c.node.Addr(), HTTPAddr: c.cfg.HTTPAddr, GossipAddr: c.cfg.GossipAddr,
		Embedder: c.cfg.Embedder, Dim: c.cfg.Dim, ClusterID: clusterID}
	if c.cfg.GossipAddr != "" {
		m, err := newMembership(self, c.gossipKey(), c.log)
		if err != nil {
			return err
		}
		c.members = m
		self.GossipAddr = m.self.GossipAddr
	}
	c.setSelf(self)
	c.metaG, err = c.node.StartGroup(c.groupConfig(MetaGroupID), c.meta)
	if err != nil {
		return fmt.Errorf("cannot start meta group: %w", err)
	}
	if c.members != nil {
		if err := c.rejoin(wait, joining); err != nil {
			return err
		}
		if err := c.checkDuplicate(wait); err != nil {
			return err
		}
	}
	if joining {
		if err := c.requestAdmission(wait); err != nil {
			return err
		}
	}
	if err := c.waitMeta(wait, !fresh); err != nil {
		return err
	}
	if err := c.initInfo(wait); err != nil {
		return err
	}
	if err := c.recordClusterID(); err != nil {
		return err
	}
	if joining {
		if err := unmarkJoin(c.cfg.DataDir); err != nil {
			return err
		}
	}
	return c.startDataGroups(ctx, wait)
}

// startDataGroups starts this node's data groups until ctx is cancelled,
// then (on a new cluster) waits for their leaders until wait ends.
func (c *Cluster) startDataGroups(ctx, wait context.Context) error {
	c.groups = make([]*shard.Group, c.info.Groups+1)
	c.fsms = make([]*raftfsm.FSM, c.info.Groups+1)
	for g := 1; g <= c.info.Groups; g++ {
		c.fsms[g] = raftfsm.New(c.info.Dim)
		c.fsms[g].DiskVectors(c.cfg.DataDir, c.cfg.VectorsOnDiskAbove)
	}
	// A restart restores each group's snapshot inside StartGroup, mostly
	// on one goroutine: restore as many groups at once as there are cores.
	// A stop starts no more of them: with many groups, or large snapshots,
	// the rest took minutes, and the stop signal waited for all of them.
	errs := make([]error, c.info.Groups+1)
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	launched := 0
	for g := 1; g <= c.info.Groups; g++ {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		launched = g
		wg.Go(func() {
			defer func() { <-slots }()
			// A stop ends the restore too, not only the launching: one
			// group's snapshot of a million atoms takes ~30 s to restore.
			c.fsms[g].StopRestoresOn(ctx.Done())
			defer c.fsms[g].StopRestoresOn(nil)
			c.groups[g], errs[g] = c.node.StartGroup(c.groupConfig(uint32(g)), c.fsms[g])
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err // shard names the group
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("start ended after %d of %d data groups: %w", launched, c.info.Groups, err)
	}
	if !c.bootstrap {
		return nil // a joining or restarting node waits for the cluster, not for itself
	}
	for g := 1; g <= c.info.Groups; g++ {
		if err := c.groups[g].WaitLeader(wait); err != nil {
			return fmt.Errorf("group %d has no leader: %w", g, err)
		}
	}
	return unmarkBoot(c.cfg.DataDir)
}

// waitMeta waits until the meta group has a leader and this node has
// applied what it committed, so auth and placement are local reads. On a
// restart it asks the other members, every removedCheck while it waits,
// whether an operator removed this node (its meta group then never has a
// leader for it), and gossips with them again.
func (c *Cluster) waitMeta(ctx context.Context, restart bool) error {
	for {
		bctx, cancel := context.WithTimeout(ctx, removedCheck)
		err := c.barrier(bctx, c.metaG)
		cancel()
		if err == nil {
			return nil
		}
		if restart && c.members != nil {
			peers, left := c.askPeers(ctx)
			if left {
				return c.removedError()
			}
			// Gossip again: the others may have refused this node's name at
			// a new address until they found the old one dead (membership).
			_ = c.members.join(peers)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("meta group not readable: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// rejoin joins the gossip of the cluster: through --join and, on a
// restart, through the other members of the meta group, asked for their
// gossip address (without them, a node restarted with no --join after its
// peers gave it up for dead would gossip alone). On a restart no peer
// answering is not an error: the peers join this node when they come back.
// A peer answering that this node was removed is (removedError).
func (c *Cluster) rejoin(ctx context.Context, joining bool) error {
	addrs := c.cfg.Join
	if !joining && c.cfg.noGossipRejoin {
		return nil
	}
	if !joining && !c.bootstrap {
		peers, left := c.askPeers(ctx)
		if left {
			return c.removedError()
		}
		addrs = append(append([]string{}, addrs...), peers...)
	}
	err := c.members.join(addrs)
	if err != nil && !joining {
		c.log.Warn("no other node reachable through gossip yet", "err", err)
		return nil
	}
	return err
}

// askPeers asks every other member of the meta group's configuration for
// its gossip address and for this node's recorded state; best effort.
// left is true when one of them has this node recorded as left (drained
// and removed by an operator).
func (c *Cluster) askPeers(ctx context.Context) (gossip []string, left bool) {
	f := c.metaG.Raft().GetConfiguration()
	if f.Error() != nil {
		return nil, false
	}
	for _, s := range f.Configuration().Servers {
		if string(s.ID) == c.cfg.NodeID {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		resp, err := c.call(cctx, string(s.Address), &rpcRequest{Op: opSelf, Node: c.me()})
		cancel()
		if err != nil || c.foreign(resp.Self) {
			continue
		}
		left = left || resp.State == NodeLeft
		if resp.Self.GossipAddr != "" {
			gossip = append(gossip, resp.Self.GossipAddr)
		}
	}
	return gossip, left
}

// requestAdmission asks a member of the cluster to add this node to the
// meta group, retrying until some member answers.
func (c *Cluster) requestAdmission(ctx context.Context) error {
	if len(c.members.snapshot()) == 1 { // the join succeeded, reaching only this node
		return fmt.Errorf("cannot join the cluster: --join %s reached only this node's own gossip address; "+
			"name a node of the cluster, or leave --join empty to start a new one", strings.Join(c.cfg.Join, ","))
	}
	var last error = ErrUnavailable
	for {
		for _, st := range c.members.snapshot() {
			if st.info.NodeID == c.cfg.NodeID || st.status != StatusAlive || c.foreign(st.info) {
				continue
			}
			req := &rpcRequest{Op: opJoin, Node: c.me(), Embedder: c.cfg.Embedder, Dim: c.cfg.Dim}
			if _, err := c.call(ctx, st.info.RaftAddr, req); err != nil {
				if errors.Is(err, ErrEmbedderMismatch) {
					return err
				}
				last = err
				continue
			}
			c.log.Info("admitted to the cluster", "through", st.info.NodeID)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cannot join the cluster: %w", last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// admit adds a node to the meta group: as a voter while there are fewer
// than MaxMetaVoters, otherwise as a non-voter. Runs on the meta leader; any
// other node forwards the request there.
func (c *Cluster) admit(ctx context.Context, req *rpcRequest) error {
	if !c.metaG.IsLeader() {
		_, addr := c.metaG.Leader()
		if addr == "" {
			return fmt.Errorf("%w: meta group has no leader", ErrUnavailable)
		}
		_, err := c.call(ctx, addr, &rpcRequest{Op: opJoin, Node: req.Node, Embedder: req.Embedder, Dim: req.Dim})
		return err
	}
	if err := c.admissible(req); err != nil {
		return err
	}
	n := req.Node
	voters, nonvoters, err := c.metaG.Voters()
	if err != nil {
		return err
	}
	if contains(voters, n.NodeID) || contains(nonvoters, n.NodeID) {
		return nil
	}
	if len(voters) < MaxMetaVoters {
		return c.metaG.AddVoter(ctx, n.NodeID, n.RaftAddr)
	}
	return c.metaG.AddNonvoter(ctx, n.NodeID, n.RaftAddr)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// groupConfig is data or meta group id's configuration. A data group
// bootstraps on a new cluster and, on a restart, when this node is the
// cluster's only node: a group that lost its raft.db before it took a
// snapshot (moved aside as its damage report advises) starts again empty,
// this node its one voter, as it was; it waited for a leader forever.
// Where other nodes exist they hold the group and bring it back.
func (c *Cluster) groupConfig(id uint32) shard.GroupConfig {
	boot := c.bootstrap || id != MetaGroupID && c.soleNode()
	return shard.GroupConfig{ID: id, Bootstrap: boot, SnapshotThreshold: c.cfg.SnapshotThreshold}
}

// soleNode reports whether the meta group's configuration names this
// node and no other (voter or not).
func (c *Cluster) soleNode() bool {
	if c.metaG == nil {
		return false
	}
	replicas := c.metaReplicas()
	return len(replicas) == 1 && replicas[c.cfg.NodeID]
}

// DefaultGroups is the number of data groups of a new cluster when the
// configuration names none (--groups' default).
const DefaultGroups = 8

// MaxGroups bounds the data groups of a new cluster. Every node runs every
// group's Raft instance, and each costs a node its heartbeats, connections
// and buffers whether it holds data or not: three nodes on a 2-core VM ran
// 128 groups with the cores busy at idle, and never held the leaders of 256
// (docs/design-notes.md).
const MaxGroups = 128

// initInfo records the cluster on first start and checks it on later ones.
func (c *Cluster) initInfo(ctx context.Context) error {
	if info, ok := c.meta.ClusterInfo(); ok {
		if info.Embedder != c.cfg.Embedder || info.Dim != c.cfg.Dim {
			was, _, _ := strings.Cut(info.Embedder, "/")
			now, _, _ := strings.Cut(c.cfg.Embedder, "/")
			if was == now && info.Embedder != c.cfg.Embedder {
				return fmt.Errorf("%w: data dir %s holds vectors of embedder %q; this binary's %s embedder is %q and its vectors are not comparable: export the data with the older binary (hebb export) and import it into a new --data-dir (hebb import)",
					ErrEmbedderMismatch, c.cfg.DataDir, info.Embedder, now, c.cfg.Embedder)
			}
			return fmt.Errorf("%w: data dir %s was created with embedder %q (dimension %d); this start asks for %q (dimension %d): start with %s or use a new --data-dir",
				ErrEmbedderMismatch, c.cfg.DataDir, info.Embedder, info.Dim, c.cfg.Embedder, c.cfg.Dim, embedderFlags(info.Embedder))
		}
		if c.cfg.Groups != 0 && c.cfg.Groups != info.Groups {
			c.log.Warn("--groups is fixed at cluster creation; using the recorded value",
				"requested", c.cfg.Groups, "groups", info.Groups)
		}
		c.info = info
		return nil
	}
	if !c.bootstrap {
		return fmt.Errorf("%w: the meta group holds no cluster record yet", ErrUnavailable)
	}
	groups := c.cfg.Groups
	if groups == 0 {
		groups = DefaultGroups
	}
	if groups < 1 || groups > MaxGroups {
		return fmt.Errorf("%w: --groups must be from 1 to %d, not %d", ErrInvalidCommand, MaxGroups, groups)
	}
	cmd := InitCluster{ClusterID: "cl_" + randomHex(8), Embedder: c.cfg.Embedder, Dim: c.cfg.Dim,
		Groups: groups, CreatedAt: time.Now().UTC()}
	out, err := c.metaG.Propose(ctx, EncodeInitCluster(cmd))
	if err != nil {
		return fmt.Errorf("cannot record cluster: %w", err)
	}
	info, ok := out.(ClusterInfo)
	if !ok {
		return fmt.Errorf("cannot record cluster: unexpected result %v", out)
	}
	c.info = info
	return nil
}

// nodeID returns the node's identity: --node-id, else the data dir's
// node-id file, else a new one. The file keeps a given --node-id too, so a
// restart under another one is refused at once: the groups know the node by
// its first id, and it waited for a leader that would never answer it.
func nodeID(cfg Config) (string, error) {
	path := filepath.Join(cfg.DataDir, "node-id")
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("cannot read the node id: %w", err)
	}
	stored := strings.TrimSpace(string(b))
	if cfg.NodeID != "" {
		if stored != "" && stored != cfg.NodeID {
			return "", fmt.Errorf("data dir %s belongs to node %q: start it with --node-id %s (or without --node-id), or start node %q on an empty --data-dir",
				cfg.DataDir, stored, stored, cfg.NodeID)
		}
		if stored == "" {
			if err := shard.WriteFileSynced(path, []byte(cfg.NodeID+"\n"), 0o600); err != nil {
				return "", fmt.Errorf("cannot persist node id: %w", err)
			}
		}
		return cfg.NodeID, nil
	}
	switch {
	case stored != "":
		return stored, nil
	case HoldsState(cfg.DataDir):
		// A new identity would not be the voter its groups know.
		return "", fmt.Errorf("the node id file %s is missing or empty in a data dir that holds a cluster: "+
			"restore it, or start with --node-id set to this node's id", path)
	}
	id := "node-" + randomHex(6)
	if err := shard.WriteFileSynced(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("cannot persist node id: %w", err)
	}
	return id, nil
}

// HoldsState reports whether dataDir holds a node's Raft state (its meta
// group's log or snapshot): a node started on it rejoins its cluster.
func HoldsState(dataDir string) bool {
	return shard.GroupHoldsState(dataDir, MetaGroupID)
}

// checkNoOrphans refuses a data dir without a meta group that holds the
// rest of a node: data groups or a cluster id. Its orgs and keys went with
// the meta group; a new cluster started there would answer with a new
// key, the data out of reach, and a node that rejoins with a new meta log
// is not the voter its groups know.
func checkNoOrphans(dataDir string) error {
	var held []string
	if _, err := os.Stat(filepath.Join(dataDir, clusterIDFile)); err == nil {
		held = append(held, clusterIDFile)
	}
	for _, id := range shard.GroupsOnDisk(dataDir) {
		if id != MetaGroupID && shard.GroupHoldsState(dataDir, id) {
			held = append(held, filepath.Join("raft", filepath.Base(shard.GroupDir(dataDir, id))))
		}
	}
	if len(held) == 0 {
		return nil
	}
	return fmt.Errorf("data dir %s holds %s but not the meta group (raft/group-0: no raft.db, no snapshot): "+
		"the orgs, keys and placement of its data went with it; restore raft/group-0 from a backup, "+
		"or move the data dir aside to start a new cluster", dataDir, strings.Join(held, ", "))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Info is the cluster record.
func (c *Cluster) Info() ClusterInfo { return c.info }

// NodeID is this node's identity.
func (c *Cluster) NodeID() string { return c.cfg.NodeID }

// Meta is the local meta state (auth and settings are local reads).
func (c *Cluster) Meta() *Meta { return c.meta }

// GroupOf is the data group holding tenant.
func (c *Cluster) GroupOf(tenant string) uint32 { return TenantGroup(tenant, c.info.Groups) }

// unavailable marks errors that mean "no leader answered" (ErrUnavailable)
// or "the leader could not write its log" (ErrStorage), so the router
// answers 503 retryable.
func unavailable(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, shard.ErrStorage):
		return fmt.Errorf("%w: %w", ErrStorage, err)
	case errors.Is(err, shard.ErrNotLeader) || errors.Is(err, shard.ErrTimeout) ||
		errors.Is(err, shard.ErrShutdown) || errors.Is(err, shard.ErrUnknownGroup) ||
		errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// Close hands the leadership of the groups this node leads to other live
// voters (handOffLeadership), then stops every group cleanly (snapshotting
// those that grew).
func (c *Cluster) Close() error {
	var err error
	c.closeOnce.Do(func() {
		collector.remove(c)
		close(c.stop)
		<-c.stopped
		c.handOffLeadership()
		c.shutdownMembers()
		err = c.node.Close()
	})
	return err
}

func (c *Cluster) shutdownMembers() {
	if c.members != nil {
		c.members.leave()
	}
}
