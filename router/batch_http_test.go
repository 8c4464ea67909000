package router_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Helpers shared by the memory API tests (the mem prefix keeps them apart
// from the harness and the other test files).

// memWrite stores content under key and returns the atom ID; it fails the
// test unless the write is stored.
func memWrite(t *testing.T, ts *testServer, key, content string, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"content": content}
	for k, v := range extra {
		body[k] = v
	}
	r := ts.do("POST", "/memory/write", key, body)
	mustStatus(t, r, 200)
	if r.Body["stored"] != true {
		t.Fatalf("write %q not stored: %s", content, r.Raw)
	}
	return str(r.Body["atom_id"])
}

// memAtom returns the full envelope of an atom by ID.
func memAtom(t *testing.T, ts *testServer, key, id string) map[string]any {
	t.Helper()
	r := ts.do("GET", "/memory/atoms/"+id, key, nil)
	mustStatus(t, r, 200)
	return r.Body
}

// memTotal is stats total_atoms of key's account.
func memTotal(t *testing.T, ts *testServer, key string) int {
	t.Helper()
	r := ts.do("GET", "/memory/stats", key, nil)
	mustStatus(t, r, 200)
	return int(num(r.Body["total_atoms"]))
}

// memItems builds n write items with distinct contents.
func memItems(prefix string, n int, extra map[string]any) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		it := map[string]any{"content": fmt.Sprintf("%s item %d carries marker m%dx%d", prefix, i, i, i*7+3)}
		for k, v := range extra {
			it[k] = v
		}
		out[i] = it
	}
	return out
}

// memFind returns the item of a read response with that atom ID.
func memFind(r resp, id string) map[string]any {
	for _, it := range items(r) {
		if it["atom_id"] == id {
			return it
		}
	}
	return nil
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return b
}

// memHasLoc asserts a details.errors entry at loc (dotted).
func memHasLoc(t *testing.T, r resp, loc string) {
	t.Helper()
	for _, e := range fieldErrors(t, r) {
		if locString(e["loc"]) == loc {
			return
		}
	}
	t.Errorf("no details.errors entry at %s: %s", loc, r.Raw)
}

// memApplied is the applied index of the group that holds tenant.
func memApplied(t *testing.T, ts *testServer, tenant string) float64 {
	t.Helper()
	p := ts.admin("GET", "/admin/v1/placement?tenant="+tenant, nil)
	mustStatus(t, p, 200)
	c := ts.admin("GET", "/admin/v1/cluster", nil)
	mustStatus(t, c, 200)
	for _, g := range list(c.Body["groups"]) {
		if m := obj(g); m["group_id"] == p.Body["group_id"] {
			return num(m["applied_index"])
		}
	}
	t.Fatalf("group %v not in %s", p.Body["group_id"], c.Raw)
	return 0
}

// quietApplied waits until the applied index of the tenant's group
// has not moved for 300 ms, and returns it.
func quietApplied(t *testing.T, ts *testServer, tenant string) float64 {
	t.Helper()
	last, since := memApplied(t, ts, tenant), time.Now()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		cur := memApplied(t, ts, tenant)
		if cur != last || cur == 0 {
			last, since = cur, time.Now()
			continue
		}
		if time.Since(since) >= 300*time.Millisecond {
			return cur
		}
	}
	t.Fatalf("group of %s never settled (applied index %v)", tenant, last)
	return 0
}

func memReason(r resp) string { return str(obj(r.Body["details"])["reason"]) }

