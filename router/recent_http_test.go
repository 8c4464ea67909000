package router_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// memFeed walks the whole recent feed of key with the given page size and
// request extras, returning the items in order; it fails on a page whose
// cursor repeats or a walk that does not end.
func memFeed(t *testing.T, ts *testServer, key string, limit int, extra map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for page := 0; page < 10000; page++ {
		body := map[string]any{"limit": limit}
		for k, v := range extra {
			body[k] = v
		}
		if cursor != "" {
			body["cursor"] = cursor
		}
		r := ts.do("POST", "/memory/recent", key, body)
		if r.Status != 200 {
			t.Errorf("recent page %d: status %d: %s", page, r.Status, r.Raw)
			return out
		}
		its := items(r)
		if len(its) > limit {
			t.Errorf("page of %d items with limit %d", len(its), limit)
		}
		out = append(out, its...)
		next, _ := r.Body["next_cursor"].(string)
		if r.Body["next_cursor"] == nil {
			return out
		}
		if len(its) != limit {
			t.Errorf("short page (%d of %d) with a next_cursor", len(its), limit)
		}
		if next == "" || next == cursor {
			t.Errorf("bad next_cursor %v after %q", r.Body["next_cursor"], cursor)
			return out
		}
		cursor = next
	}
	t.Errorf("feed walk did not end")
	return out
}

func memFeedIDs(its []map[string]any) []string {
	out := make([]string, len(its))
	for i, it := range its {
		out[i] = str(it["atom_id"])
	}
	return out
}

func TestRecentHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	t.Run("feed", func(t *testing.T) { testRecentFeed(t, ts) })
	t.Run("paging under concurrent writes", func(t *testing.T) { testRecentPaging(t, ts) })
}

