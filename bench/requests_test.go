package bench

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestIDPool(t *testing.T) {
	p := newIDPool()
	p.harvest([]byte(`{"results":[{"atom_id":"a"},{"atom_id":null},{"atom_id":"b"}]}`))
	p.harvestFirst([]byte(`{"items":[{"atom_id":"c"},{"atom_id":"d"}]}`))
	p.harvestFirst([]byte(`{"items":[]}`))
	if p.len() != 3 {
		t.Fatalf("pool holds %d IDs, want a, b, c", p.len())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		ids := p.pick(rng, 3)
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] || !strings.Contains("abc", id) {
				t.Fatalf("pick gave %v", ids)
			}
			seen[id] = true
		}
	}
	for i := range idPoolSize + 10 {
		p.add(string(rune('A' + i%26)))
	}
	if p.len() != idPoolSize {
		t.Errorf("pool grew to %d, cap %d", p.len(), idPoolSize)
	}
	var nilPool *idPool
	nilPool.add("x")
	nilPool.harvest([]byte(`"atom_id":"x"`))
	if nilPool.pick(rng, 2) != nil || nilPool.len() != 0 {
		t.Error("a nil pool holds something")
	}
}

func TestRequests(t *testing.T) {
	g := NewTextGen(1)
	pool := newIDPool()
	tests := []struct {
		name    string
		req     Request
		op      string
		path    string
		answer  string
		wantTag string
	}{
		{name: "write stored", req: writeRequest("k", g.items(StreamWrite, 0, 1)[0], pool), op: OpWrite,
			path: "/memory/write", answer: `{"stored":true,"atom_id":"w1"}`},
		{name: "write filtered", req: writeRequest("k", g.items(StreamWrite, 0, 1)[0], pool), op: OpWrite,
			path: "/memory/write", answer: `{"stored":false,"atom_id":null}`, wantTag: "filtered"},
		{name: "batch", req: batchRequest("k", g.items(StreamWrite, 0, 3), pool), op: OpWriteBatch,
			path: "/memory/write-batch", answer: `{"results":[{"stored":true,"atom_id":"b1"}]}`},
		{name: "search hit", req: searchRequest("k", "q", pool), op: OpSearch, path: "/memory/read",
			answer: `{"items":[{"atom_id":"s1"}]}`},
		{name: "search empty", req: searchRequest("k", "q", pool), op: OpSearch, path: "/memory/read",
			answer: `{"items":[]}`, wantTag: "empty"},
		{name: "feedback", req: feedbackRequest("k", []string{"x"}, 0.5), op: OpFeedback, path: "/memory/feedback"},
		{name: "recent", req: recentRequest("k"), op: OpRecent, path: "/memory/recent"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req
			if r.Op != tc.op || r.Path != tc.path || r.Method != "POST" || r.Key != "k" {
				t.Errorf("request %s %s %s key %q", r.Op, r.Method, r.Path, r.Key)
			}
			if !json.Valid(r.Body) {
				t.Errorf("body is not JSON: %s", r.Body)
			}
			if r.OnResponse != nil {
				if tag := r.OnResponse(200, []byte(tc.answer)); tag != tc.wantTag {
					t.Errorf("tag %q, want %q", tag, tc.wantTag)
				}
			}
		})
	}
	if pool.len() != 3 {
		t.Errorf("pool holds %d IDs, want w1, b1, s1", pool.len())
	}
}

func TestDomainOf(t *testing.T) {
	g := func(stream, i, domains uint64, want string) {
		t.Helper()
		if got := domainOf(stream, i, domains); got != want {
			t.Errorf("domainOf(%d, %d, %d) = %q, want %q", stream, i, domains, got, want)
		}
	}
	f := func(stream, i uint64, want string) { t.Helper(); g(stream, i, 0, want) }
	f(StreamPopulate, 0, "bench-p000")
	f(StreamPopulate, domainSpan-1, "bench-p000")
	f(StreamPopulate, domainSpan, "bench-p001")
	f(StreamWrite, 3*domainSpan+5, "bench-w003")
	f(StreamTenant+4, 1, "bench-p000")
	// Shared domains: writes land where the populate put its texts.
	g(StreamPopulate, 41, 20, "bench-d001")
	g(StreamWrite, 41, 20, "bench-d001")
	g(StreamWrite, 7, 1, "bench-d000")
}

func TestSearchTime(t *testing.T) {
	tests := []struct {
		body string
		want time.Duration
		ok   bool
	}{
		{`{"items":[],"search_time_ms":1.234}`, 1234 * time.Microsecond, true},
		{`{"search_time_ms": 0.5 ,"n_db_roundtrips":1}`, 500 * time.Microsecond, true},
		// An item's metadata holding the key comes before the field.
		{`{"items":[{"metadata":{"search_time_ms":99}}],"search_time_ms":2}`, 2 * time.Millisecond, true},
		{`{"items":[]}`, 0, false},
		{`{"search_time_ms":"fast"}`, 0, false},
		{`{"search_time_ms":-1}`, 0, false},
		{`{"search_time_ms":NaN}`, 0, false},
		{`{"search_time_ms":1e300}`, 0, false},
		{`{"search_time_ms":1`, 0, false}, // cut short
		{``, 0, false},
	}
	for _, tc := range tests {
		got, ok := searchTime([]byte(tc.body))
		if got != tc.want || ok != tc.ok {
			t.Errorf("searchTime(%s) = %v, %v; want %v, %v", tc.body, got, ok, tc.want, tc.ok)
		}
	}
}