// checkBatchResult asserts the §2.3 shape and returns the results.
func checkBatchResult(t *testing.T, r resp, total int) []map[string]any {
	t.Helper()
	mustStatus(t, r, 200)
	if got := strings.Join(keys(r.Body), ","); got != "results,stored_count,total_count" {
		t.Fatalf("batch result keys %s: %s", got, r.Raw)
	}
	if int(num(r.Body["total_count"])) != total {
		t.Errorf("total_count %v, want %d", r.Body["total_count"], total)
	}
	res := list(r.Body["results"])
	if len(res) != total {
		t.Fatalf("%d results, want %d", len(res), total)
	}
	out := make([]map[string]any, total)
	stored := 0
	for i, x := range res {
		it := obj(x)
		out[i] = it
		if got := strings.Join(keys(it), ","); got != "atom_id,error,importance,index,reason,stored" {
			t.Fatalf("result %d keys %s", i, got)
		}
		if int(num(it["index"])) != i {
			t.Errorf("result %d has index %v", i, it["index"])
		}
		if it["error"] != nil {
			t.Errorf("result %d error %v, want null", i, it["error"])
		}
		if imp, ok := it["importance"].(float64); !ok || imp < 0 || imp > 1 {
			t.Errorf("result %d importance %v", i, it["importance"])
		}
		if it["stored"] == true {
			stored++
			if !uuidRE.MatchString(str(it["atom_id"])) {
				t.Errorf("stored result %d atom_id %v", i, it["atom_id"])
			}
			if it["reason"] != "" {
				t.Errorf("stored result %d reason %q, want empty", i, it["reason"])
			}
		}
	}
	if int(num(r.Body["stored_count"])) != stored {
		t.Errorf("stored_count %v, want %d", r.Body["stored_count"], stored)
	}
	return out
}

func TestWriteBatchHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	t.Run("batch routes", func(t *testing.T) { testBatchRoutes(t, ts) })
	// Last: it restarts the server.
	t.Run("idempotency", func(t *testing.T) { testIdempotency(t, ts) })
}

