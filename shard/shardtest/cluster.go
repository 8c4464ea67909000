package shardtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hebbdb/hebb/shard"
)

// Guard bounds every wait of the harness: a hang fails the test after it.
// It is not a performance assertion.
var Guard = 45 * time.Second

// StateMachine is a shard.StateMachine whose state can be compared across
// replicas: equal states hash equal.
type StateMachine interface {
	shard.StateMachine
	StateHash() [32]byte
}

// Config describes a test cluster.
type Config struct {
	Nodes  int      // default 3
	Groups []uint32 // default {1}
	// NewStateMachine makes the state machine of one replica of a group; it
	// is called again for every restart. Required.
	NewStateMachine func(group uint32) StateMachine
	// GroupConfig returns the configuration of a group (snapshot policy);
	// ID and Bootstrap are set by the harness. Optional.
	GroupConfig func(group uint32) shard.GroupConfig
	// Logger defaults to a discarding logger, or to stderr at debug level
	// when SHARD_TEST_LOG is set.
	Logger *slog.Logger
}

// Cluster is Nodes shard nodes in one process, each hosting every group of
// Config.Groups, behind a Network of fault-injecting proxies.
type Cluster struct {
	t   testing.TB
	cfg Config
	net *Network

	mu      sync.Mutex
	members []*member
}

type member struct {
	id        string
	dir       string
	bind      string // the node's real listener
	advertise string // its proxy
	node      *shard.Node
	sms       map[uint32]StateMachine
}

// New starts the cluster: node 0 bootstraps every group, the others join as
// voters. It returns once every group has all nodes as voters and a leader.
// The cluster is closed by t.Cleanup.
func New(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	if cfg.NewStateMachine == nil {
		t.Fatal("shardtest: Config.NewStateMachine is required")
	}
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	if len(cfg.Groups) == 0 {
		cfg.Groups = []uint32{1}
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger()
	}
	c := &Cluster{t: t, cfg: cfg, net: NewNetwork()}
	dirs := make([]string, cfg.Nodes)
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	t.Cleanup(c.Close) // registered after TempDir's cleanup, so it runs first
	for i, dir := range dirs {
		c.members = append(c.members, c.newMember(i, dir))
	}
	c.bootstrap()
	return c
}

func testLogger() *slog.Logger {
	if os.Getenv("SHARD_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func (c *Cluster) newMember(i int, dir string) *member {
	c.t.Helper()
	m := &member{id: fmt.Sprintf("node%d", i), dir: dir, bind: freeAddr(c.t)}
	adv, err := c.net.AddNode(m.id, m.bind)
	if err != nil {
		c.t.Fatal(err)
	}
	m.advertise = adv
	c.startNode(m, i == 0)
	return m
}

// startNode opens m's node and starts every group on it.
func (c *Cluster) startNode(m *member, bootstrap bool) {
	c.t.Helper()
	open := func() (*shard.Node, error) {
		return shard.NewNode(shard.NodeConfig{NodeID: m.id, BindAddr: m.bind, AdvertiseAddr: m.advertise,
			DataDir: m.dir, Logger: c.cfg.Logger})
	}
	node, err := open()
	// freeAddr's port was free a moment ago; another test process may
	// have taken it since. The node then binds another, behind the same
	// proxy (its advertised address does not change).
	for try := 0; errors.Is(err, syscall.EADDRINUSE) && try < 5; try++ {
		m.bind = freeAddr(c.t)
		c.net.SetTarget(m.id, m.bind)
		node, err = open()
	}
	if err != nil {
		c.t.Fatalf("shardtest: cannot start %s: %v", m.id, err)
	}
	sms := make(map[uint32]StateMachine, len(c.cfg.Groups))
	for _, gid := range c.cfg.Groups {
		gc := shard.GroupConfig{}
		if c.cfg.GroupConfig != nil {
			gc = c.cfg.GroupConfig(gid)
		}
		gc.ID, gc.Bootstrap = gid, bootstrap
		sm := c.cfg.NewStateMachine(gid)
		if _, err := node.StartGroup(gc, sm); err != nil {
			_ = node.Close()
			c.t.Fatalf("shardtest: cannot start group %d on %s: %v", gid, m.id, err)
		}
		sms[gid] = sm
	}
	c.mu.Lock()
	m.node, m.sms = node, sms
	c.mu.Unlock()
}

// bootstrap grows every group from node 0 to all nodes.
func (c *Cluster) bootstrap() {
	c.t.Helper()
	first := c.members[0].node
	for _, gid := range c.cfg.Groups {
		c.waitFor(fmt.Sprintf("node0 to lead group %d", gid), func() bool { return first.Group(gid).IsLeader() })
		for _, m := range c.members[1:] {
			ctx, cancel := context.WithTimeout(context.Background(), Guard)
			err := first.Group(gid).AddVoter(ctx, m.id, m.advertise)
			cancel()
			if err != nil {
				c.t.Fatalf("shardtest: cannot add %s to group %d: %v", m.id, gid, err)
			}
		}
	}
	for _, gid := range c.cfg.Groups {
		for i := range c.members {
			c.waitFor(fmt.Sprintf("%s to see all voters of group %d", c.members[i].id, gid), func() bool {
				g := c.Group(i, gid)
				v, _, err := g.Voters()
				lid, _ := g.Leader()
				return err == nil && len(v) == len(c.members) && lid != ""
			})
		}
	}
}

// Close stops every node and the network. Idempotent.
func (c *Cluster) Close() {
	c.mu.Lock()
	nodes := make([]*shard.Node, 0, len(c.members))
	for _, m := range c.members {
		if m.node != nil {
			nodes = append(nodes, m.node)
			m.node = nil
		}
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() { _ = n.Close() })
	}
	wg.Wait()
	c.net.Close()
}

