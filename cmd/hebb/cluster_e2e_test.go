package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Multi-process cluster tests: real `hebb serve` processes on loopback,
// built once by TestMain (e2e_test.go).

const (
	clusterKey   = "mk_live_" + "clusterE2eKeyForTheTests_k3y"
	clusterAdmin = "adm"
	// clusterVault is the vault master key every test node shares (base64
	// of 32 bytes), as a cluster's nodes must.
	clusterVault = "aGViYi1lMmUtY2x1c3Rlci12YXVsdC1rZXktdGVzdCE="
	// clusterSecret is the cluster key every test node shares: node
	// traffic in these tests is mutual TLS, as a production cluster's is.
	clusterSecret = "hebb-e2e-cluster-secret-for-the-tests-01"
	// failoverLimit is the bound on electing a new leader after the
	// old one is killed.
	failoverLimit = 10 * time.Second
)

// cnode is one node of a test cluster, with what it needs to restart on the
// same addresses and data directory.
type cnode struct {
	*node
	spec  spec
	extra []string // the arguments launchNode was given
	named string   // the node id launchNode was given ("" for a random one)
	id    string
}

type testCluster struct {
	t     *testing.T
	seed  string // gossip address of the first node
	nodes []*cnode
	// ownVaultKey starts the next nodes without the shared vault master
	// key: each draws one of its own.
	ownVaultKey bool
}

// startCluster starts n nodes: the first bootstraps (with the fixed API key),
// the others join through it.
func startCluster(t *testing.T, n int) *testCluster {
	t.Helper()
	c := &testCluster{t: t}
	c.add(nil)
	var wg sync.WaitGroup
	added := make([]*cnode, n-1)
	for i := range added {
		added[i] = c.launchNode([]string{"--join", c.seed})
	}
	for _, cn := range added {
		wg.Go(func() { c.waitUp(cn) })
	}
	wg.Wait()
	for _, cn := range added {
		cn.readID()
	}
	c.nodes = append(c.nodes, added...)
	return c
}

// add starts one more node (joining the cluster unless it is the first) and
// waits until it is ready.
func (c *testCluster) add(extra []string) *cnode { return c.addNamed("", extra) }

// addNamed is add of a node with the given id (placement is rendezvous
// hashing of group and node id, so fixed ids give a known placement).
func (c *testCluster) addNamed(id string, extra []string) *cnode {
	c.t.Helper()
	if c.seed != "" {
		extra = append([]string{"--join", c.seed}, extra...)
	}
	cn := c.launchNamed(id, extra)
	c.waitUp(cn)
	cn.readID()
	if c.seed == "" {
		c.seed = argValue(cn.spec.args, "--gossip-addr")
	}
	c.nodes = append(c.nodes, cn)
	return cn
}

func (c *testCluster) launchNode(extra []string) *cnode { return c.launchNamed("", extra) }

// launchNamed starts a node with id (random when empty: the node draws
// one) on a fresh data dir.
func (c *testCluster) launchNamed(id string, extra []string) *cnode {
	c.t.Helper()
	s := spec{dataDir: c.t.TempDir(), httpAddr: freeAddr(c.t),
		env: []string{"HEBB_BOOTSTRAP_API_KEY=" + clusterKey, "HEBB_CLUSTER_KEY=" + clusterSecret}}
	if !c.ownVaultKey {
		s.env = append(s.env, "HEBB_VAULT_KEY="+clusterVault)
	}
	if id != "" {
		// The node reads its id from the data dir (cluster.nodeID).
		if err := os.WriteFile(filepath.Join(s.dataDir, "node-id"), []byte(id+"\n"), 0o600); err != nil {
			c.t.Fatal(err)
		}
	}
	s.args = append([]string{"--raft-addr", freeAddr(c.t), "--gossip-addr", freeAddr(c.t), "--chat-addr", freeAddr(c.t),
		"--embedder", "hash", "--replicas", "3", "--admin-token", clusterAdmin}, extra...)
	return &cnode{node: launch(c.t, s), spec: s, extra: extra, named: id}
}

