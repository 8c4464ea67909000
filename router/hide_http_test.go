package router_test

import (
	"fmt"
	"testing"
	"time"
)

// memSetHide switches an org's "Hide replaced memories" setting.
func memSetHide(t *testing.T, ts *testServer, orgID string, on bool) {
	t.Helper()
	r := ts.admin("PATCH", "/admin/v1/orgs/"+orgID+"/settings", map[string]any{"hide_replaced": on})
	mustStatus(t, r, 200)
	if r.Body["hide_replaced"] != on {
		t.Fatalf("settings patch: %s", r.Raw)
	}
}

// memAccess polls an atom until its access_count passes min (the router
// flushes access counts every 100 ms) and returns the count.
func memAccess(t *testing.T, ts *testServer, key, id string, min float64) float64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := num(memAtom(t, ts, key, id)["access_count"])
		if n > min || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHideReplacedHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, withAdminToken(testAdminToken))
	t.Run("visibility", func(t *testing.T) { testHideVisibility(t, ts) })
	t.Run("access counts", func(t *testing.T) { testHideAccessCount(t, ts) })
}

func testHideVisibility(t *testing.T, ts *testServer) {
	orgID, key := ts.newOrg("hide")
	old := memWrite(t, ts, key, "The staging cluster runs Kubernetes version 1.27",
		map[string]any{"domain": "infra", "fingerprint": "fp-k8s", "external_ref": "k8s-v127"})
	head := memWrite(t, ts, key, "The staging cluster runs Kubernetes version 1.29",
		map[string]any{"domain": "platform", "supersedes": []string{old}})
	other := memWrite(t, ts, key, "The staging cluster has three worker nodes", map[string]any{"domain": "infra"})
	const query = "staging cluster kubernetes version"

	read := func(extra map[string]any) resp {
		body := map[string]any{"query": query, "min_relevance": 0, "top_k": 20}
		for k, v := range extra {
			body[k] = v
		}
		r := ts.do("POST", "/memory/read", key, body)
		mustStatus(t, r, 200)
		return r
	}
	queryEP := func(extra map[string]any) resp {
		body := map[string]any{"query": query, "min_relevance": 0, "top_k": 20}
		for k, v := range extra {
			body[k] = v
		}
		r := ts.do("POST", "/memory/query", key, body)
		mustStatus(t, r, 200)
		return r
	}
	batch := func() (plain, history resp) {
		r := ts.do("POST", "/memory/read-batch", key, map[string]any{"queries": []any{
			map[string]any{"query": query, "min_relevance": 0, "top_k": 20},
			map[string]any{"query": query, "min_relevance": 0, "top_k": 20, "include_history": true},
		}})
		mustStatus(t, r, 200)
		res := list(r.Body["results"])
		return resp{Status: 200, Body: obj(res[0])}, resp{Status: 200, Body: obj(res[1])}
	}
	feed := func(extra map[string]any) []string {
		return memFeedIDs(memFeed(t, ts, key, 2, extra))
	}
	// visible checks old's presence in every reading surface.
	visible := func(t *testing.T, wantPlain, wantHistory bool) {
		t.Helper()
		hist := map[string]any{"include_history": true}
		bp, bh := batch()
		checks := []struct {
			name string
			ids  []string
			want bool
		}{
			{"read", itemIDs(read(nil)), wantPlain},
			{"read include_history", itemIDs(read(hist)), wantHistory},
			{"query", itemIDs(queryEP(nil)), wantPlain},
			{"query include_history", itemIDs(queryEP(hist)), wantHistory},
			{"read-batch", itemIDs(bp), wantPlain},
			{"read-batch include_history", itemIDs(bh), wantHistory},
			{"recent", feed(nil), wantPlain},
			{"recent include_history", feed(hist), wantHistory},
		}
		for _, c := range checks {
			if got := contains(c.ids, old); got != c.want {
				t.Errorf("%s: superseded revision present %v, want %v (%v)", c.name, got, c.want, c.ids)
			}
			if !contains(c.ids, head) || !contains(c.ids, other) {
				t.Errorf("%s: live atoms missing: %v", c.name, c.ids)
			}
		}
	}
	lookups := func(t *testing.T) {
		t.Helper()
		if a := memAtom(t, ts, key, old); a["superseded_by"] != head {
			t.Errorf("by ID: superseded_by %v", a["superseded_by"])
		}
		r := ts.do("POST", "/memory/atoms/by-external-ref", key, map[string]any{"external_ref": "k8s-v127"})
		mustStatus(t, r, 200)
		if r.Body["atom_id"] != old {
			t.Errorf("by external_ref: %s", r.Raw)
		}
		for _, id := range []string{old, head} {
			r := ts.do("GET", "/memory/atoms/"+id+"/chain", key, nil)
			mustStatus(t, r, 200)
			if n := len(list(r.Body["revisions"])); n != 2 {
				t.Errorf("chain from %s: %d revisions: %s", id, n, r.Raw)
			}
		}
	}
	fingerprint := func() resp {
		return read(map[string]any{"fingerprint": "fp-k8s", "domain": "infra"})
	}

	t.Run("off: superseded revisions are visible everywhere", func(t *testing.T) {
		visible(t, true, true)
		it := memFind(read(nil), old)
		if it == nil || it["superseded_by"] != head {
			t.Errorf("superseded item lacks superseded_by: %v", it)
		}
	})

	t.Run("off: include_history has no effect", func(t *testing.T) {
		a, b := itemIDs(read(nil)), itemIDs(read(map[string]any{"include_history": true}))
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("include_history changed an unfiltered read: %v vs %v", a, b)
		}
	})

	t.Run("off: fingerprint does not pull in the tip", func(t *testing.T) {
		r := fingerprint()
		ids := itemIDs(r)
		if len(ids) == 0 || ids[0] != old || r.Body["episodic_hit"] != true {
			t.Errorf("fingerprint match not first: %s", r.Raw)
		}
		if contains(ids, head) {
			t.Errorf("tip in another domain pulled in with filtering off: %v", ids)
		}
	})

	t.Run("off: lookups", lookups)

	memSetHide(t, ts, orgID, true)

	t.Run("on: hidden unless include_history", func(t *testing.T) {
		visible(t, false, true)
		if it := memFind(read(map[string]any{"include_history": true}), old); it == nil || it["superseded_by"] != head {
			t.Errorf("history item lacks superseded_by: %v", it)
		}
	})

	t.Run("on: lookups ignore the setting", lookups)

	t.Run("on: a revision keeps its own domain", func(t *testing.T) {
		r := read(map[string]any{"domain": "platform", "include_history": true})
		if ids := itemIDs(r); contains(ids, old) || !contains(ids, head) {
			t.Errorf("read scoped to the successor's domain: %v", ids)
		}
		r = read(map[string]any{"domain": "infra", "include_history": true})
		if ids := itemIDs(r); !contains(ids, old) || contains(ids, head) {
			t.Errorf("read scoped to the predecessor's domain: %v", ids)
		}
	})

	t.Run("on: fingerprint on a replaced revision pulls in the live tip across domains", func(t *testing.T) {
		r := fingerprint()
		ids := itemIDs(r)
		if len(ids) < 3 || ids[0] != old || ids[1] != head || ids[2] != other {
			t.Fatalf("want [old, head, other...], got %v: %s", ids, r.Raw)
		}
		if r.Body["episodic_hit"] != true {
			t.Errorf("episodic_hit %v", r.Body["episodic_hit"])
		}
		if it := items(r)[1]; it["domain"] != "platform" {
			t.Errorf("tip domain %v", it["domain"])
		}
		// An unrelated fingerprint pulls in nothing.
		r = read(map[string]any{"fingerprint": "fp-none", "domain": "infra"})
		if r.Body["episodic_hit"] != false || contains(itemIDs(r), old) || contains(itemIDs(r), head) {
			t.Errorf("unknown fingerprint: %s", r.Raw)
		}
	})

	memSetHide(t, ts, orgID, false)
	t.Run("off again: visible again", func(t *testing.T) { visible(t, true, true) })
}