func testRecentFeed(t *testing.T, ts *testServer) {
	_, key := ts.newOrg("recent")
	var ids []string // oldest first
	for i := 0; i < 25; i++ {
		d := "even"
		if i%2 == 1 {
			d = "odd"
		}
		ids = append(ids, memWrite(t, ts, key, fmt.Sprintf("Feed entry number %d about topic t%d", i, i), map[string]any{"domain": d}))
	}
	newestFirst := make([]string, len(ids))
	for i, id := range ids {
		newestFirst[len(ids)-1-i] = id
	}

	t.Run("empty feed", func(t *testing.T) {
		_, empty := ts.newOrg("recent-empty")
		r := ts.do("POST", "/memory/recent", empty, map[string]any{})
		mustStatus(t, r, 200)
		if string(r.Raw) != `{"items":[],"next_cursor":null}` {
			t.Errorf("empty feed body %s", r.Raw)
		}
	})

	t.Run("default limit 20, newest first, item shape", func(t *testing.T) {
		r := ts.do("POST", "/memory/recent", key, map[string]any{})
		mustStatus(t, r, 200)
		got := itemIDs(r)
		if fmt.Sprint(got) != fmt.Sprint(newestFirst[:20]) {
			t.Errorf("first page %v, want %v", got, newestFirst[:20])
		}
		// Every field is optional, so no body at all is the same request.
		if bare := ts.do("POST", "/memory/recent", key, nil); bare.Status != 200 || fmt.Sprint(itemIDs(bare)) != fmt.Sprint(got) {
			t.Errorf("no body: %d %s", bare.Status, bare.Raw)
		}
		if _, ok := r.Body["next_cursor"].(string); !ok {
			t.Errorf("next_cursor %v, want a string", r.Body["next_cursor"])
		}
		it := items(r)[0]
		if k := strings.Join(keys(it), ","); k != "atom_id,concepts,content,created_at,domain" {
			t.Errorf("recent item keys %s", k)
		}
		a := memAtom(t, ts, key, str(it["atom_id"]))
		if it["created_at"] != a["created_at"] || it["content"] != a["content"] || it["domain"] != a["domain"] {
			t.Errorf("feed item %v disagrees with the atom %v", it, a)
		}
	})

	t.Run("limit bounds", func(t *testing.T) {
		for _, n := range []any{0, 101, -1, 2.5, "5"} {
			checkValidation(t, ts.do("POST", "/memory/recent", key, map[string]any{"limit": n}), "body", "limit")
		}
		for _, n := range []int{1, 100} {
			r := ts.do("POST", "/memory/recent", key, map[string]any{"limit": n})
			mustStatus(t, r, 200)
			if want := min(n, len(ids)); len(items(r)) != want {
				t.Errorf("limit %d: %d items, want %d", n, len(items(r)), want)
			}
		}
	})

	t.Run("paging visits every atom once, then next_cursor null", func(t *testing.T) {
		for _, limit := range []int{1, 4, 5, 25, 100} {
			got := memFeedIDs(memFeed(t, ts, key, limit, nil))
			if fmt.Sprint(got) != fmt.Sprint(newestFirst) {
				t.Errorf("limit %d walk %v, want %v", limit, got, newestFirst)
			}
		}
		// An exact last page has no cursor.
		r := ts.do("POST", "/memory/recent", key, map[string]any{"limit": 25})
		if r.Body["next_cursor"] != nil {
			t.Errorf("exact last page carries next_cursor %v", r.Body["next_cursor"])
		}
	})

	t.Run("domain", func(t *testing.T) {
		got := memFeed(t, ts, key, 4, map[string]any{"domain": "odd"})
		if len(got) != 12 {
			t.Errorf("odd domain: %d items, want 12", len(got))
		}
		for _, it := range got {
			if it["domain"] != "odd" {
				t.Errorf("item outside the domain: %v", it)
			}
		}
		r := ts.do("POST", "/memory/recent", key, map[string]any{"domain": "nope"})
		mustStatus(t, r, 200)
		if len(items(r)) != 0 || r.Body["next_cursor"] != nil {
			t.Errorf("unknown domain: %s", r.Raw)
		}
	})

	t.Run("since and until are inclusive on server-issued created_at", func(t *testing.T) {
		created := func(i int) string { return str(memAtom(t, ts, key, ids[i])["created_at"]) }
		lo, hi := created(5), created(9)
		// offset writes the same instant at UTC+02:00.
		offset := func(s string) string {
			ti, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				t.Fatalf("created_at %q: %v", s, err)
			}
			return ti.In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano)
		}
		cases := []struct {
			name  string
			extra map[string]any
			want  []string
		}{
			{"since", map[string]any{"since": created(20)}, newestFirst[:5]},
			{"until", map[string]any{"until": created(3)}, newestFirst[21:]},
			{"both", map[string]any{"since": lo, "until": hi}, newestFirst[15:20]},
			{"one instant", map[string]any{"since": lo, "until": lo}, []string{ids[5]}},
			{"since after until", map[string]any{"since": hi, "until": lo}, nil},
			{"naive datetime is UTC", map[string]any{"since": strings.TrimSuffix(created(20), "Z")}, newestFirst[:5]},
			{"offset instant", map[string]any{"until": offset(created(3))}, newestFirst[21:]},
			// Finer than a microsecond: 100 ns after an item leaves it out
			// of since, 100 ns before it leaves it out of until.
			{"since finer than a stamp", map[string]any{"since": strings.TrimSuffix(created(20), "Z") + "1Z"}, newestFirst[:4]},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				for _, limit := range []int{2, 100} {
					got := memFeedIDs(memFeed(t, ts, key, limit, tc.extra))
					if fmt.Sprint(got) != fmt.Sprint(tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
						t.Errorf("limit %d: %v, want %v", limit, got, tc.want)
					}
				}
			})
		}
		for _, bad := range []string{"yesterday", "2026-13-01T00:00:00Z"} {
			checkValidation(t, ts.do("POST", "/memory/recent", key, map[string]any{"since": bad}), "body", "since")
			checkValidation(t, ts.do("POST", "/memory/recent", key, map[string]any{"until": bad}), "body", "until")
		}
	})

	t.Run("bad cursor is 400", func(t *testing.T) {
		for _, c := range []string{"not-a-cursor", "AAAA", "!!!!", strings.Repeat("A", 40)} {
			checkValidation(t, ts.do("POST", "/memory/recent", key, map[string]any{"cursor": c}), "body", "cursor")
		}
		checkValidation(t, ts.do("POST", "/memory/recent", key, map[string]any{"cursor": 5}), "body", "cursor")
	})

	t.Run("room and non-canonical domains", func(t *testing.T) {
		r := ts.do("POST", "/memory/recent", key, map[string]any{"domain": testRoom})
		checkEnvelope(t, r, 404, "NOT_FOUND")
		checkValidationMessage(t, ts.do("POST", "/memory/recent", key, map[string]any{"domain": " xroom:room_x"}), nonCanonicalRoomMsg)
	})
}

