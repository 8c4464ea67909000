package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/raft"

	"github.com/hebbdb/hebb/raftfsm"
)

// In-process multi-node tests: every node is a real Cluster (memberlist on
// loopback UDP/TCP, one shard listener) in this process.

const (
	testDim     = 16
	testGroups  = 2
	testTimeout = 30 * time.Second // guard against hangs, not a timing assertion
)

func clusterTestLogger() *slog.Logger {
	if os.Getenv("CLUSTER_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startTestNode starts node id; join lists gossip addresses (empty:
// bootstrap a new cluster).
func startTestNode(t testing.TB, id string, join ...string) *Cluster {
	t.Helper()
	return startWith(t, testConfig(t, id, join...))
}

func testConfig(t testing.TB, id string, join ...string) Config {
	return Config{NodeID: id, DataDir: t.TempDir(), RaftAddr: "127.0.0.1:0",
		GossipAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1", Join: join, Groups: testGroups, Replicas: 3,
		Embedder: "test", Dim: testDim, DeadGrace: time.Second, Logger: clusterTestLogger().With("node", id)}
}

// startNodes starts nodes ids, the others joining the first, each keeping
// replicas replicas of a group (0: testConfig's).
func startNodes(t testing.TB, replicas int, ids ...string) []*Cluster {
	t.Helper()
	return startNodesWith(t, func(cfg *Config) {
		if replicas > 0 {
			cfg.Replicas = replicas
		}
	}, ids...)
}

// startNodesWith starts nodes ids, the others joining the first, each with
// testConfig changed by set.
func startNodesWith(t testing.TB, set func(*Config), ids ...string) []*Cluster {
	t.Helper()
	var nodes []*Cluster
	for _, id := range ids {
		cfg := testConfig(t, id)
		if len(nodes) > 0 {
			cfg.Join = []string{nodes[0].self.GossipAddr}
		}
		set(&cfg)
		nodes = append(nodes, startWith(t, cfg))
	}
	return nodes
}

func startWith(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start(%s): %v", cfg.NodeID, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// startRefused starts cfg expecting a refusal and returns its error; a
// node that starts is closed and fails the test (what names it).
func startRefused(t testing.TB, cfg Config, what string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := Start(ctx, cfg)
	if err == nil {
		_ = c.Close()
		t.Fatalf("%s started", what)
	}
	return err
}

// kill stops c the way a crash does: no gossip leave, so the others see
// the node fail rather than leave.
func (c *Cluster) kill() {
	c.closeOnce.Do(func() {
		collector.remove(c)
		close(c.stop)
		<-c.stopped
		_ = c.members.list.Shutdown()
		_ = c.node.Close()
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sortedVoters is the voter set of group gid as node c's replica sees it.
func sortedVoters(c *Cluster, gid uint32) []string {
	g := c.node.Group(gid)
	if g == nil {
		return nil
	}
	v, _, err := g.Voters()
	if err != nil {
		return nil
	}
	slices.Sort(v)
	return v
}

// waitVoters waits until the leader of group gid (found among nodes) has
// exactly want as voters and no non-voter, and so do the replicas of it
// among nodes: a test that then stops the leader must not leave a voter
// that has not yet received the last promotion. That voter refuses the
// promoted node's votes (to it a non-voter), and the promoted node, whose
// log is newer, refuses its: the group has no leader until the stopped
// one returns.
func waitVoters(t *testing.T, nodes []*Cluster, gid uint32, want ...string) {
	t.Helper()
	slices.Sort(want)
	waitUntil(t, fmt.Sprintf("group %d voters %v on every replica", gid, want), func() bool {
		led := false
		for _, c := range nodes {
			if !slices.Contains(want, c.NodeID()) {
				continue
			}
			g := c.node.Group(gid)
			if g == nil {
				return false
			}
			v, nv, err := g.Voters()
			slices.Sort(v)
			if err != nil || len(nv) != 0 || !slices.Equal(v, want) {
				return false
			}
			led = led || g.IsLeader()
		}
		return led
	})
}

// tenantIn returns a tenant ID placed in data group gid.
func tenantIn(gid uint32) string {
	for i := 0; ; i++ {
		if id := fmt.Sprintf("org_%d", i); TenantGroup(id, testGroups) == gid {
			return id
		}
	}
}

// writeAtom proposes one atom for tenant through node c and returns its ID.
// Like a client, it writes again (a new atom) while the group is
// unavailable: a leader change under load leaves a write's outcome open.
func writeAtom(t *testing.T, c *Cluster, tenant string, rng *rand.Rand) raftfsm.ID {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		id, out, err := proposeAtom(c, tenant, rng)
		if errors.Is(err, ErrUnavailable) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatalf("write through %s: %v", c.NodeID(), err)
		}
		if res, ok := out.(*raftfsm.WriteResults); !ok || res.Err != nil || !res.Results[0].Stored {
			t.Fatalf("write through %s: result %#v", c.NodeID(), out)
		}
		return id
	}
}

func proposeAtom(c *Cluster, tenant string, rng *rand.Rand) (raftfsm.ID, any, error) {
	v := make([]float32, testDim)
	var norm float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		norm += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(norm))
	}
	id := raftfsm.ID(uuid.New())
	cmd := raftfsm.WriteCmd{Tenant: tenant, Items: []raftfsm.WriteItem{{ID: id, CreatedAt: time.Now().UnixMicro(),
		Content: "atom " + id.String(), Domain: "general", Vector: v}}}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	out, err := c.Propose(ctx, tenant, cmd.Encode())
	return id, out, err
}

// mustRead reads tenant's atom id on node c with a linearizable read.
func mustRead(t *testing.T, c *Cluster, tenant string, id raftfsm.ID) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	fsm, err := c.ReadFSM(ctx, tenant)
	for errors.Is(err, ErrUnavailable) && ctx.Err() == nil { // a leader change under load
		time.Sleep(50 * time.Millisecond)
		fsm, err = c.ReadFSM(ctx, tenant)
	}
	if err != nil {
		t.Fatalf("ReadFSM(%s) on %s: %v", tenant, c.NodeID(), err)
	}
	if _, ok := fsm.Get(tenant, id); !ok {
		t.Fatalf("%s does not see atom %s of %s right after it was acknowledged", c.NodeID(), id, tenant)
	}
}

// TestClusterLifecycle grows a cluster to four nodes, then loses one to a
// crash and drains another. Node IDs are fixed, so placement (rendezvous
// hashing) is known: with n1..n4, group 1 wants {n1,n2,n3} and group 2
// wants {n2,n3,n4}; without n3 they want {n1,n2,n4} both.
func TestClusterLifecycle(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	n1 := startTestNode(t, "n1")
	seed := n1.self.GossipAddr
	n2 := startTestNode(t, "n2", seed)
	n3 := startTestNode(t, "n3", seed)
	nodes := []*Cluster{n1, n2, n3}
	tenants := map[uint32]string{1: tenantIn(1), 2: tenantIn(2)}
	written := map[uint32][]raftfsm.ID{}

	t.Run("three nodes replicate every group", func(t *testing.T) {
		for gid := uint32(1); gid <= testGroups; gid++ {
			waitVoters(t, nodes, gid, "n1", "n2", "n3")
		}
		waitUntil(t, "meta voters n1 n2 n3", func() bool {
			return slices.Equal(sortedVoters(n1, MetaGroupID), []string{"n1", "n2", "n3"})
		})
	})

	t.Run("follower read after a write through another node", func(t *testing.T) {
		for gid, tenant := range tenants {
			for _, via := range nodes {
				id := writeAtom(t, via, tenant, rng)
				written[gid] = append(written[gid], id)
				for _, reader := range nodes {
					mustRead(t, reader, tenant, id)
				}
			}
		}
	})

	cfg4 := testConfig(t, "n4", seed)
	n4 := startWith(t, cfg4)
	nodes = append(nodes, n4)
	t.Run("a joining node receives replicas", func(t *testing.T) {
		waitVoters(t, nodes, 1, "n1", "n2", "n3")
		waitVoters(t, nodes, 2, "n2", "n3", "n4")
		for _, id := range written[2] {
			mustRead(t, n4, tenants[2], id)
		}
		waitUntil(t, "n4 in the meta group", func() bool { return slices.Contains(sortedVoters(n1, MetaGroupID), "n4") })
		// n4 holds no replica of group 1 and hears no heartbeats of it, yet it
		// reports its leader (readiness counts groups with a leader).
		st := n4.Status()
		if st.GroupsWithLeader != testGroups || !st.MetaLeader {
			t.Errorf("n4 status: %+v", st)
		}
		for _, n := range st.Admin.Nodes {
			if n.GossipAddr == "" || strings.HasSuffix(n.GossipAddr, ":0") {
				t.Errorf("node %s reported with gossip address %q", n.NodeID, n.GossipAddr)
			}
		}
		if p := n4.Placement(tenants[1]); p.LeaderNodeID == nil || len(p.Replicas) != 3 {
			t.Errorf("placement of %s seen from n4: %+v", tenants[1], p)
		}
	})

	t.Run("a dead node's replicas are replaced", func(t *testing.T) {
		n3.kill()
		live := []*Cluster{n1, n2, n4}
		for gid := uint32(1); gid <= testGroups; gid++ {
			waitVoters(t, live, gid, "n1", "n2", "n4")
		}
		waitUntil(t, "n3 out of the meta group", func() bool {
			return slices.Equal(sortedVoters(n1, MetaGroupID), []string{"n1", "n2", "n4"})
		})
		for gid, tenant := range tenants {
			written[gid] = append(written[gid], writeAtom(t, n2, tenant, rng))
			for _, c := range live {
				for _, id := range written[gid] {
					mustRead(t, c, tenant, id)
				}
			}
		}
	})

	t.Run("drain moves replicas off a node and removes it", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := n1.Drain(ctx, "n4"); err != nil {
			t.Fatalf("Drain(n4): %v", err)
		}
		live := []*Cluster{n1, n2}
		for gid := uint32(1); gid <= testGroups; gid++ {
			waitVoters(t, live, gid, "n1", "n2")
		}
		waitUntil(t, "n2 to record n4 as left", func() bool { return n2.Meta().NodeState("n4") == NodeLeft })
		if st := n1.Status().Admin; !slices.ContainsFunc(st.Nodes, func(n NodeStatus) bool {
			return n.NodeID == "n4" && n.Status == StatusLeft
		}) {
			t.Errorf("admin status after drain: %+v", st.Nodes)
		}
		waitUntil(t, "n4 out of the meta group", func() bool {
			return slices.Equal(sortedVoters(n1, MetaGroupID), []string{"n1", "n2"})
		})
		// n4, drained but still running, holds no meta replica: a meta
		// write waits for n2 only (n4's barrier would never pass, and
		// every meta write would wait metaSpreadWait for it).
		waitUntil(t, "meta writes through n1 to wait for n2 only", func() bool {
			got := n1.spreadTargets()
			return len(got) == 1 && got[0].NodeID == "n2"
		})
		for gid, tenant := range tenants {
			for _, c := range live {
				for _, id := range written[gid] {
					mustRead(t, c, tenant, id)
				}
			}
		}
	})

	t.Run("a removed node restarted on its data dir refuses to start", func(t *testing.T) {
		n4.kill()
		err := startRefused(t, cfg4, "the drained n4")
		if !errors.Is(err, ErrRemoved) || !strings.Contains(err.Error(), "--join") {
			t.Fatalf("restarting the drained n4: %v, want ErrRemoved naming --join", err)
		}
	})

	t.Run("the last node up cannot be drained", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := n1.Drain(ctx, "n2"); err != nil {
			t.Fatalf("Drain(n2): %v", err)
		}
		// n1 is alone among nodes that left or died: refused at once, not
		// recorded as draining (a node joining later would complete it).
		err := n1.Drain(ctx, "n1")
		if !errors.Is(err, ErrInvalidCommand) || !strings.Contains(err.Error(), "last node") {
			t.Fatalf("Drain(n1) alone: %v, want a refusal", err)
		}
		if st := n1.Meta().NodeState("n1"); st != "" {
			t.Fatalf("n1 recorded as %q", st)
		}
	})
}

