package router_test

import (
	"strings"
	"testing"
)

func TestReadHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	deploy := ts.write("The deploy pipeline runs every Friday at noon", map[string]any{"domain": "ops"})
	ts.write("Our coffee machine on floor three is broken", map[string]any{"domain": "office"})
	fp := ts.write("Customer 881 asked for invoices in euros", map[string]any{"domain": "billing", "fingerprint": "fp-881"})

	t.Run("finds a paraphrase", func(t *testing.T) {
		r := ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": "when does the deployment pipeline run?"})
		mustStatus(t, r, 200)
		ids := itemIDs(r)
		if len(ids) == 0 || ids[0] != deploy {
			t.Fatalf("paraphrase not found first: %s", r.Raw)
		}
		it := items(r)[0]
		for _, k := range []string{"atom_id", "content", "relevance", "similarity", "valence", "importance", "source", "concepts", "domain", "metadata"} {
			if _, ok := it[k]; !ok {
				t.Errorf("item lacks %q: %v", k, it)
			}
		}
		for _, k := range []string{"supersedes", "superseded_by"} {
			if _, ok := it[k]; ok {
				t.Errorf("live item without history carries %q: %v", k, it)
			}
		}
		for _, k := range []string{"items", "episodic_hit", "query_concepts", "expanded_concepts", "search_time_ms"} {
			if _, ok := r.Body[k]; !ok {
				t.Errorf("read response lacks %q: %s", k, r.Raw)
			}
		}
		if _, ok := r.Body["n_db_roundtrips"]; ok {
			t.Errorf("timings without include_timings: %s", r.Raw)
		}
		if r.Body["episodic_hit"] != false {
			t.Errorf("episodic_hit without fingerprint: %s", r.Raw)
		}
	})

	t.Run("domain filter", func(t *testing.T) {
		r := ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": "deployment pipeline Friday", "domain": "office", "min_relevance": 0})
		mustStatus(t, r, 200)
		for _, it := range items(r) {
			if it["domain"] != "office" {
				t.Errorf("item outside the domain: %v", it)
			}
		}
	})

	t.Run("unknown fields ignored", func(t *testing.T) {
		r := ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": "deployment pipeline", "frobnicate": true, "top_k": 3})
		mustStatus(t, r, 200)
	})

	t.Run("bounds", func(t *testing.T) {
		cases := []struct {
			name  string
			body  map[string]any
			loc   string
			valid bool
		}{
			{"top_k 0", map[string]any{"query": "q", "top_k": 0}, "body.top_k", false},
			{"top_k 501", map[string]any{"query": "q", "top_k": 501}, "body.top_k", false},
			{"top_k 500", map[string]any{"query": "q", "top_k": 500}, "", true},
			{"top_k 1", map[string]any{"query": "q", "top_k": 1}, "", true},
			{"top_k not an int", map[string]any{"query": "q", "top_k": 2.5}, "body.top_k", false},
			{"min_relevance -0.1", map[string]any{"query": "q", "min_relevance": -0.1}, "body.min_relevance", false},
			{"min_relevance 1.1", map[string]any{"query": "q", "min_relevance": 1.1}, "body.min_relevance", false},
			{"min_relevance 0 and 1", map[string]any{"query": "q", "min_relevance": 1}, "", true},
			{"diversity 1.5", map[string]any{"query": "q", "diversity": 1.5}, "body.diversity", false},
			{"diversity -0.5", map[string]any{"query": "q", "diversity": -0.5}, "body.diversity", false},
			{"diversity 1", map[string]any{"query": "q", "diversity": 1}, "", true},
			{"query missing", map[string]any{"top_k": 3}, "body.query", false},
			{"query empty", map[string]any{"query": ""}, "body.query", false},
			{"query 5001", map[string]any{"query": strings.Repeat("q", 5001)}, "body.query", false},
			{"query 5000", map[string]any{"query": strings.Repeat("q", 5000)}, "", true},
			// A null among strings is no string (it decoded as "", dropped).
			{"concepts [null]", map[string]any{"query": "q", "concepts": []any{"x", nil}}, "body.concepts.1", false},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := ts.do("POST", "/memory/read", ts.Key, tc.body)
				if tc.valid {
					mustStatus(t, r, 200)
					return
				}
				checkValidation(t, r, tc.loc)
			})
		}
	})

	t.Run("fingerprint is an episodic hit", func(t *testing.T) {
		r := ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": "deployment pipeline", "fingerprint": "fp-881"})
		mustStatus(t, r, 200)
		if r.Body["episodic_hit"] != true {
			t.Errorf("episodic_hit false: %s", r.Raw)
		}
		its := items(r)
		if len(its) == 0 || its[0]["atom_id"] != fp || its[0]["source"] != "episodic" {
			t.Errorf("episodic item not first: %s", r.Raw)
		}
		r = ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": "deployment pipeline", "fingerprint": "fp-none"})
		mustStatus(t, r, 200)
		if r.Body["episodic_hit"] != false {
			t.Errorf("episodic_hit for an unknown fingerprint: %s", r.Raw)
		}
	})

	t.Run("cross-tenant read is empty", func(t *testing.T) {
		_, other := ts.newOrg("stranger")
		for _, body := range []map[string]any{
			{"query": "deployment pipeline Friday noon", "min_relevance": 0},
			{"query": "deployment pipeline Friday noon", "domain": "ops", "min_relevance": 0},
			{"query": "invoices", "fingerprint": "fp-881", "min_relevance": 0},
		} {
			r := ts.do("POST", "/memory/read", other, body)
			mustStatus(t, r, 200)
			if l, ok := r.Body["items"].([]any); !ok || len(l) != 0 {
				t.Errorf("another org sees items: %s", r.Raw)
			}
			if r.Body["episodic_hit"] != false {
				t.Errorf("another org gets an episodic hit: %s", r.Raw)
			}
		}
	})
}

func TestReadDiversityHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	for _, c := range []string{
		"Kafka consumer lag alert fires above ten thousand messages",
		"Kafka consumer lag alert fires above ten thousand messages on the orders topic",
		"Kafka consumer lag alert fires above twenty thousand messages",
		"Kafka broker disk alert fires at eighty percent",
		"Kafka consumer group rebalances when a pod restarts",
		"Kafka retention on the audit topic is thirty days",
	} {
		ts.write(c, map[string]any{"domain": "kafka"})
	}
	query := "kafka consumer lag alert threshold"

	t.Run("timings", func(t *testing.T) {
		r := ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": query, "include_timings": true, "min_relevance": 0})
		mustStatus(t, r, 200)
		if _, ok := r.Body["n_db_roundtrips"].(float64); !ok {
			t.Errorf("n_db_roundtrips missing: %s", r.Raw)
		}
		if _, ok := r.Body["diversity_ms"]; ok {
			t.Errorf("diversity_ms without diversity: %s", r.Raw)
		}
		r = ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": query, "include_timings": true, "min_relevance": 0,
			"diversity": 0.5, "top_k": 2})
		mustStatus(t, r, 200)
		if _, ok := r.Body["diversity_ms"].(float64); !ok {
			t.Errorf("diversity_ms missing with diversity and more candidates than top_k: %s", r.Raw)
		}
		r = ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": query, "include_timings": true, "min_relevance": 0,
			"diversity": 0.5, "top_k": 50})
		mustStatus(t, r, 200)
		if _, ok := r.Body["diversity_ms"]; ok {
			t.Errorf("diversity_ms with fewer candidates than top_k: %s", r.Raw)
		}
	})

	t.Run("MMR keeps the best item first", func(t *testing.T) {
		plain := ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": query, "min_relevance": 0, "top_k": 3})
		mustStatus(t, plain, 200)
		for _, d := range []float64{0.3, 0.7, 1} {
			r := ts.do("POST", "/memory/read", ts.Key, map[string]any{"query": query, "min_relevance": 0, "top_k": 3, "diversity": d})
			mustStatus(t, r, 200)
			a, b := itemIDs(plain), itemIDs(r)
			if len(a) == 0 || len(b) == 0 || a[0] != b[0] {
				t.Fatalf("diversity %v: first %v, plain first %v", d, b, a)
			}
			if items(r)[0]["relevance"] != items(plain)[0]["relevance"] {
				t.Errorf("diversity %v changed the relevance of the first item", d)
			}
			if len(b) < 3 { // a target: association slots may add more
				t.Errorf("diversity %v: %d items, want at least 3", d, len(b))
			}
		}
	})
}

func TestReadHistoryHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	orgID, key := ts.newOrg("history")
	write := func(content string, extra map[string]any) string {
		body := map[string]any{"content": content}
		for k, v := range extra {
			body[k] = v
		}
		r := ts.do("POST", "/memory/write", key, body)
		mustStatus(t, r, 200)
		return str(r.Body["atom_id"])
	}
	old := write("The staging cluster runs Kubernetes version 1.27", nil)
	head := write("The staging cluster runs Kubernetes version 1.29", map[string]any{"supersedes": []string{old}})
	query := map[string]any{"query": "staging cluster kubernetes version", "min_relevance": 0}

	find := func(r resp, id string) map[string]any {
		for _, it := range items(r) {
			if it["atom_id"] == id {
				return it
			}
		}
		return nil
	}

	t.Run("filtering off: superseded items carry superseded_by", func(t *testing.T) {
		r := ts.do("POST", "/memory/read", key, query)
		mustStatus(t, r, 200)
		o, h := find(r, old), find(r, head)
		if o == nil || h == nil {
			t.Fatalf("both revisions expected: %s", r.Raw)
		}
		if o["superseded_by"] != head {
			t.Errorf("old superseded_by %v", o["superseded_by"])
		}
		if _, ok := h["superseded_by"]; ok {
			t.Errorf("head carries superseded_by: %v", h)
		}
		if list(h["supersedes"]) == nil || list(h["supersedes"])[0] != old {
			t.Errorf("head supersedes %v", h["supersedes"])
		}
	})

	r := ts.admin("PATCH", "/admin/v1/orgs/"+orgID+"/settings", map[string]any{"hide_replaced": true})
	mustStatus(t, r, 200)
	if r.Body["hide_replaced"] != true {
		t.Fatalf("settings patch: %s", r.Raw)
	}

	t.Run("filtering on: superseded revision hidden", func(t *testing.T) {
		r := ts.do("POST", "/memory/read", key, query)
		mustStatus(t, r, 200)
		if find(r, old) != nil {
			t.Errorf("superseded revision returned with hide_replaced: %s", r.Raw)
		}
		if find(r, head) == nil {
			t.Errorf("head missing: %s", r.Raw)
		}
	})

	t.Run("filtering on: include_history brings it back", func(t *testing.T) {
		q := map[string]any{"include_history": true}
		for k, v := range query {
			q[k] = v
		}
		r := ts.do("POST", "/memory/read", key, q)
		mustStatus(t, r, 200)
		o := find(r, old)
		if o == nil || o["superseded_by"] != head {
			t.Errorf("include_history: %s", r.Raw)
		}
	})

	t.Run("point lookups ignore the setting", func(t *testing.T) {
		mustStatus(t, ts.do("GET", "/memory/atoms/"+old, key, nil), 200)
		mustStatus(t, ts.do("GET", "/memory/atoms/"+old+"/chain", key, nil), 200)
	})
}