func testBatchRoutes(t *testing.T, ts *testServer) {
	_, key := ts.newOrg("batch")

	for _, rt := range []struct{ route, word string }{{"/memory/write-batch", "hyphen"}, {"/memory/write_batch", "underscore"}} {
		route := rt.route
		t.Run(route, func(t *testing.T) {
			t.Run("item count bounds", func(t *testing.T) {
				cases := []struct {
					name string
					body any
				}{
					{"missing", map[string]any{}},
					{"zero", map[string]any{"items": []any{}}},
					{"501", map[string]any{"items": memItems("over", 501, nil)}},
					{"not a list", map[string]any{"items": "x"}},
				}
				before := memTotal(t, ts, key)
				for _, tc := range cases {
					t.Run(tc.name, func(t *testing.T) {
						checkValidation(t, ts.do("POST", route, key, tc.body), "body", "items")
					})
				}
				if after := memTotal(t, ts, key); after != before {
					t.Errorf("total_atoms %d -> %d after refused batches", before, after)
				}
			})

			t.Run("one item", func(t *testing.T) {
				r := ts.do("POST", route, key, map[string]any{"items": memItems(rt.word+" single", 1, nil)})
				res := checkBatchResult(t, r, 1)
				if res[0]["stored"] != true {
					t.Errorf("single item not stored: %s", r.Raw)
				}
			})

			t.Run("stored, gate-refused and existing external_ref", func(t *testing.T) {
				ref := "ref-" + rt.word
				existing := memWrite(t, ts, key, "Existing atom behind "+ref, map[string]any{"external_ref": ref})
				dup := "The " + rt.word + " duplicate sentence about the lighthouse keeper"
				r := ts.do("POST", route, key, map[string]any{"items": []map[string]any{
					{"content": dup, "domain": "dups"},
					{"content": dup, "domain": "dups"},
					{"content": "Another write under an existing ref", "external_ref": ref},
				}})
				res := checkBatchResult(t, r, 3)
				if res[0]["stored"] != true {
					t.Fatalf("first copy not stored: %s", r.Raw)
				}
				if res[1]["stored"] != false || res[1]["atom_id"] != nil || res[1]["importance"] != 0.0 ||
					!strings.Contains(str(res[1]["reason"]), str(res[0]["atom_id"])) {
					t.Errorf("second copy should be refused by the gate naming the first: %v", res[1])
				}
				if res[2]["stored"] != false || res[2]["atom_id"] != existing || res[2]["reason"] != "external_ref exists" {
					t.Errorf("existing external_ref: %v", res[2])
				}
				if num(r.Body["stored_count"]) != 1 {
					t.Errorf("stored_count %v, want 1", r.Body["stored_count"])
				}
			})

			t.Run("secret external_ref fails the whole request", func(t *testing.T) {
				before := memTotal(t, ts, key)
				its := memItems(rt.word+" secret", 3, nil)
				its[1]["external_ref"] = "secret:api-token"
				r := ts.do("POST", route, key, map[string]any{"items": its})
				errs := checkValidation(t, r, "body", "items", "1", "external_ref")
				if len(errs) != 1 {
					t.Errorf("%d details.errors entries, want 1: %s", len(errs), r.Raw)
				}
				if after := memTotal(t, ts, key); after != before {
					t.Errorf("total_atoms %d -> %d: something was written", before, after)
				}
				// "Secret:" is not the reserved prefix (exact, case-sensitive).
				its = memItems(rt.word+" secret-case", 1, map[string]any{"external_ref": "Secret:" + rt.word})
				res := checkBatchResult(t, ts.do("POST", route, key, map[string]any{"items": its}), 1)
				if res[0]["stored"] != true {
					t.Errorf("Secret: (capital S) refused: %v", res[0])
				}
			})

			t.Run("supersedes on an item is 422", func(t *testing.T) {
				target := memWrite(t, ts, key, "Target of a batch supersede on "+rt.word, nil)
				before := memTotal(t, ts, key)
				its := memItems(rt.word+" supersede", 2, nil)
				its[1]["supersedes"] = []string{target}
				r := ts.do("POST", route, key, map[string]any{"items": its})
				checkEnvelope(t, r, 422, "VALIDATION_ERROR")
				if after := memTotal(t, ts, key); after != before {
					t.Errorf("total_atoms %d -> %d: something was written", before, after)
				}
				if a := memAtom(t, ts, key, target); a["superseded_by"] != nil {
					t.Errorf("target was superseded: %v", a)
				}
			})

			t.Run("invalid item and unknown field", func(t *testing.T) {
				cases := []struct {
					name string
					item map[string]any
					loc  []string
				}{
					{"empty content", map[string]any{"content": ""}, []string{"body", "items", "1", "content"}},
					{"missing content", map[string]any{"domain": "x"}, []string{"body", "items", "1", "content"}},
					{"long domain", map[string]any{"content": "c", "domain": strings.Repeat("d", 101)}, []string{"body", "items", "1", "domain"}},
					{"unknown field", map[string]any{"content": "c", "colour": "red"}, []string{"body", "items", "1", "colour"}},
				}
				for _, tc := range cases {
					t.Run(tc.name, func(t *testing.T) {
						its := []map[string]any{{"content": "valid first item of " + tc.name}, tc.item}
						checkValidation(t, ts.do("POST", route, key, map[string]any{"items": its}), tc.loc...)
					})
				}
				checkValidation(t, ts.do("POST", route, key, map[string]any{"items": memItems("x", 1, nil), "extra": 1}), "body", "extra")
			})

			t.Run("non-canonical or malformed room address", func(t *testing.T) {
				// write-batch takes no room address, well-formed or not, and
				// answers as query and read-batch do (§7.3), with one error.
				for domain, msg := range map[string]string{
					"XROOM:room_01hzzzzzzzzzzzzzzzzzzzzzzz": nonCanonicalRoomMsg,
					"xroom:bad!":                            "Malformed room id: bad!",
				} {
					if route == "/memory/write-batch" {
						msg = "xroom: rooms are only supported on the v2 memory API (/memory/write, /memory/read)."
					}
					its := memItems(rt.word+" noncanon", 2, nil)
					its[1]["domain"] = domain
					r := ts.do("POST", route, key, map[string]any{"items": its})
					checkValidationMessage(t, r, msg)
					if errs, _ := obj(r.Body["details"])["errors"].([]any); len(errs) != 1 {
						t.Errorf("%s: %d errors: %s", domain, len(errs), r.Raw)
					}
				}
			})
		})
	}

	t.Run("write-batch refuses room domains", func(t *testing.T) {
		const msg = "xroom: rooms are only supported on the v2 memory API (/memory/write, /memory/read)."
		before := memTotal(t, ts, key)
		its := memItems("room on hyphen", 3, nil)
		its[2]["domain"] = "xroom:room_01hzzzzzzzzzzzzzzzzzzzzzzz"
		r := ts.do("POST", "/memory/write-batch", key, map[string]any{"items": its})
		checkValidationMessage(t, r, msg)
		memHasLoc(t, r, "body.items.2.domain")
		if after := memTotal(t, ts, key); after != before {
			t.Errorf("total_atoms %d -> %d", before, after)
		}
	})

	t.Run("write_batch item in an unknown room is 404 for the request", func(t *testing.T) {
		before := memTotal(t, ts, key)
		its := memItems("room on underscore", 3, nil)
		its[1]["domain"] = "xroom:room_01hzzzzzzzzzzzzzzzzzzzzzzz"
		r := ts.do("POST", "/memory/write_batch", key, map[string]any{"items": its})
		checkEnvelope(t, r, 404, "NOT_FOUND")
		if r.Body["message"] != "Room not found" {
			t.Errorf("message %q, want 'Room not found'", r.Body["message"])
		}
		if after := memTotal(t, ts, key); after != before {
			t.Errorf("total_atoms %d -> %d: private items were written", before, after)
		}
	})

	t.Run("write_batch room address errors", func(t *testing.T) {
		cases := []struct {
			name, domain string
			status       int
			code, msg    string
		}{
			{"reserved id", "xroom:system", 403, "FORBIDDEN", "Invalid room address"},
			{"empty id", "xroom:", 403, "FORBIDDEN", "Invalid room address"},
			{"malformed id", "xroom:bad id!", 400, "VALIDATION_ERROR", "Malformed room id: bad id!"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := memTotal(t, ts, key)
				its := memItems("room errors "+tc.name, 2, nil)
				its[1]["domain"] = tc.domain
				r := ts.do("POST", "/memory/write_batch", key, map[string]any{"items": its})
				checkEnvelope(t, r, tc.status, tc.code)
				if r.Body["message"] != tc.msg {
					t.Errorf("message %q, want %q", r.Body["message"], tc.msg)
				}
				if after := memTotal(t, ts, key); after != before {
					t.Errorf("total_atoms %d -> %d", before, after)
				}
			})
		}
	})

	t.Run("write_batch mixes room and private items", func(t *testing.T) {
		rr := ts.do("POST", "/memory/rooms", key, map[string]any{"name": "batch room"})
		mustStatus(t, rr, 200)
		addr := str(rr.Body["address"])
		before := memTotal(t, ts, key)
		its := memItems("mixed", 3, nil)
		its[1]["domain"] = addr
		res := checkBatchResult(t, ts.do("POST", "/memory/write_batch", key, map[string]any{"items": its}), 3)
		for i, it := range res {
			if it["stored"] != true {
				t.Fatalf("item %d not stored: %v", i, it)
			}
		}
		if after := memTotal(t, ts, key); after != before+2 {
			t.Errorf("total_atoms %d -> %d, want +2 (the room item is the room's)", before, after)
		}
		rd := ts.do("POST", "/memory/recent", key, map[string]any{"domain": addr})
		mustStatus(t, rd, 200)
		if ids := itemIDs(rd); len(ids) != 1 || ids[0] != res[1]["atom_id"] {
			t.Errorf("room feed %v, want the room item %v", ids, res[1]["atom_id"])
		}
		// The room atom is not reachable by ID from the account.
		checkEnvelope(t, ts.do("GET", "/memory/atoms/"+str(res[1]["atom_id"]), key, nil), 404, "NOT_FOUND")
	})

	t.Run("500 items are one request", func(t *testing.T) {
		// Other tenants share the group and background work (access-count
		// flushes) appends entries too, so measure from a quiet index and
		// accept only an exact +1; a batch split into several entries can
		// never produce it.
		var res []map[string]any
		var k string
		for attempt := 1; ; attempt++ {
			var orgID string
			orgID, k = ts.newOrg(fmt.Sprintf("batch500-%d", attempt))
			// A group that never applied a command reports 0, not its log
			// index; one write first makes the index a log position.
			mustStatus(t, ts.do("POST", "/memory/write", k, map[string]any{"content": "warm-up atom before the bulk batch"}), 200)
			before := quietApplied(t, ts, orgID)
			r := ts.do("POST", "/memory/write-batch", k, map[string]any{"items": memItems("bulk", 500, map[string]any{"domain": "bulk"})})
			res = checkBatchResult(t, r, 500)
			after := memApplied(t, ts, orgID)
			if after == before+1 {
				break
			}
			if attempt == 3 {
				t.Fatalf("applied index of the tenant's group %v -> %v: want one Raft entry for the batch", before, after)
			}
		}
		seen := map[string]bool{}
		for i, it := range res {
			if it["stored"] != true {
				t.Fatalf("item %d not stored: %v", i, it)
			}
			seen[str(it["atom_id"])] = true
		}
		if len(seen) != 500 {
			t.Errorf("%d distinct atom IDs, want 500", len(seen))
		}
		if n := memTotal(t, ts, k); n != 501 {
			t.Errorf("total_atoms %d, want 501 (warm-up + batch)", n)
		}
		// Atoms of one batch keep strictly increasing created_at.
		feed := ts.do("POST", "/memory/recent", k, map[string]any{"limit": 100})
		mustStatus(t, feed, 200)
		prev := ""
		for _, it := range items(feed) {
			c := str(it["created_at"])
			if prev != "" && c >= prev {
				t.Fatalf("created_at not strictly decreasing in the feed: %s then %s", prev, c)
			}
			prev = c
		}
	})

	t.Run("write_batch has no idempotency", func(t *testing.T) {
		_, k := ts.newOrg("noidem")
		h := http.Header{}
		h.Set("X-Api-Key", k)
		h.Set("Idempotency-Key", "same-key")
		first := ts.doH("POST", "/memory/write_batch", h, map[string]any{"items": memItems("first", 3, nil)})
		checkBatchResult(t, first, 3)
		// Same key, other body: no 409, the items are written.
		second := ts.doH("POST", "/memory/write_batch", h, map[string]any{"items": memItems("second", 3, nil)})
		if res := checkBatchResult(t, second, 3); res[0]["stored"] != true {
			t.Errorf("second batch not stored: %s", second.Raw)
		}
		if n := memTotal(t, ts, k); n != 6 {
			t.Errorf("total_atoms %d, want 6", n)
		}
		// The same body again is processed again: the gate now refuses each
		// item as a duplicate of the first copy (a replay would say stored).
		again := ts.doH("POST", "/memory/write_batch", h, map[string]any{"items": memItems("second", 3, nil)})
		res := checkBatchResult(t, again, 3)
		for i, it := range res {
			if it["stored"] != false || !strings.HasPrefix(str(it["reason"]), "duplicate of") {
				t.Errorf("retried item %d: %v", i, it)
			}
		}
		if bytes.Equal(again.Raw, second.Raw) {
			t.Errorf("write_batch replayed a cached response")
		}
	})
}