// TestRestartWithoutJoin restarts a node on its data dir with no --join
// and a new gossip port: it finds its peers again through the meta group. Then, as the leader of every group, it is handed
// a view of the cluster that knows no other node (gossip not joined yet): it
// must not take the replicas it has not heard of for gone.
func TestRestartWithoutJoin(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "n1")
	cfg.RaftAddr = freeLoopbackAddr(t) // the raft address is in every group's configuration
	cfg.DeadGrace = time.Minute        // n1 keeps its replicas while it is down
	n1 := startWith(t, cfg)
	cfg2, cfg3 := testConfig(t, "n2", n1.self.GossipAddr), testConfig(t, "n3", n1.self.GossipAddr)
	cfg2.DeadGrace, cfg3.DeadGrace = cfg.DeadGrace, cfg.DeadGrace
	n2, n3 := startWith(t, cfg2), startWith(t, cfg3)
	for gid := uint32(1); gid <= testGroups; gid++ {
		waitVoters(t, []*Cluster{n1, n2, n3}, gid, "n1", "n2", "n3")
	}
	n1.kill()
	n1 = startWith(t, cfg)
	if memberStatus(n1, "n2") != StatusAlive || memberStatus(n1, "n3") != StatusAlive {
		t.Errorf("the restarted n1 did not find its peers: %+v", n1.members.snapshot())
	}

	alone := nodeView{candidates: map[string]NodeInfo{"n1": n1.self}, alive: map[string]bool{"n1": true},
		present: map[string]bool{"n1": true}, known: map[string]bool{"n1": true}}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for gid := uint32(1); gid <= testGroups; gid++ {
		waitUntil(t, fmt.Sprintf("n1 to lead group %d", gid), func() bool {
			if n1.node.Group(gid).IsLeader() {
				return true
			}
			for _, c := range []*Cluster{n2, n3} {
				if g := c.node.Group(gid); g.IsLeader() && g.AppliedIndex() == n1.node.Group(gid).AppliedIndex() {
					_ = g.Raft().LeadershipTransferToServer("n1", raft.ServerAddress(n1.node.Addr())).Error()
				}
			}
			time.Sleep(200 * time.Millisecond)
			return false
		})
		changed, err := n1.reconcileGroup(ctx, n1.node.Group(gid), alone)
		if changed || err != nil {
			t.Errorf("group %d: reconcile with a view of n1 alone changed the group (%v, %v)", gid, changed, err)
		}
		if v := sortedVoters(n1, gid); !slices.Equal(v, []string{"n1", "n2", "n3"}) {
			t.Errorf("group %d voters %v, want [n1 n2 n3]", gid, v)
		}
	}
}