// Network is the cluster's network, for finer faults than Partition.
func (c *Cluster) Network() *Network { return c.net }

// Size is the number of nodes, killed ones included.
func (c *Cluster) Size() int { return len(c.members) }

// ID is the node id of node i.
func (c *Cluster) ID(i int) string { return c.members[i].id }

// Node is node i, nil while it is killed.
func (c *Cluster) Node(i int) *shard.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.members[i].node
}

// Running reports whether node i is up.
func (c *Cluster) Running(i int) bool { return c.Node(i) != nil }

// Group is group gid on node i; it fails the test when node i is killed.
func (c *Cluster) Group(i int, gid uint32) *shard.Group {
	c.t.Helper()
	n := c.Node(i)
	if n == nil {
		c.t.Fatalf("shardtest: %s is killed", c.members[i].id)
	}
	return n.Group(gid)
}

// StateMachine is the state machine of group gid on node i (the one of its
// latest start).
func (c *Cluster) StateMachine(i int, gid uint32) StateMachine {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.members[i].sms[gid]
}

// Partition cuts every link between the nodes far and the others.
func (c *Cluster) Partition(far ...int) {
	ids := make([]string, len(far))
	for k, i := range far {
		ids[k] = c.members[i].id
	}
	c.net.Partition(ids)
}

// Heal restores every link.
func (c *Cluster) Heal() { c.net.Heal() }

// Kill closes node i (its data stays on disk) and drops its connections.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	c.mu.Lock()
	m := c.members[i]
	n := m.node
	m.node = nil
	c.mu.Unlock()
	if n == nil {
		return
	}
	if err := n.Close(); err != nil {
		c.t.Logf("shardtest: closing %s: %v", m.id, err)
	}
	c.net.DropNode(m.id)
}

// Restart starts killed node i again on its data directory with fresh
// state machines.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.Running(i) {
		c.t.Fatalf("shardtest: %s is running", c.members[i].id)
	}
	c.startNode(c.members[i], false)
}

// Leader waits until one running node leads group gid and confirms it with
// a read barrier (a partitioned stale leader does not count), and returns
// its index.
func (c *Cluster) Leader(gid uint32) int {
	c.t.Helper()
	leader := -1
	c.waitFor(fmt.Sprintf("a confirmed leader of group %d", gid), func() bool {
		leader = c.confirmedLeader(gid, nil)
		return leader >= 0
	})
	return leader
}

// LeaderAmong is Leader restricted to the nodes in among.
func (c *Cluster) LeaderAmong(gid uint32, among ...int) int {
	c.t.Helper()
	leader := -1
	c.waitFor(fmt.Sprintf("a confirmed leader of group %d among %v", gid, among), func() bool {
		leader = c.confirmedLeader(gid, among)
		return leader >= 0
	})
	return leader
}

func (c *Cluster) confirmedLeader(gid uint32, among []int) int {
	for i := range c.members {
		if among != nil && !containsInt(among, i) {
			continue
		}
		n := c.Node(i)
		if n == nil || !n.Group(gid).IsLeader() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := n.Group(gid).ReadIndex(ctx)
		cancel()
		if err == nil {
			return i
		}
	}
	return -1
}

func containsInt(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// Propose proposes cmd to group gid through node i.
func (c *Cluster) Propose(ctx context.Context, i int, gid uint32, cmd []byte) (any, error) {
	n := c.Node(i)
	if n == nil {
		return nil, fmt.Errorf("cannot propose through %s: %w", c.members[i].id, shard.ErrShutdown)
	}
	return n.Group(gid).Propose(ctx, cmd)
}

// WaitConverged waits until every running replica of group gid has applied
// the same commands as a confirmed leader, then checks that their state
// hashes are equal, and returns the hash. Call it with no proposals in
// flight.
func (c *Cluster) WaitConverged(gid uint32) [32]byte {
	c.t.Helper()
	leader := c.Leader(gid)
	want := c.Group(leader, gid).AppliedIndex()
	running := c.runningIndexes()
	for _, i := range running {
		c.waitFor(fmt.Sprintf("%s to apply group %d up to %d", c.members[i].id, gid, want), func() bool {
			n := c.Node(i)
			return n != nil && n.Group(gid).AppliedIndex() >= want
		})
	}
	hash := c.StateMachine(leader, gid).StateHash()
	for _, i := range running {
		if got := c.StateMachine(i, gid).StateHash(); got != hash {
			c.t.Fatalf("shardtest: group %d diverged: %s has state hash %x, leader %s has %x (applied %d vs %d)",
				gid, c.members[i].id, got[:8], c.members[leader].id, hash[:8],
				c.Group(i, gid).AppliedIndex(), want)
		}
	}
	return hash
}

func (c *Cluster) runningIndexes() []int {
	var out []int
	for i := range c.members {
		if c.Running(i) {
			out = append(out, i)
		}
	}
	return out
}

// WaitFor polls cond every 10 ms until it holds; after Guard it fails the
// test naming what.
func (c *Cluster) WaitFor(what string, cond func() bool) {
	c.t.Helper()
	c.waitFor(what, cond)
}

func (c *Cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(Guard)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("shardtest: gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("shardtest: cannot find a free port: %v", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}
