package router_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hebbdb/hebb/cluster"
)

func TestAdminHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, withPlan(cluster.Plan{DailyQueryQuota: 1000}))

	t.Run("token required", func(t *testing.T) {
		for _, tok := range []string{"", "wrong", "ADM", "adm2"} {
			for _, ep := range []struct{ method, path string }{
				{"GET", "/admin/v1/orgs"}, {"POST", "/admin/v1/orgs"}, {"GET", "/admin/v1/cluster"},
				{"GET", "/admin/v1/placement?tenant=x"}, {"DELETE", "/admin/v1/keys/key_x"},
				{"GET", "/admin/v1/debug/pprof/"}, {"GET", "/admin/v1/debug/pprof/heap"},
			} {
				h := http.Header{}
				if tok != "" {
					h.Set("X-Admin-Token", tok)
				}
				r := ts.doH(ep.method, ep.path, h, map[string]any{"name": "x"})
				checkEnvelope(t, r, 401, "UNAUTHORIZED")
			}
		}
		// An API key is not an admin token.
		r := ts.do("GET", "/admin/v1/orgs", ts.Key, nil)
		checkEnvelope(t, r, 401, "UNAUTHORIZED")
	})

	t.Run("pprof behind the token", func(t *testing.T) {
		idx := ts.admin("GET", "/admin/v1/debug/pprof/", nil)
		if idx.Status != 200 || !strings.Contains(string(idx.Raw), "goroutine") {
			t.Fatalf("pprof index %d: %.200s", idx.Status, idx.Raw)
		}
		heap := ts.admin("GET", "/admin/v1/debug/pprof/heap?debug=1", nil)
		if heap.Status != 200 || !strings.Contains(string(heap.Raw), "heap profile") {
			t.Fatalf("heap profile %d: %.200s", heap.Status, heap.Raw)
		}
		cpu := ts.admin("GET", "/admin/v1/debug/pprof/profile?seconds=1", nil)
		if cpu.Status != 200 || len(cpu.Raw) < 2 || cpu.Raw[0] != 0x1f || cpu.Raw[1] != 0x8b {
			t.Fatalf("CPU profile %d: %.60q", cpu.Status, cpu.Raw)
		}
		// A profile runs to its end even when its client left: seconds is
		// bounded (seconds=100000 blocked every CPU profile for 28 hours).
		for _, q := range []string{"profile?seconds=100000", "profile?seconds=0", "trace?seconds=x", "heap?seconds=301"} {
			if r := ts.admin("GET", "/admin/v1/debug/pprof/"+q, nil); r.Status != 400 || !strings.Contains(string(r.Raw), "VALIDATION_ERROR") {
				t.Errorf("%s answers %d: %.100s", q, r.Status, r.Raw)
			}
		}
		if r := ts.admin("GET", "/admin/v1/debug/pprof/nosuch", nil); r.Status != 404 {
			t.Errorf("unknown profile answers %d", r.Status)
		}
		// The command line may hold secrets given as flags.
		if r := ts.admin("GET", "/admin/v1/debug/pprof/cmdline", nil); r.Status != 404 {
			t.Errorf("cmdline answers %d: %.100s", r.Status, r.Raw)
		}
	})

	var orgID, orgKey string
	t.Run("orgs create and list", func(t *testing.T) {
		r := ts.admin("POST", "/admin/v1/orgs", map[string]any{"name": "acme"})
		mustStatus(t, r, 200)
		if !reflect.DeepEqual(keys(r.Body), []string{"api_key", "key_id", "name", "org_id"}) || r.Body["name"] != "acme" {
			t.Fatalf("create org %s", r.Raw)
		}
		orgID, orgKey = str(r.Body["org_id"]), str(r.Body["api_key"])
		mustStatus(t, ts.do("GET", "/memory/stats", orgKey, nil), 200)
		l := ts.admin("GET", "/admin/v1/orgs", nil)
		mustStatus(t, l, 200)
		found := false
		for _, x := range list(l.Body["orgs"]) {
			o := obj(x)
			if !reflect.DeepEqual(keys(o), []string{"created_at", "name", "org_id"}) {
				t.Errorf("org entry %v", o)
			}
			found = found || (o["org_id"] == orgID && o["name"] == "acme")
		}
		if !found || len(list(l.Body["orgs"])) != 2 {
			t.Errorf("list %s", l.Raw)
		}
		for _, bad := range []any{map[string]any{}, map[string]any{"name": ""}, map[string]any{"name": "x", "extra": 1}, "nope",
			map[string]any{"name": "a\u0000b"}, map[string]any{"name": "two\nlines"}} {
			checkEnvelope(t, ts.admin("POST", "/admin/v1/orgs", bad), 400, "VALIDATION_ERROR")
		}
	})

	t.Run("keys create and revoke", func(t *testing.T) {
		r := ts.admin("POST", "/admin/v1/orgs/"+orgID+"/keys", map[string]any{"label": "ci"})
		mustStatus(t, r, 200)
		if !reflect.DeepEqual(keys(r.Body), []string{"api_key", "key_id"}) {
			t.Fatalf("create key %s", r.Raw)
		}
		k, kid := str(r.Body["api_key"]), str(r.Body["key_id"])
		// The new key reaches the same org's atoms.
		id := str(ts.do("POST", "/memory/write", orgKey, map[string]any{"content": "Shared between keys of one org"}).Body["atom_id"])
		mustStatus(t, ts.do("GET", "/memory/atoms/"+id, k, nil), 200)
		mustStatus(t, ts.admin("POST", "/admin/v1/orgs/"+orgID+"/keys", nil), 200)
		checkEnvelope(t, ts.admin("POST", "/admin/v1/orgs/org_nope/keys", map[string]any{}), 404, "NOT_FOUND")
		for _, label := range []string{strings.Repeat("l", 101), "tab\there"} {
			checkValidation(t, ts.admin("POST", "/admin/v1/orgs/"+orgID+"/keys", map[string]any{"label": label}), "body", "label")
		}
		mustStatus(t, ts.admin("POST", "/admin/v1/orgs/"+orgID+"/keys", map[string]any{"label": strings.Repeat("l", 100)}), 200)

		r = ts.admin("DELETE", "/admin/v1/keys/"+kid, nil)
		mustStatus(t, r, 200)
		if !reflect.DeepEqual(r.Body, map[string]any{"key_id": kid, "revoked": true}) {
			t.Errorf("revoke %s", r.Raw)
		}
		r = ts.do("GET", "/memory/stats", k, nil)
		checkEnvelope(t, r, 401, "UNAUTHORIZED")
		if obj(r.Body["details"])["reason"] != "revoked_key" {
			t.Errorf("revoked key %s", r.Raw)
		}
		mustStatus(t, ts.do("GET", "/memory/stats", orgKey, nil), 200)
		checkEnvelope(t, ts.admin("DELETE", "/admin/v1/keys/key_nope", nil), 404, "NOT_FOUND")
	})

	t.Run("settings", func(t *testing.T) {
		r := ts.admin("GET", "/admin/v1/orgs/"+orgID+"/settings", nil)
		mustStatus(t, r, 200)
		want := map[string]any{"hide_replaced": false, "plan": map[string]any{"daily_query_quota": 1000.0, "atom_limit": 0.0}}
		if !reflect.DeepEqual(r.Body, want) {
			t.Errorf("settings %s, want %v", r.Raw, want)
		}
		r = ts.admin("PATCH", "/admin/v1/orgs/"+orgID+"/settings", map[string]any{"hide_replaced": true, "plan": map[string]any{"atom_limit": 50}})
		mustStatus(t, r, 200)
		want = map[string]any{"hide_replaced": true, "plan": map[string]any{"daily_query_quota": 1000.0, "atom_limit": 50.0}}
		if !reflect.DeepEqual(r.Body, want) {
			t.Errorf("patched %s, want %v", r.Raw, want)
		}
		r = ts.admin("GET", "/admin/v1/orgs/"+orgID+"/settings", nil)
		if !reflect.DeepEqual(r.Body, want) {
			t.Errorf("after patch %s", r.Raw)
		}
		r = ts.admin("PATCH", "/admin/v1/orgs/"+orgID+"/settings", map[string]any{"hide_replaced": false})
		mustStatus(t, r, 200)
		if r.Body["hide_replaced"] != false || obj(r.Body["plan"])["atom_limit"] != 50.0 {
			t.Errorf("partial patch %s", r.Raw)
		}
		checkEnvelope(t, ts.admin("GET", "/admin/v1/orgs/org_nope/settings", nil), 404, "NOT_FOUND")
		checkEnvelope(t, ts.admin("PATCH", "/admin/v1/orgs/org_nope/settings", map[string]any{"hide_replaced": true}), 404, "NOT_FOUND")
		checkEnvelope(t, ts.admin("PATCH", "/admin/v1/orgs/"+orgID+"/settings", map[string]any{"hide": true}), 400, "VALIDATION_ERROR")
		checkEnvelope(t, ts.admin("PATCH", "/admin/v1/orgs/"+orgID+"/settings", map[string]any{"plan": map[string]any{"atom_limit": -1}}), 400, "VALIDATION_ERROR")
	})

	t.Run("cluster", func(t *testing.T) {
		r := ts.admin("GET", "/admin/v1/cluster", nil)
		mustStatus(t, r, 200)
		if !reflect.DeepEqual(keys(r.Body), []string{"groups", "meta", "nodes"}) {
			t.Fatalf("cluster %s", r.Raw)
		}
		nodes := list(r.Body["nodes"])
		if len(nodes) != 1 {
			t.Fatalf("nodes %v", nodes)
		}
		n := obj(nodes[0])
		if !reflect.DeepEqual(keys(n), []string{"gossip_addr", "http_addr", "node_id", "raft_addr", "status"}) || n["status"] != "alive" ||
			"http://"+str(n["http_addr"]) != ts.URL {
			t.Errorf("node %v", n)
		}
		node := str(n["node_id"])
		m := obj(r.Body["meta"])
		if m["leader_node_id"] != node || !reflect.DeepEqual(stringsOf(m["voters"]), []string{node}) {
			t.Errorf("meta %v", m)
		}
		groups := list(r.Body["groups"])
		if len(groups) != 2 {
			t.Fatalf("groups %v", groups)
		}
		for i, x := range groups {
			g := obj(x)
			if !reflect.DeepEqual(keys(g), []string{"applied_index", "group_id", "leader_node_id", "replicas"}) ||
				g["group_id"] != float64(i+1) || g["leader_node_id"] != node || !reflect.DeepEqual(stringsOf(g["replicas"]), []string{node}) {
				t.Errorf("group %v", g)
			}
		}
		// The only node cannot be drained: the reason, without the sentinel's
		// "cluster: invalid command:" prefix.
		errs := checkValidation(t, ts.admin("DELETE", "/admin/v1/cluster/nodes/"+node, nil), "path", "node_id")
		if len(errs) != 1 || errs[0]["msg"] != "cannot drain the last node" {
			t.Errorf("draining the only node: %v", errs)
		}
		checkEnvelope(t, ts.admin("DELETE", "/admin/v1/cluster/nodes/node-nope", nil), 404, "NOT_FOUND")
	})

	t.Run("placement", func(t *testing.T) {
		r := ts.admin("GET", "/admin/v1/placement?tenant="+orgID, nil)
		mustStatus(t, r, 200)
		if !reflect.DeepEqual(keys(r.Body), []string{"group_id", "leader_node_id", "replicas", "tenant"}) || r.Body["tenant"] != orgID {
			t.Fatalf("placement %s", r.Raw)
		}
		if g := num(r.Body["group_id"]); g < 1 || g > 2 {
			t.Errorf("group_id %v", g)
		}
		if len(list(r.Body["replicas"])) != 1 || str(r.Body["leader_node_id"]) == "" {
			t.Errorf("placement %s", r.Raw)
		}
		checkValidation(t, ts.admin("GET", "/admin/v1/placement", nil))
	})
}

func TestAdminOffHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, withAdminToken(""))
	for _, tok := range []string{"", "anything"} {
		h := http.Header{}
		if tok != "" {
			h.Set("X-Admin-Token", tok)
		}
		r := ts.doH("GET", "/admin/v1/orgs", h, nil)
		if r.Status != 404 && r.Status != 401 {
			t.Errorf("admin API without --admin-token answers %d: %s", r.Status, r.Raw)
		}
		checkEnvelope(t, r, r.Status, str(r.Body["code"]))
	}
}