func memberStatus(c *Cluster, id string) string {
	for _, st := range c.members.snapshot() {
		if st.info.NodeID == id {
			return st.status
		}
	}
	return ""
}

func TestKnowsAll(t *testing.T) {
	known := map[string]bool{"a": true, "b": true}
	tests := []struct {
		name    string
		settled bool
		members []string
		want    bool
	}{
		{"all known", false, []string{"a", "b"}, true},
		{"one unknown", false, []string{"a", "c"}, false},
		{"one unknown, settled view", true, []string{"a", "c"}, true},
		{"none", false, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := nodeView{known: known, settled: tc.settled}
			if got := v.knowsAll(tc.members); got != tc.want {
				t.Errorf("knowsAll(%v) = %v, want %v", tc.members, got, tc.want)
			}
		})
	}
}

func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// A data dir remembers its embedder; another embedder, or another version of
// the same one, is refused with a message saying what to do.
func TestEmbedderRecorded(t *testing.T) {
	cfg := testConfig(t, "n1")
	cfg.Embedder = "builtin"
	c := startWith(t, cfg)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		embedder string
		dim      int
		want     string
	}{
		{"builtin/2", testDim, "export the data with the older binary"},
		{"hash", testDim, "start with --embedder builtin"},
		{"builtin", testDim * 2, "start with --embedder builtin"},
	} {
		cfg.Embedder, cfg.Dim = tc.embedder, tc.dim
		err := startRefused(t, cfg, fmt.Sprintf("a start with %s/%d over a builtin data dir", tc.embedder, tc.dim))
		if !errors.Is(err, ErrEmbedderMismatch) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("start with %s/%d: %v, want ErrEmbedderMismatch saying %q", tc.embedder, tc.dim, err, tc.want)
		}
	}
}
