package router_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestReadBatchStreamsLargeReplies: a read-batch whose reply is large is
// streamed (no Content-Length: built whole it was held twice, and 507 MB
// replies took the server to 2.8 GB) and says exactly what the reads say
// one by one; a small one is sent whole as before.
func TestReadBatchStreamsLargeReplies(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, key := ts.newOrg("stream")
	const n = 80
	blob := strings.Repeat("m", 60_000)
	for b := 0; b < 2; b++ {
		items := memItems(fmt.Sprintf("bulk part %d", b), n/2, map[string]any{"domain": "bulk"})
		for i, it := range items {
			it["metadata"] = map[string]any{"blob": blob, "n": b*n/2 + i}
		}
		r := ts.do("POST", "/memory/write-batch", key, map[string]any{"items": items})
		mustStatus(t, r, 200)
	}
	q := func(query string) map[string]any {
		return map[string]any{"query": query, "domain": "bulk", "top_k": n, "min_relevance": 0, "include_associations": false}
	}
	queries := []map[string]any{q("bulk item carries marker"), q("part 1 item 7"), q("marker m3x24")}

	r := ts.do("POST", "/memory/read-batch", key, map[string]any{"queries": queries})
	mustStatus(t, r, 200)
	if cl := r.Header.Get("Content-Length"); cl != "" {
		t.Errorf("a %d-byte reply was sent whole (Content-Length %s), not streamed", len(r.Raw), cl)
	}
	if r.Body == nil || len(r.Body) != 1 {
		t.Fatalf("streamed reply is not one JSON object with results: %.200s", r.Raw)
	}
	results := list(r.Body["results"])
	if len(results) != len(queries) {
		t.Fatalf("%d results for %d queries", len(results), len(queries))
	}
	for i, query := range queries {
		one := ts.do("POST", "/memory/read", key, query)
		mustStatus(t, one, 200)
		got, want := obj(results[i]), one.Body
		if len(list(got["items"])) != n {
			t.Errorf("query %d: %d items, want %d", i, len(list(got["items"])), n)
		}
		for _, m := range []map[string]any{got, want} {
			delete(m, "search_time_ms")
			for _, it := range list(m["items"]) {
				delete(obj(it), "relevance") // a read's accesses may move the next one's scores
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("query %d: the streamed result differs from /memory/read's", i)
		}
	}

	small := ts.do("POST", "/memory/read-batch", key, map[string]any{"queries": []any{
		map[string]any{"query": "marker", "domain": "bulk", "top_k": 2}}})
	mustStatus(t, small, 200)
	if small.Header.Get("Content-Length") == "" {
		t.Error("a small reply was streamed")
	}
}
