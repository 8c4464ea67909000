package router_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

const roomOnV2Msg = "xroom: rooms are only supported on the v2 memory API (/memory/write, /memory/read)."

const testRoom = "xroom:room_01hzzzzzzzzzzzzzzzzzzzzzzz"

func TestReadBatchAndQueryHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	t.Run("read-batch", func(t *testing.T) { testReadBatch(t, ts) })
	t.Run("query", func(t *testing.T) { testQuery(t, ts) })
}

func testReadBatch(t *testing.T, ts *testServer) {
	_, key := ts.newOrg("readbatch")
	deploy := memWrite(t, ts, key, "The deploy pipeline runs every Friday at noon", map[string]any{"domain": "ops"})
	coffee := memWrite(t, ts, key, "The coffee machine on floor three is broken again", map[string]any{"domain": "office"})
	invoice := memWrite(t, ts, key, "Customer 881 asked for invoices in euros", map[string]any{"domain": "billing"})
	for i := 0; i < 6; i++ {
		memWrite(t, ts, key, fmt.Sprintf("Deploy pipeline note %d: the pipeline stage %d needs approval", i, i), map[string]any{"domain": "ops"})
	}

	t.Run("query count bounds", func(t *testing.T) {
		q := map[string]any{"query": "deploy pipeline"}
		many := make([]any, 51)
		for i := range many {
			many[i] = q
		}
		cases := []struct {
			name string
			body any
		}{
			{"missing", map[string]any{}},
			{"zero", map[string]any{"queries": []any{}}},
			{"51", map[string]any{"queries": many}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				checkValidation(t, ts.do("POST", "/memory/read-batch", key, tc.body), "body", "queries")
			})
		}
		r := ts.do("POST", "/memory/read-batch", key, map[string]any{"queries": many[:50]})
		mustStatus(t, r, 200)
		if n := len(list(r.Body["results"])); n != 50 {
			t.Errorf("%d results for 50 queries", n)
		}
	})

	t.Run("an empty domain is general, as on read and write", func(t *testing.T) {
		general := memWrite(t, ts, key, "The parking garage opens at seven", map[string]any{"domain": ""})
		q := map[string]any{"query": "parking garage opening hours", "domain": "", "min_relevance": 0, "include_associations": false}
		r := ts.do("POST", "/memory/read-batch", key, map[string]any{"queries": []any{q}})
		mustStatus(t, r, 200)
		if ids := itemIDs(resp{Status: 200, Body: obj(list(r.Body["results"])[0])}); len(ids) != 1 || ids[0] != general {
			t.Errorf("read-batch with domain \"\": %v, want [%s]", ids, general)
		}
		r = ts.do("POST", "/memory/query", key, map[string]any{"query": "parking garage opening hours", "domains": []string{""},
			"min_relevance": 0, "include_associations": false})
		mustStatus(t, r, 200)
		if ids := itemIDs(r); len(ids) != 1 || ids[0] != general {
			t.Errorf("query with domains [\"\"]: %v, want [%s]", ids, general)
		}
	})

	t.Run("one result per query, in order, each with its own options", func(t *testing.T) {
		queries := []map[string]any{
			{"query": "coffee machine broken", "top_k": 1, "include_associations": false},
			{"query": "deploy pipeline Friday noon", "domain": "ops", "top_k": 3, "min_relevance": 0, "include_associations": false},
			{"query": "invoices euros customer", "domain": "billing", "min_relevance": 0},
			{"query": "deploy pipeline Friday noon", "domain": "office", "min_relevance": 0.99},
		}
		r := ts.do("POST", "/memory/read-batch", key, map[string]any{"queries": queries})
		mustStatus(t, r, 200)
		if got := strings.Join(keys(r.Body), ","); got != "results" {
			t.Errorf("read-batch keys %s", got)
		}
		res := list(r.Body["results"])
		if len(res) != len(queries) {
			t.Fatalf("%d results, want %d", len(res), len(queries))
		}
		sub := func(i int) resp { return resp{Status: 200, Body: obj(res[i])} }
		for i := range res {
			for _, k := range []string{"items", "episodic_hit", "query_concepts", "expanded_concepts", "search_time_ms"} {
				if _, ok := obj(res[i])[k]; !ok {
					t.Errorf("result %d lacks %q", i, k)
				}
			}
		}
		if ids := itemIDs(sub(0)); len(ids) != 1 || ids[0] != coffee {
			t.Errorf("result 0 (top_k 1): %v, want [%s]", ids, coffee)
		}
		ids := itemIDs(sub(1))
		if len(ids) != 3 || ids[0] != deploy {
			t.Errorf("result 1 (ops, top_k 3): %v, want 3 items led by %s", ids, deploy)
		}
		for _, it := range items(sub(1)) {
			if it["domain"] != "ops" {
				t.Errorf("result 1 item outside ops: %v", it)
			}
		}
		if ids := itemIDs(sub(2)); len(ids) != 1 || ids[0] != invoice {
			t.Errorf("result 2 (billing): %v, want [%s]", ids, invoice)
		}
		if ids := itemIDs(sub(3)); len(ids) != 0 {
			t.Errorf("result 3 (office, min_relevance 0.99): %v, want none", ids)
		}
		// The same reads one by one give the same items.
		for i, q := range queries {
			one := ts.do("POST", "/memory/read", key, q)
			mustStatus(t, one, 200)
			if a, b := fmt.Sprint(itemIDs(one)), fmt.Sprint(itemIDs(sub(i))); a != b {
				t.Errorf("query %d: read %s, read-batch %s", i, a, b)
			}
		}
	})

	t.Run("validation locates the query", func(t *testing.T) {
		r := ts.do("POST", "/memory/read-batch", key, map[string]any{"queries": []any{
			map[string]any{"query": "fine"}, map[string]any{"query": "bad", "top_k": 0}}})
		checkValidation(t, r, "body", "queries", "1", "top_k")
		r = ts.do("POST", "/memory/read-batch", key, map[string]any{"queries": []any{map[string]any{"top_k": 3}}})
		checkValidation(t, r, "body", "queries", "0", "query")
	})

	t.Run("room domain is 400 with the exact message", func(t *testing.T) {
		r := ts.do("POST", "/memory/read-batch", key, map[string]any{"queries": []any{
			map[string]any{"query": "fine"}, map[string]any{"query": "room", "domain": testRoom}}})
		checkValidationMessage(t, r, roomOnV2Msg)
		memHasLoc(t, r, "body.queries.1.domain")
	})

	t.Run("unknown fields ignored", func(t *testing.T) {
		r := ts.do("POST", "/memory/read-batch", key, map[string]any{"queries": []any{map[string]any{"query": "coffee", "zzz": 1}}, "yyy": true})
		mustStatus(t, r, 200)
	})
}