// waitUp waits until cn is ready, launching it again on fresh ports and a
// fresh data dir when it exited because a port was taken (see start).
func (c *testCluster) waitUp(cn *cnode) {
	c.t.Helper()
	for attempt := 1; ; attempt++ {
		err := cn.awaitReady()
		if err == nil {
			return
		}
		if !cn.portTaken() || attempt == launchAttempts {
			c.t.Fatal(err)
		}
		*cn = *c.launchNamed(cn.named, cn.extra)
	}
}

func argValue(args []string, name string) string {
	if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// readID reads the node id the node persisted in its data directory.
func (cn *cnode) readID() {
	cn.t.Helper()
	b, err := os.ReadFile(filepath.Join(cn.spec.dataDir, "node-id"))
	if err != nil {
		cn.t.Fatalf("cannot read node id: %v", err)
	}
	cn.id = strings.TrimSpace(string(b))
}

// restart starts a stopped node again on the same data dir and addresses.
func (cn *cnode) restart() {
	cn.t.Helper()
	cn.node = start(cn.t, cn.spec)
}

func (c *testCluster) byID(id string) *cnode {
	for _, cn := range c.nodes {
		if cn.id == id {
			return cn
		}
	}
	c.t.Fatalf("no node %q in the cluster", id)
	return nil
}

// admin calls the admin API of cn, with body (nil for none) encoded as
// JSON, and decodes the answer into out.
func (cn *cnode) admin(method, path string, body, out any) int {
	cn.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+cn.httpAddr+"/admin/v1"+path, rd)
	if err != nil {
		cn.t.Fatalf("request: %v", err)
	}
	req.Header.Set("X-Admin-Token", clusterAdmin)
	res, err := client.Do(req)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	if out != nil {
		_ = json.NewDecoder(res.Body).Decode(out)
	}
	return res.StatusCode
}

// nodeEntry is one node of GET /admin/v1/cluster.
type nodeEntry struct {
	NodeID string `json:"node_id"`
	Status string `json:"status"`
}

// clusterView is GET /admin/v1/cluster (operator.md §3).
type clusterView struct {
	Nodes []nodeEntry `json:"nodes"`
	Meta  struct {
		LeaderNodeID *string  `json:"leader_node_id"`
		Voters       []string `json:"voters"`
	} `json:"meta"`
	Groups []struct {
		GroupID      int      `json:"group_id"`
		LeaderNodeID *string  `json:"leader_node_id"`
		Replicas     []string `json:"replicas"`
		AppliedIndex uint64   `json:"applied_index"`
	} `json:"groups"`
}

func (cn *cnode) view() (clusterView, bool) {
	var v clusterView
	return v, cn.admin("GET", "/cluster", nil, &v) == http.StatusOK
}

// placementView is GET /admin/v1/placement.
type placementView struct {
	GroupID      int      `json:"group_id"`
	LeaderNodeID *string  `json:"leader_node_id"`
	Replicas     []string `json:"replicas"`
}

func (cn *cnode) placement(tenant string) (placementView, bool) {
	var p placementView
	return p, cn.admin("GET", "/placement?tenant="+tenant, nil, &p) == http.StatusOK
}

// orgID is the default org's ID.
func (cn *cnode) orgID() string {
	cn.t.Helper()
	var out struct {
		Orgs []struct {
			OrgID string `json:"org_id"`
		} `json:"orgs"`
	}
	if st := cn.admin("GET", "/orgs", nil, &out); st != http.StatusOK || len(out.Orgs) == 0 {
		cn.t.Fatalf("list orgs: %d %+v", st, out)
	}
	return out.Orgs[0].OrgID
}