func testHideAccessCount(t *testing.T, ts *testServer) {
	orgID, key := ts.newOrg("hide-access")
	old := memWrite(t, ts, key, "The backup bucket is called archive-2023", nil)
	head := memWrite(t, ts, key, "The backup bucket is called archive-2024", map[string]any{"supersedes": []string{old}})
	body := map[string]any{"query": "backup bucket name", "min_relevance": 0, "include_history": true}
	readBoth := func() {
		t.Helper()
		r := ts.do("POST", "/memory/read", key, body)
		mustStatus(t, r, 200)
		if ids := itemIDs(r); !contains(ids, old) || !contains(ids, head) {
			t.Fatalf("read should return both revisions: %s", r.Raw)
		}
	}

	// Filtering off: returning the superseded revision is a use.
	readBoth()
	if n := memAccess(t, ts, key, old, 0); n != 1 {
		t.Fatalf("filtering off: old access_count %v, want 1", n)
	}
	if n := memAccess(t, ts, key, head, 0); n != 1 {
		t.Fatalf("filtering off: head access_count %v, want 1", n)
	}

	memSetHide(t, ts, orgID, true)
	readBoth()
	if n := memAccess(t, ts, key, head, 1); n != 2 {
		t.Fatalf("filtering on: head access_count %v, want 2", n)
	}
	// Both IDs go out in the same flush, so the head having moved means
	// the old revision's count is final.
	a := memAtom(t, ts, key, old)
	if a["access_count"] != 1.0 {
		t.Errorf("filtering on: superseded revision read through include_history counted: access_count %v", a["access_count"])
	}
	time.Sleep(250 * time.Millisecond)
	if n := num(memAtom(t, ts, key, old)["access_count"]); n != 1 {
		t.Errorf("filtering on: old access_count %v after a further flush, want 1", n)
	}
}