func testQuery(t *testing.T, ts *testServer) {
	_, key := ts.newOrg("query")
	type atom struct {
		content, domain string
		meta            map[string]any
	}
	atoms := map[string]atom{
		"a": {"Release checklist for the payments service", "alpha", map[string]any{"team": "payments", "priority": 1, "tags": []any{"release", "checklist"}, "owner": map[string]any{"name": "Dana Smith", "site": "berlin"}}},
		"b": {"Release checklist for the search service", "beta", map[string]any{"team": "search", "priority": 2, "tags": []any{"release"}, "owner": map[string]any{"name": "Lee Park", "site": "seoul"}}},
		"c": {"Release checklist for the billing service", "gamma", map[string]any{"team": "billing", "priority": 1, "tags": []any{"audit"}, "owner": map[string]any{"name": "Dana Ortiz", "site": "berlin"}}},
		"d": {"Release checklist for the mobile service", "alpha", nil},
	}
	ids := map[string]string{}
	for name, a := range atoms {
		extra := map[string]any{"domain": a.domain}
		if a.meta != nil {
			extra["metadata"] = a.meta
		}
		ids[name] = memWrite(t, ts, key, a.content, extra)
	}
	names := func(r resp) string {
		var out []string
		for _, id := range itemIDs(r) {
			for n, x := range ids {
				if x == id {
					out = append(out, n)
				}
			}
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	query := func(extra map[string]any) resp {
		body := map[string]any{"query": "release checklist service", "min_relevance": 0, "top_k": 20}
		for k, v := range extra {
			body[k] = v
		}
		return ts.do("POST", "/memory/query", key, body)
	}
	cond := func(field, op string, value any) map[string]any {
		return map[string]any{"field": field, "op": op, "value": value}
	}

	t.Run("response is a read response", func(t *testing.T) {
		r := query(nil)
		mustStatus(t, r, 200)
		for _, k := range []string{"items", "episodic_hit", "query_concepts", "expanded_concepts", "search_time_ms"} {
			if _, ok := r.Body[k]; !ok {
				t.Errorf("query response lacks %q: %s", k, r.Raw)
			}
		}
		if got := names(r); got != "a,b,c,d" {
			t.Errorf("unfiltered query: %s, want a,b,c,d", got)
		}
	})

	cases := []struct {
		name  string
		extra map[string]any
		want  string
	}{
		{"domains restrict", map[string]any{"domains": []string{"alpha", "gamma"}}, "a,c,d"},
		{"one domain", map[string]any{"domains": []string{"beta"}}, "b"},
		{"unknown domain", map[string]any{"domains": []string{"nope"}}, ""},
		{"eq string", map[string]any{"metadata_filter": []any{cond("team", "eq", "payments")}}, "a"},
		{"eq number", map[string]any{"metadata_filter": []any{cond("priority", "eq", 1)}}, "a,c"},
		{"eq is exact", map[string]any{"metadata_filter": []any{cond("team", "eq", "pay")}}, ""},
		{"contains substring", map[string]any{"metadata_filter": []any{cond("team", "contains", "ar")}}, "b"},
		{"contains array membership", map[string]any{"metadata_filter": []any{cond("tags", "contains", "release")}}, "a,b"},
		{"contains array needs a whole element", map[string]any{"metadata_filter": []any{cond("tags", "contains", "rel")}}, ""},
		{"in", map[string]any{"metadata_filter": []any{cond("team", "in", []any{"search", "billing", "other"})}}, "b,c"},
		{"in numbers", map[string]any{"metadata_filter": []any{cond("priority", "in", []any{2, 3})}}, "b"},
		{"dotted eq", map[string]any{"metadata_filter": []any{cond("owner.site", "eq", "berlin")}}, "a,c"},
		{"dotted contains", map[string]any{"metadata_filter": []any{cond("owner.name", "contains", "Dana")}}, "a,c"},
		{"dotted missing key", map[string]any{"metadata_filter": []any{cond("owner.phone", "eq", "x")}}, ""},
		{"and of conditions", map[string]any{"metadata_filter": []any{cond("owner.site", "eq", "berlin"), cond("tags", "contains", "audit")}}, "c"},
		{"and with no match", map[string]any{"metadata_filter": []any{cond("team", "eq", "search"), cond("priority", "eq", 1)}}, ""},
		{"filter and domains", map[string]any{"domains": []string{"alpha"}, "metadata_filter": []any{cond("priority", "in", []any{1, 2})}}, "a"},
		{"empty filter list", map[string]any{"metadata_filter": []any{}}, "a,b,c,d"},
		{"empty domains list", map[string]any{"domains": []string{}}, "a,b,c,d"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := query(tc.extra)
			mustStatus(t, r, 200)
			if got := names(r); got != tc.want {
				t.Errorf("got %q, want %q: %s", got, tc.want, r.Raw)
			}
		})
	}

	t.Run("bad conditions are 400", func(t *testing.T) {
		bad := []struct {
			name string
			cond any
			loc  string
		}{
			{"unknown op", cond("team", "startswith", "p"), "body.metadata_filter.0.op"},
			{"op missing", map[string]any{"field": "team", "value": "x"}, "body.metadata_filter.0.op"},
			{"field missing", map[string]any{"op": "eq", "value": "x"}, "body.metadata_filter.0.field"},
			{"value missing", map[string]any{"field": "team", "op": "eq"}, "body.metadata_filter.0.value"},
			{"in without a list", cond("team", "in", "payments"), "body.metadata_filter.0.value"},
			{"condition not an object", "team=payments", "body.metadata_filter.0"},
		}
		for _, tc := range bad {
			t.Run(tc.name, func(t *testing.T) {
				r := query(map[string]any{"metadata_filter": []any{tc.cond}})
				checkValidation(t, r)
				memHasLoc(t, r, tc.loc)
			})
		}
	})

	t.Run("room domain is 400 with the exact message", func(t *testing.T) {
		r := query(map[string]any{"domains": []string{"alpha", testRoom}})
		checkValidationMessage(t, r, roomOnV2Msg)
		memHasLoc(t, r, "body.domains.1")
	})

	t.Run("query bounds", func(t *testing.T) {
		checkValidation(t, ts.do("POST", "/memory/query", key, map[string]any{"top_k": 3}), "body", "query")
		checkValidation(t, query(map[string]any{"top_k": 0}), "body", "top_k")
		checkValidation(t, query(map[string]any{"diversity": 2}), "body", "diversity")
		checkValidation(t, query(map[string]any{"domains": []string{strings.Repeat("d", 101)}}), "body", "domains", "0")
		checkValidation(t, query(map[string]any{"domains": []any{"alpha", nil}}), "body", "domains", "1")
	})
}