// waitFor polls cond until it holds; the guard fails a hung test.
func waitFor(t *testing.T, what string, guard time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after %v", what, guard)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitReplicated waits until, seen from via, every group has exactly the
// given replicas and a leader, and the meta group has them as voters.
func (c *testCluster) waitReplicated(via *cnode, ids ...string) {
	c.t.Helper()
	slices.Sort(ids)
	waitFor(c.t, fmt.Sprintf("every group replicated on %v", ids), 60*time.Second, func() bool {
		v, ok := via.view()
		if !ok || !sameSet(v.Meta.Voters, ids) {
			return false
		}
		for _, g := range v.Groups {
			if g.LeaderNodeID == nil || !sameSet(g.Replicas, ids) {
				return false
			}
		}
		return len(v.Groups) > 0
	})
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// ids returns the node ids of nodes.
func ids(nodes ...*cnode) []string {
	out := make([]string, len(nodes))
	for i, cn := range nodes {
		out[i] = cn.id
	}
	return out
}

// apiDo sends one API request with the cluster key; status 0 means the
// request got no HTTP answer.
func apiDo(hc *http.Client, addr, method, path string, body any) (int, map[string]any) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+addr+"/api/v1"+path, rd)
	if err != nil {
		return 0, nil
	}
	req.Header.Set("X-Api-Key", clusterKey)
	res, err := hc.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// checkReadable fails the test for any id that cn cannot return.
func checkReadable(t *testing.T, cn *cnode, ids []string) {
	t.Helper()
	missing := 0
	for _, id := range ids {
		if st, body := apiDo(client, cn.httpAddr, "GET", "/memory/atoms/"+id, nil); st != 200 || body["atom_id"] != id {
			if missing < 3 {
				t.Errorf("%s: acknowledged atom %s: %d %v", cn.id, id, st, body)
			}
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%s: %d of %d acknowledged writes unreadable", cn.id, missing, len(ids))
	}
}

// TestE2EClusterLeaderKill SIGKILLs the leader of the tenant's group under a
// write load, measures the failover, checks that every acknowledged write is
// readable from every node, that the concurrent supersede / read history is
// linearizable, and that the killed node catches up after a restart.
func TestE2EClusterLeaderKill(t *testing.T) {
	c := startCluster(t, 3)
	first := c.nodes[0]
	for _, cn := range c.nodes { // every replica: see cluster.waitVoters
		c.waitReplicated(cn, ids(c.nodes...)...)
	}
	org := first.orgID()
	p, ok := first.placement(org)
	if !ok || p.LeaderNodeID == nil {
		t.Fatalf("placement of %s: %+v", org, p)
	}
	victim := c.byID(*p.LeaderNodeID)
	var live []*cnode
	for _, cn := range c.nodes {
		if cn != victim {
			live = append(live, cn)
		}
	}

	load := newLoad(t, c.nodes)
	load.start()
	load.waitAcked(60)
	killed := time.Now()
	victim.stop(syscall.SIGKILL)
	load.drop(victim)
	var newLeader string
	waitFor(t, "a new leader of the tenant's group", 30*time.Second, func() bool {
		p, ok := live[0].placement(org)
		if ok && p.LeaderNodeID != nil && *p.LeaderNodeID != victim.id {
			newLeader = *p.LeaderNodeID
			return true
		}
		return false
	})
	failover := time.Since(killed)
	t.Logf("failover: %s elected %v after the SIGKILL of %s", newLeader, failover.Round(time.Millisecond), victim.id)
	if failover > failoverLimit {
		t.Errorf("failover took %v, want a new leader within %v", failover, failoverLimit)
	}
	load.waitAcked(load.ackedCount() + 60)
	load.stop()
	t.Logf("load: %s", load.summary())

	acked := load.ackedIDs()
	for _, cn := range live {
		checkReadable(t, cn, acked)
	}
	checkLinearizable(t, live[0], load.history())

	victim.restart()
	checkReadable(t, victim, acked)
	c.waitReplicated(victim, ids(c.nodes...)...)
	c.waitConverged()
}

// waitConverged waits until every node reports the same applied index for
// every group (no writes may be running).
func (c *testCluster) waitConverged() {
	c.t.Helper()
	waitFor(c.t, "every replica at the same applied index", 30*time.Second, func() bool {
		var want []uint64
		for i, cn := range c.nodes {
			v, ok := cn.view()
			if !ok {
				return false
			}
			var got []uint64
			for _, g := range v.Groups {
				got = append(got, g.AppliedIndex)
			}
			if i > 0 && !slices.Equal(got, want) {
				return false
			}
			want = got
		}
		return true
	})
}

// TestE2EClusterJoin grows a running two-node cluster by a third node,
// which receives a replica of every group and serves the data written
// before it joined; then `hebb admin remove-node` drains it out again.
func TestE2EClusterJoin(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 2)
	c.waitReplicated(c.nodes[0], ids(c.nodes...)...)
	var written []string
	for i := range 20 {
		st, body := apiDo(client, c.nodes[i%2].httpAddr, "POST", "/memory/write",
			map[string]any{"content": fmt.Sprintf("Fact %d written before the join, about topic %x", i, i*7919)})
		if st != 200 || body["stored"] != true {
			t.Fatalf("write %d: %d %v", i, st, body)
		}
		written = append(written, body["atom_id"].(string))
	}
	joined := c.add(nil)
	c.waitReplicated(joined, ids(c.nodes...)...)
	checkReadable(t, joined, written)

	out, err := runAdmin("remove-node", joined.id, "--url", "http://"+c.nodes[0].httpAddr, "--admin-token", clusterAdmin)
	if err != nil {
		t.Fatalf("hebb admin remove-node: %v\n%s", err, out)
	}
	if !strings.Contains(out, `"left"`) {
		t.Errorf("remove-node output: %s", out)
	}
	c.waitReplicated(c.nodes[0], ids(c.nodes[:2]...)...)
	waitFor(t, "the removed node reported as left", 30*time.Second, func() bool {
		v, ok := c.nodes[0].view()
		return ok && slices.Contains(v.Nodes, nodeEntry{NodeID: joined.id, Status: "left"})
	})
	checkReadable(t, c.nodes[1], written)
}

// TestE2EClusterVaultKey: with one vault master key on every node, the
// OAuth signing key the first node made (and sealed) signs on every node;
// a node that joins with a key of its own says so in its log, and its
// OAuth endpoints that sign answer 503.
func TestE2EClusterVaultKey(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 2)
	jwks := func(cn *cnode) (int, string) {
		res, err := client.Get("http://" + cn.httpAddr + "/oauth/jwks")
		if err != nil {
			t.Fatalf("jwks: %v", err)
		}
		defer res.Body.Close()
		var body struct {
			Keys []struct{ Kid string }
		}
		_ = json.NewDecoder(res.Body).Decode(&body)
		if len(body.Keys) != 1 {
			return res.StatusCode, ""
		}
		return res.StatusCode, body.Keys[0].Kid
	}
	st, kid := jwks(c.nodes[0])
	if st != 200 || kid == "" {
		t.Fatalf("jwks on the first node: %d %q", st, kid)
	}
	if st, other := jwks(c.nodes[1]); st != 200 || other != kid {
		t.Fatalf("jwks on the second node: %d %q, want %q", st, other, kid)
	}
	const warning = "vault master key of its own"
	for _, cn := range c.nodes {
		if strings.Contains(cn.stderr.String(), warning) {
			t.Fatalf("a node with the shared key warned: %s", cn.stderr)
		}
	}
	c.ownVaultKey = true
	lone := c.add(nil)
	if !strings.Contains(lone.stderr.String(), warning) {
		t.Errorf("the node with a key of its own did not warn: %s", lone.stderr)
	}
	if st, _ := jwks(lone); st != 503 {
		t.Errorf("jwks on the node with a key of its own: %d, want 503", st)
	}
}

// TestE2EClusterRestartTogether stops every node and starts them all again
// at once, as after a power cut or `make cluster-stop && make cluster`.
// Nodes that could not join one another's gossip at start used to take the
// others for gone once their view settled (the dead-node grace) and remove
// them from every group they led; the cluster must come back whole. Here the
// processes start too slowly to miss each other's gossip reliably: the race
// itself is pinned by cluster.TestRestartTogether; this checks the whole
// restart (cluster id, duplicate-id check, heal) as operators meet it.
func TestE2EClusterRestartTogether(t *testing.T) {
	c := startCluster(t, 3)
	want := ids(c.nodes...)
	c.waitReplicated(c.nodes[0], want...)
	for _, cn := range c.nodes {
		cn.stop(syscall.SIGTERM)
	}
	const grace = 2 * time.Second
	for _, cn := range c.nodes {
		s := cn.spec
		s.args = append(slices.Clone(s.args), "--dead-node-grace", grace.String())
		cn.node = launch(t, s)
	}
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, cn := range c.nodes {
		wg.Go(func() { errs[i] = cn.awaitReady() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(4 * grace) // every gossip view settled, reconciled since
	for _, cn := range c.nodes {
		c.waitReplicated(cn, want...)
	}
}