// testRecentPaging pages the feed while 1,000 atoms are written
// concurrently: every walk sees each atom acknowledged before it started
// exactly once, in strictly decreasing created_at order.
func testRecentPaging(t *testing.T, ts *testServer) {
	_, key := ts.newOrg("paging")
	const (
		writers   = 8
		perWriter = 125
		batchSize = 5
		pageLimit = 7
	)
	var (
		mu    sync.Mutex
		acked []string // atom IDs whose write answered
	)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for b := 0; b < perWriter/batchSize; b++ {
				its := make([]map[string]any, batchSize)
				for i := range its {
					n := b*batchSize + i
					its[i] = map[string]any{"content": fmt.Sprintf("writer w%d wrote entry e%d with code c%dq%d", w, n, w, n)}
				}
				r := ts.do("POST", "/memory/write-batch", key, map[string]any{"items": its})
				if r.Status != 200 || num(r.Body["stored_count"]) != batchSize {
					errs <- fmt.Errorf("writer %d batch %d: %d %s", w, b, r.Status, r.Raw)
					return
				}
				mu.Lock()
				for _, x := range list(r.Body["results"]) {
					acked = append(acked, str(obj(x)["atom_id"]))
				}
				mu.Unlock()
			}
		}(w)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	check := func(walk int, before []string, got []map[string]any) {
		t.Helper()
		seen := make(map[string]bool, len(got))
		prev := ""
		for i, it := range got {
			id, c := str(it["atom_id"]), str(it["created_at"])
			if seen[id] {
				t.Fatalf("walk %d: atom %s seen twice", walk, id)
			}
			seen[id] = true
			if i > 0 && c >= prev {
				t.Fatalf("walk %d: created_at not strictly decreasing at %d: %s then %s", walk, i, prev, c)
			}
			prev = c
		}
		for _, id := range before {
			if !seen[id] {
				t.Fatalf("walk %d: atom %s acknowledged before the walk is missing (%d of %d seen)", walk, id, len(got), len(before))
			}
		}
	}
	walks, partial := 0, 0
	for running := true; running; {
		select {
		case <-done:
			running = false
			continue
		default:
		}
		mu.Lock()
		before := append([]string(nil), acked...)
		mu.Unlock()
		got := memFeed(t, ts, key, pageLimit, nil)
		check(walks, before, got)
		if len(got) < writers*perWriter {
			partial++
		}
		walks++
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	final := memFeed(t, ts, key, pageLimit, nil)
	check(walks, acked, final)
	if len(final) != writers*perWriter || len(acked) != writers*perWriter {
		t.Fatalf("final walk saw %d atoms, %d acknowledged, want %d", len(final), len(acked), writers*perWriter)
	}
	t.Logf("%d walks during the writes (%d saw a partial feed)", walks, partial)
	if partial == 0 {
		t.Logf("no walk overlapped the writes; the concurrent part was not exercised")
	}
}
