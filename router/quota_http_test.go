package router_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/hebbdb/hebb/cluster"
)

func TestQuotaHTTP(t *testing.T) {
	t.Parallel()
	clearOfMidnight(t)
	ts := newTestServer(t, withPlan(cluster.Plan{DailyQueryQuota: 3}), withReset())
	_, key := ts.newOrg("quota")
	memWrite(t, ts, key, "Quota subject: the build farm has twelve runners", map[string]any{"concepts": []string{"build", "runner"}})

	t.Run("daily query quota", func(t *testing.T) {
		read := map[string]any{"query": "build farm runners"}
		// A refused read, writes, feedback, lookups and stats do not count.
		checkValidation(t, ts.do("POST", "/memory/read", key, map[string]any{"query": ""}), "body", "query")
		checkValidation(t, ts.do("POST", "/memory/recent", key, map[string]any{"limit": 0}), "body", "limit")
		id := memWrite(t, ts, key, "Quota subject: runners are replaced every spring", nil)
		mustStatus(t, ts.do("POST", "/memory/write-batch", key, map[string]any{"items": memItems("quota", 2, nil)}), 200)
		mustStatus(t, ts.do("POST", "/memory/feedback", key, map[string]any{"atom_ids": []string{id}, "outcome": 1}), 200)
		memAtom(t, ts, key, id)
		memTotal(t, ts, key)
		// Nor does a context render (operator.md names the five that do).
		for _, rid := range []string{"quota-1", "quota-2", "quota-2", "quota-3"} {
			mustStatus(t, ts.do("POST", "/orchestration/context", key, renderBody(rid, nil)), 200)
		}

		mustStatus(t, ts.do("POST", "/memory/read", key, read), 200)
		mustStatus(t, ts.do("POST", "/memory/recent", key, map[string]any{}), 200)
		mustStatus(t, ts.do("POST", "/memory/graph", key, map[string]any{"seeds": []string{"build"}}), 200)

		for _, c := range []struct {
			path string
			body any
		}{
			{"/memory/read", read},
			{"/memory/query", read},
			{"/memory/read-batch", map[string]any{"queries": []any{read}}},
			{"/memory/recent", map[string]any{}},
			{"/memory/graph", map[string]any{"seeds": []string{"build"}}},
		} {
			r := ts.do("POST", c.path, key, c.body)
			checkEnvelope(t, r, 429, "RATE_LIMITED")
			if r.Body["retryable"] != true {
				t.Errorf("%s: retryable %v, want true", c.path, r.Body["retryable"])
			}
			if memReason(r) != "daily_query_quota" {
				t.Errorf("%s: details.reason %q", c.path, memReason(r))
			}
			if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 86401 {
				t.Errorf("%s: Retry-After %q", c.path, r.Header.Get("Retry-After"))
			}
		}
		// Writes and lookups still work; another account has its own count.
		memWrite(t, ts, key, "Quota subject: writes go on after the quota", nil)
		memAtom(t, ts, key, id)
		mustStatus(t, ts.do("POST", "/memory/read", ts.Key, read), 200)
	})

	t.Run("concurrent queries do not overshoot the daily quota", func(t *testing.T) {
		_, k := ts.newOrg("quota-concurrent")
		mustStatus(t, ts.do("POST", "/memory/write-batch", k, map[string]any{"items": memItems("quota concurrent", 200, nil)}), 200)
		queries := make([]any, 50)
		for i := range queries {
			queries[i] = map[string]any{"query": fmt.Sprintf("concurrent item %d marker", i), "top_k": 500, "min_relevance": 0}
		}
		const n = 24
		out := make(chan int, n)
		for range n {
			go func() { out <- ts.do("POST", "/memory/read-batch", k, map[string]any{"queries": queries}).Status }()
		}
		codes := map[int]int{}
		for range n {
			codes[<-out]++
		}
		if codes[200] != 3 || codes[429] != n-3 {
			t.Fatalf("answers by status %v, want 3 × 200 (the quota) and the rest 429", codes)
		}
	})

	t.Run("atom limit", func(t *testing.T) {
		orgID, k := ts.newOrg("limited")
		r := ts.admin("PATCH", "/admin/v1/orgs/"+orgID+"/settings", map[string]any{"plan": map[string]any{"atom_limit": 2}})
		mustStatus(t, r, 200)
		if num(obj(r.Body["plan"])["atom_limit"]) != 2 || num(obj(r.Body["plan"])["daily_query_quota"]) != 3 {
			t.Fatalf("settings %s", r.Raw)
		}
		memWrite(t, ts, k, "Limited account atom one", nil)
		// A batch that would pass the limit is refused whole.
		r = ts.do("POST", "/memory/write-batch", k, map[string]any{"items": memItems("limited", 2, nil)})
		checkEnvelope(t, r, 429, "RATE_LIMITED")
		memWrite(t, ts, k, "Limited account atom two", nil)
		for _, c := range []struct {
			path string
			body any
		}{
			{"/memory/write", map[string]any{"content": "Limited account atom three"}},
			{"/memory/write-batch", map[string]any{"items": memItems("limited three", 1, nil)}},
			{"/memory/write_batch", map[string]any{"items": memItems("limited three", 1, nil)}},
		} {
			r := ts.do("POST", c.path, k, c.body)
			checkEnvelope(t, r, 429, "RATE_LIMITED")
			if r.Body["retryable"] != false {
				t.Errorf("%s: retryable %v, want false", c.path, r.Body["retryable"])
			}
			if memReason(r) != "atom_limit" {
				t.Errorf("%s: details.reason %q", c.path, memReason(r))
			}
		}
		if n := memTotal(t, ts, k); n != 2 {
			t.Errorf("total_atoms %d, want 2", n)
		}
	})

	limited := func(t *testing.T, name string, limit int) string {
		t.Helper()
		orgID, k := ts.newOrg(name)
		r := ts.admin("PATCH", "/admin/v1/orgs/"+orgID+"/settings", map[string]any{"plan": map[string]any{"atom_limit": limit}})
		mustStatus(t, r, 200)
		return k
	}

	t.Run("concurrent writes do not overshoot the atom limit", func(t *testing.T) {
		k := limited(t, "limited-concurrent", 2)
		const n = 8
		out := make(chan resp, n)
		for i := 0; i < n; i++ {
			go func(i int) {
				out <- ts.do("POST", "/memory/write", k, map[string]any{"content": fmt.Sprintf("Concurrent write %d with tag z%dq", i, i)})
			}(i)
		}
		stored, refused := 0, 0
		for i := 0; i < n; i++ {
			r := <-out
			switch {
			case r.Status == 200 && r.Body["stored"] == true:
				stored++
			case r.Status == 429 && memReason(r) == "atom_limit":
				refused++
				// Refused before the proposal or by the apply, the
				// answer names the limit.
				if num(obj(r.Body["details"])["limit"]) != 2 {
					t.Errorf("atom_limit answer without the limit: %s", r.Raw)
				}
			default:
				t.Errorf("unexpected answer %d: %s", r.Status, r.Raw)
			}
		}
		if stored != 2 || refused != n-2 {
			t.Errorf("%d stored, %d refused; want 2 and %d", stored, refused, n-2)
		}
		if got := memTotal(t, ts, k); got != 2 {
			t.Errorf("total_atoms %d, want 2", got)
		}
	})

	t.Run("an idempotent retry at the limit replays", func(t *testing.T) {
		k := limited(t, "limited-idem", 3)
		send := func(idem string, body any) resp {
			h := http.Header{}
			h.Set("X-Api-Key", k)
			h.Set("Idempotency-Key", idem)
			return ts.doH("POST", "/memory/write-batch", h, body)
		}
		body := map[string]any{"items": memItems("at the limit", 3, nil)}
		first := send("fill", body)
		checkBatchResult(t, first, 3)
		again := send("fill", body)
		mustStatus(t, again, 200)
		if !bytes.Equal(first.Raw, again.Raw) {
			t.Errorf("retry at the limit: %s", again.Raw)
		}
		r := send("fill", map[string]any{"items": memItems("other body", 1, nil)})
		checkEnvelope(t, r, 409, "CONFLICT")
		r = send("fresh", map[string]any{"items": memItems("new key", 1, nil)})
		checkEnvelope(t, r, 429, "RATE_LIMITED")
		if memReason(r) != "atom_limit" {
			t.Errorf("details.reason %q", memReason(r))
		}
	})

	t.Run("at the limit a taken external_ref or a duplicate answers as below it", func(t *testing.T) {
		// A client whose write took the account to its limit and retried
		// after a network error got a 429 instead of its atom (operator.md
		// §8: a second write with an existing external_ref answers 200).
		k := limited(t, "limited-refs", 2)
		first := memWrite(t, ts, k, "Limited refs: the first memory of the account", map[string]any{"external_ref": "ext-1"})
		memWrite(t, ts, k, "Limited refs: the second memory, now at the limit", nil)
		for _, body := range []map[string]any{
			{"content": "Limited refs: the first memory of the account", "external_ref": "ext-1"},
			{"content": "Limited refs: another text under a taken ref", "external_ref": "ext-1"},
		} {
			r := ts.do("POST", "/memory/write", k, body)
			mustStatus(t, r, 200)
			if r.Body["stored"] != false || r.Body["atom_id"] != first || r.Body["reason"] != "external_ref exists" {
				t.Errorf("retry at the limit: %s", r.Raw)
			}
		}
		r := ts.do("POST", "/memory/write", k, map[string]any{"content": "Limited refs: the second memory, now at the limit"})
		mustStatus(t, r, 200)
		if r.Body["stored"] != false || !strings.HasPrefix(str(r.Body["reason"]), "duplicate of ") {
			t.Errorf("duplicate at the limit: %s", r.Raw)
		}
		items := []map[string]any{{"content": "Limited refs: batch retry", "external_ref": "ext-1"}}
		r = ts.do("POST", "/memory/write-batch", k, map[string]any{"items": items})
		mustStatus(t, r, 200)
		if res := r.Body["results"].([]any); len(res) != 1 || obj(res[0])["atom_id"] != first {
			t.Errorf("batch retry at the limit: %s", r.Raw)
		}
		for _, path := range []string{"/memory/write", "/memory/write-batch"} {
			body := map[string]any{"content": "Limited refs: a new memory past the limit", "external_ref": "ext-2"}
			if path != "/memory/write" {
				body = map[string]any{"items": []map[string]any{body}}
			}
			if r := ts.do("POST", path, k, body); r.Status != 429 || memReason(r) != "atom_limit" {
				t.Errorf("%s: a new memory past the limit: %d %s", path, r.Status, r.Raw)
			}
		}
		if n := memTotal(t, ts, k); n != 2 {
			t.Errorf("total_atoms %d, want 2", n)
		}
	})

	t.Run("a refusal at the limit is not kept for the key", func(t *testing.T) {
		// With room again, the retry of a refused batch stores. (The router
		// refuses this one before apply; TestLimitRefusalNotRemembered in
		// raftfsm covers the apply's own refusal, which kept an empty result.)
		orgID, k := ts.newOrg("limited-idem-refused")
		setLimit := func(n int) {
			mustStatus(t, ts.admin("PATCH", "/admin/v1/orgs/"+orgID+"/settings", map[string]any{"plan": map[string]any{"atom_limit": n}}), 200)
		}
		setLimit(1)
		memWrite(t, ts, k, "Idem refused: the one memory the plan allows", nil)
		h := http.Header{}
		h.Set("X-Api-Key", k)
		h.Set("Idempotency-Key", "one-item")
		body := map[string]any{"items": memItems("idem refused", 1, nil)}
		checkEnvelope(t, ts.doH("POST", "/memory/write-batch", h, body), 429, "RATE_LIMITED")
		setLimit(10)
		checkBatchResult(t, ts.doH("POST", "/memory/write-batch", h, body), 1)
		if n := memTotal(t, ts, k); n != 2 {
			t.Errorf("total_atoms %d, want 2", n)
		}
	})

	t.Run("reset is refused once a second org exists", func(t *testing.T) {
		// --enable-reset is refused at boot with more than one org; an org
		// created after the boot must not let any tenant wipe the others.
		before := memTotal(t, ts, key)
		for _, k := range []string{key, ts.Key} {
			checkEnvelope(t, ts.do("DELETE", "/memory/reset", k, nil), 403, "FORBIDDEN")
		}
		if after := memTotal(t, ts, key); after != before || before == 0 {
			t.Errorf("a refused reset changed total_atoms: %v then %v", before, after)
		}
	})
}