// testIdempotency covers the Idempotency-Key of write-batch; it restarts
// the server.
func testIdempotency(t *testing.T, ts *testServer) {
	_, key := ts.newOrg("idem")
	send := func(k, idem string, body any) resp {
		h := http.Header{}
		h.Set("X-Api-Key", k)
		if idem != "" {
			h.Set("Idempotency-Key", idem)
		}
		return ts.doH("POST", "/memory/write-batch", h, body)
	}
	its := memItems("idempotent", 4, nil)
	its[3]["content"] = its[0]["content"] // refused by the gate: the replay must say so again
	body := map[string]any{"items": its}

	first := send(key, "key-1", body)
	res := checkBatchResult(t, first, 4)
	if res[3]["stored"] != false {
		t.Fatalf("fourth item should be a gate duplicate: %s", first.Raw)
	}
	total := memTotal(t, ts, key)
	if total != 3 {
		t.Fatalf("total_atoms %d, want 3", total)
	}

	t.Run("replay is byte-for-byte and writes nothing", func(t *testing.T) {
		for i := 0; i < 2; i++ {
			r := send(key, "key-1", body)
			mustStatus(t, r, 200)
			if !bytes.Equal(r.Raw, first.Raw) {
				t.Fatalf("replay differs:\n%s\n%s", first.Raw, r.Raw)
			}
		}
		if n := memTotal(t, ts, key); n != total {
			t.Errorf("total_atoms %d -> %d after replays", total, n)
		}
	})

	t.Run("same key, other body is 409", func(t *testing.T) {
		other := map[string]any{"items": memItems("idempotent other", 2, nil)}
		r := send(key, "key-1", other)
		checkEnvelope(t, r, 409, "CONFLICT")
		if memReason(r) != "idempotency_key_reused" {
			t.Errorf("details.reason %q, want idempotency_key_reused: %s", memReason(r), r.Raw)
		}
		if r.Body["retryable"] != false {
			t.Errorf("retryable %v", r.Body["retryable"])
		}
		if n := memTotal(t, ts, key); n != total {
			t.Errorf("total_atoms %d -> %d after a 409", total, n)
		}
		// Whitespace makes another body too: the key is bound to the bytes.
		raw := []byte(" " + string(mustJSON(t, body)))
		checkEnvelope(t, send(key, "key-1", raw), 409, "CONFLICT")
	})

	t.Run("no key writes again", func(t *testing.T) {
		b := map[string]any{"items": memItems("unkeyed", 2, nil)}
		checkBatchResult(t, send(key, "", b), 2)
		r := send(key, "", b)
		res := checkBatchResult(t, r, 2)
		if res[0]["stored"] != false {
			t.Errorf("unkeyed retry was not processed again: %s", r.Raw)
		}
		total = memTotal(t, ts, key)
	})

	t.Run("key is scoped to the account", func(t *testing.T) {
		_, otherKey := ts.newOrg("idem-other")
		r := send(otherKey, "key-1", body)
		res := checkBatchResult(t, r, 4)
		if res[0]["stored"] != true || res[0]["atom_id"] == obj(list(first.Body["results"])[0])["atom_id"] {
			t.Errorf("another account got this account's replay: %s", r.Raw)
		}
		if n := memTotal(t, ts, otherKey); n != 3 {
			t.Errorf("other account total_atoms %d, want 3", n)
		}
	})

	t.Run("concurrent retries with one key write once", func(t *testing.T) {
		_, k := ts.newOrg("idem-concurrent")
		b := map[string]any{"items": memItems("concurrent", 5, nil)}
		const n = 6
		out := make(chan resp, n)
		for i := 0; i < n; i++ {
			go func() {
				h := http.Header{}
				h.Set("X-Api-Key", k)
				h.Set("Idempotency-Key", "race")
				out <- ts.doH("POST", "/memory/write-batch", h, b)
			}()
		}
		var first []byte
		for i := 0; i < n; i++ {
			r := <-out
			if r.Status != 200 {
				t.Errorf("status %d: %s", r.Status, r.Raw)
				continue
			}
			if first == nil {
				first = r.Raw
			} else if !bytes.Equal(first, r.Raw) {
				t.Errorf("concurrent answers differ:\n%s\n%s", first, r.Raw)
			}
		}
		if got := memTotal(t, ts, k); got != 5 {
			t.Errorf("total_atoms %d, want 5", got)
		}
	})

	t.Run("overlong key is 400", func(t *testing.T) {
		r := send(key, strings.Repeat("k", 256), map[string]any{"items": memItems("long key", 1, nil)})
		checkValidation(t, r, "header", "Idempotency-Key")
	})

	t.Run("replay survives a restart", func(t *testing.T) {
		ts.restart()
		r := send(key, "key-1", body)
		mustStatus(t, r, 200)
		if !bytes.Equal(r.Raw, first.Raw) {
			t.Fatalf("replay after restart differs:\n%s\n%s", first.Raw, r.Raw)
		}
		if n := memTotal(t, ts, key); n != total {
			t.Errorf("total_atoms %d -> %d after a replay past restart", total, n)
		}
		checkEnvelope(t, send(key, "key-1", map[string]any{"items": memItems("after restart", 1, nil)}), 409, "CONFLICT")
	})
}
