package router_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestLookupHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, otherKey := ts.newOrg("other")
	id := ts.write("Feature flags are stored in LaunchDarkly", map[string]any{
		"domain": "eng", "concepts": []string{"flags"}, "metadata": map[string]any{"team": "web"},
		"fingerprint": "fp-flags", "external_ref": "doc-7"})

	t.Run("full envelope", func(t *testing.T) {
		r := ts.do("GET", "/memory/atoms/"+id, ts.Key, nil)
		mustStatus(t, r, 200)
		want := []string{"access_count", "atom_id", "atom_type", "concepts", "content", "created_at", "domain",
			"external_ref", "fingerprint", "importance", "last_accessed_at", "metadata", "superseded_by",
			"supersedes", "valence"}
		if got := keys(r.Body); !reflect.DeepEqual(got, want) {
			t.Errorf("envelope keys %v, want %v", got, want)
		}
		if s, ok := r.Body["supersedes"].([]any); !ok || len(s) != 0 {
			t.Errorf("supersedes %v, want []", r.Body["supersedes"])
		}
		if r.Body["superseded_by"] != nil {
			t.Errorf("superseded_by %v, want null", r.Body["superseded_by"])
		}
		if r.Body["atom_id"] != id || r.Body["domain"] != "eng" || r.Body["external_ref"] != "doc-7" ||
			r.Body["fingerprint"] != "fp-flags" || r.Body["atom_type"] != "episode" ||
			obj(r.Body["metadata"])["team"] != "web" || !contains(stringsOf(r.Body["concepts"]), "flags") {
			t.Errorf("envelope %s", r.Raw)
		}
		if ts := str(r.Body["created_at"]); !strings.HasSuffix(ts, "Z") || len(ts) != len("2006-01-02T15:04:05.000000Z") {
			t.Errorf("created_at %q is not RFC 3339 UTC with microseconds", ts)
		}
	})

	t.Run("404 bodies identical", func(t *testing.T) {
		foreign := str(ts.do("POST", "/memory/write", otherKey, map[string]any{"content": "Not yours to see"}).Body["atom_id"])
		var first map[string]any
		for _, p := range []string{"0190a000-0000-7000-8000-000000000000", "not-a-uuid", foreign, "12345"} {
			for _, suffix := range []string{"", "/chain"} {
				r := ts.do("GET", "/memory/atoms/"+p+suffix, ts.Key, nil)
				checkEnvelope(t, r, 404, "NOT_FOUND")
				b := withoutRequestID(r)
				if first == nil {
					first = b
				} else if !reflect.DeepEqual(first, b) {
					t.Errorf("%s%s: body %v differs from %v", p, suffix, b, first)
				}
			}
		}
	})

	t.Run("by external ref", func(t *testing.T) {
		r := ts.do("POST", "/memory/atoms/by-external-ref", ts.Key, map[string]any{"external_ref": "doc-7"})
		mustStatus(t, r, 200)
		byID := ts.do("GET", "/memory/atoms/"+id, ts.Key, nil)
		if !reflect.DeepEqual(keys(r.Body), keys(byID.Body)) || r.Body["atom_id"] != id {
			t.Errorf("by-ref %s\nby-id %s", r.Raw, byID.Raw)
		}
		cases := []struct {
			name   string
			body   any
			status int
		}{
			{"empty", map[string]any{"external_ref": ""}, 400},
			{"256 chars", map[string]any{"external_ref": strings.Repeat("r", 256)}, 400},
			{"missing", map[string]any{}, 400},
			{"255 chars unknown", map[string]any{"external_ref": strings.Repeat("r", 255)}, 404},
			{"unknown", map[string]any{"external_ref": "doc-8"}, 404},
			{"secret ref", map[string]any{"external_ref": "secret:doc-7"}, 404},
			{"unknown field ignored", map[string]any{"external_ref": "doc-7", "x": 1}, 200},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := ts.do("POST", "/memory/atoms/by-external-ref", ts.Key, tc.body)
				switch tc.status {
				case 400:
					checkValidation(t, r, "body.external_ref")
				case 404:
					checkEnvelope(t, r, 404, "NOT_FOUND")
				default:
					mustStatus(t, r, tc.status)
				}
			})
		}
		r = ts.do("POST", "/memory/atoms/by-external-ref", otherKey, map[string]any{"external_ref": "doc-7"})
		checkEnvelope(t, r, 404, "NOT_FOUND")
	})
}

func stringsOf(v any) []string {
	var out []string
	for _, x := range list(v) {
		out = append(out, str(x))
	}
	return out
}

// supersede writes content replacing prev and returns the new ID.
func (ts *testServer) supersede(content, prev string) string {
	ts.t.Helper()
	return ts.write(content, map[string]any{"supersedes": []string{prev}})
}

func TestChainHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	v1 := ts.write("The API rate limit is 100 requests per minute", nil)
	v2 := ts.supersede("The API rate limit is 200 requests per minute", v1)
	v3 := ts.supersede("The API rate limit is 300 requests per minute", v2)

	t.Run("order and head", func(t *testing.T) {
		for _, from := range []string{v1, v2, v3} {
			r := ts.do("GET", "/memory/atoms/"+from+"/chain", ts.Key, nil)
			mustStatus(t, r, 200)
			if r.Body["atom_id"] != from || r.Body["truncated"] != false || len(list(r.Body["dangling"])) != 0 {
				t.Errorf("chain from %s: %s", from, r.Raw)
			}
			if _, ok := r.Body["dangling"].([]any); !ok {
				t.Errorf("dangling is not a list: %s", r.Raw)
			}
			if got := revIDs(r); !reflect.DeepEqual(got, []string{v1, v2, v3}) {
				t.Fatalf("order %v, want %v", got, []string{v1, v2, v3})
			}
			revs := list(r.Body["revisions"])
			for i, x := range revs {
				rev := obj(x)
				if rev["is_head"] != (i == 2) {
					t.Errorf("revision %d is_head %v", i, rev["is_head"])
				}
				_, hasSup := rev["supersedes"]
				_, hasBy := rev["superseded_by"]
				if hasSup != (i > 0) || hasBy != (i < 2) {
					t.Errorf("revision %d: supersedes present %v, superseded_by present %v: %v", i, hasSup, hasBy, rev)
				}
				for _, k := range []string{"content", "domain", "concepts", "created_at"} {
					if _, ok := rev[k]; !ok {
						t.Errorf("revision %d lacks %s", i, k)
					}
				}
			}
		}
	})

	t.Run("dangling after delete", func(t *testing.T) {
		r := ts.do("DELETE", "/memory/atoms/"+v2, ts.Key, nil)
		mustStatus(t, r, 200)
		if r.Body["deleted"] != 1.0 || r.Body["history_destroyed"] != true ||
			!reflect.DeepEqual(stringsOf(r.Body["superseded_predecessors_left_hidden"]), []string{v1}) {
			t.Errorf("delete of a middle revision: %s", r.Raw)
		}
		r = ts.do("GET", "/memory/atoms/"+v3+"/chain", ts.Key, nil)
		mustStatus(t, r, 200)
		if !reflect.DeepEqual(revIDs(r), []string{v3}) || !reflect.DeepEqual(stringsOf(r.Body["dangling"]), []string{v2}) {
			t.Errorf("chain from the head after delete: %s", r.Raw)
		}
		r = ts.do("GET", "/memory/atoms/"+v1+"/chain", ts.Key, nil)
		mustStatus(t, r, 200)
		if !reflect.DeepEqual(revIDs(r), []string{v1}) || !reflect.DeepEqual(stringsOf(r.Body["dangling"]), []string{v2}) {
			t.Errorf("chain from the orphan after delete: %s", r.Raw)
		}
		if rev := obj(list(r.Body["revisions"])[0]); rev["is_head"] != false {
			t.Errorf("revision whose successor was destroyed has is_head %v", rev["is_head"])
		}
		checkEnvelope(t, ts.do("GET", "/memory/atoms/"+v2+"/chain", ts.Key, nil), 404, "NOT_FOUND")
	})

	t.Run("truncated past 64 lookups", func(t *testing.T) {
		prev := ts.write("Revision 0 of a long chain", map[string]any{"domain": "long"})
		first := prev
		for i := 1; i <= 65; i++ {
			prev = ts.write(fmt.Sprintf("Revision %d of a long chain", i), map[string]any{"domain": "long", "supersedes": []string{prev}})
		}
		r := ts.do("GET", "/memory/atoms/"+prev+"/chain", ts.Key, nil)
		mustStatus(t, r, 200)
		if r.Body["truncated"] != true || len(list(r.Body["revisions"])) != 64 {
			t.Errorf("66-revision chain: truncated %v, %d revisions", r.Body["truncated"], len(list(r.Body["revisions"])))
		}
		if contains(revIDs(r), first) {
			t.Errorf("truncated walk reached the far end")
		}
		heads := 0
		for _, x := range list(r.Body["revisions"]) {
			if obj(x)["is_head"] == true {
				heads++
			}
		}
		if heads != 1 {
			t.Errorf("%d heads", heads)
		}
	})
}

func TestDeleteHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, otherKey := ts.newOrg("other")

	t.Run("atom delete is idempotent", func(t *testing.T) {
		id := ts.write("Temporary note about the lunch order", nil)
		r := ts.do("DELETE", "/memory/atoms/"+id, ts.Key, nil)
		mustStatus(t, r, 200)
		want := map[string]any{"deleted": 1.0, "atom_id": id, "superseded_predecessors_left_hidden": []any{}, "history_destroyed": false}
		if !reflect.DeepEqual(r.Body, want) {
			t.Errorf("first delete %s", r.Raw)
		}
		r = ts.do("DELETE", "/memory/atoms/"+id, ts.Key, nil)
		mustStatus(t, r, 200)
		want["deleted"] = 0.0
		if !reflect.DeepEqual(r.Body, want) {
			t.Errorf("second delete %s", r.Raw)
		}
		checkEnvelope(t, ts.do("GET", "/memory/atoms/"+id, ts.Key, nil), 404, "NOT_FOUND")
	})

	t.Run("head delete reports hidden predecessors", func(t *testing.T) {
		a := ts.write("The VPN gateway is vpn-1", nil)
		b := ts.supersede("The VPN gateway is vpn-2", a)
		r := ts.do("DELETE", "/memory/atoms/"+b, ts.Key, nil)
		mustStatus(t, r, 200)
		if !reflect.DeepEqual(stringsOf(r.Body["superseded_predecessors_left_hidden"]), []string{a}) || r.Body["history_destroyed"] != true {
			t.Errorf("head delete %s", r.Raw)
		}
		// The predecessor has no successor any more: a new revision may
		// replace it (it answered 409 naming the deleted atom, for good).
		r = ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "The VPN gateway is vpn-3", "supersedes": []string{a}})
		mustStatus(t, r, 200)
		if r.Body["stored"] != true || !reflect.DeepEqual(stringsOf(r.Body["superseded"]), []string{a}) {
			t.Fatalf("superseding the predecessor again: %s", r.Raw)
		}
		c := str(r.Body["atom_id"])
		r = ts.do("GET", "/memory/atoms/"+a+"/chain", ts.Key, nil)
		mustStatus(t, r, 200)
		if !reflect.DeepEqual(revIDs(r), []string{a, c}) {
			t.Errorf("chain after the new revision: %s", r.Raw)
		}
		checkEnvelope(t, ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "The VPN gateway is vpn-4",
			"supersedes": []string{a}}), 409, "CONFLICT")
	})

	t.Run("foreign atom is not reached", func(t *testing.T) {
		id := str(ts.do("POST", "/memory/write", otherKey, map[string]any{"content": "Owned by the other org"}).Body["atom_id"])
		r := ts.do("DELETE", "/memory/atoms/"+id, ts.Key, nil)
		mustStatus(t, r, 200)
		if r.Body["deleted"] != 0.0 {
			t.Errorf("deleted a foreign atom: %s", r.Raw)
		}
		mustStatus(t, ts.do("GET", "/memory/atoms/"+id, otherKey, nil), 200)
	})

	t.Run("domain delete", func(t *testing.T) {
		k1 := ts.write("Scratch keeper note about printers", map[string]any{"domain": "keep"})
		s1 := ts.write("Scratch note one about the printers", map[string]any{"domain": "scratch"})
		ts.supersede("Scratch note two about the printers", s1) // lands in general
		ts.write("Scratch note three about fonts", map[string]any{"domain": "scratch", "supersedes": []string{k1}})
		ts.write("Scratch note four about paper", map[string]any{"domain": "scratch"})
		r := ts.do("DELETE", "/memory/domain/scratch", ts.Key, nil)
		mustStatus(t, r, 200)
		want := map[string]any{"deleted": 3.0, "domain": "scratch", "skipped_secrets": 0.0, "orphan_edges_removed": 0.0,
			"superseded_predecessors_left_hidden_count": 1.0, "history_destroyed": true}
		if !reflect.DeepEqual(r.Body, want) {
			t.Errorf("domain delete %s, want %v", r.Raw, want)
		}
		doms := stringsOf(ts.do("GET", "/memory/domains", ts.Key, nil).Body["domains"])
		if contains(doms, "scratch") || !contains(doms, "keep") {
			t.Errorf("domains after delete %v", doms)
		}
		checkEnvelope(t, ts.do("DELETE", "/memory/domain/scratch", ts.Key, nil), 404, "NOT_FOUND")
		checkEnvelope(t, ts.do("DELETE", "/memory/domain/never-used", ts.Key, nil), 404, "NOT_FOUND")
	})

	t.Run("domain delete of a plain domain", func(t *testing.T) {
		ts.write("Only note in a spaced domain", map[string]any{"domain": "my notes"})
		r := ts.do("DELETE", "/memory/domain/my%20notes", ts.Key, nil)
		mustStatus(t, r, 200)
		if r.Body["deleted"] != 1.0 || r.Body["domain"] != "my notes" || r.Body["history_destroyed"] != false {
			t.Errorf("spaced domain delete %s", r.Raw)
		}
	})

	t.Run("domain delete of another org's domain", func(t *testing.T) {
		ts.do("POST", "/memory/write", otherKey, map[string]any{"content": "Other org private note", "domain": "theirs"})
		checkEnvelope(t, ts.do("DELETE", "/memory/domain/theirs", ts.Key, nil), 404, "NOT_FOUND")
	})

	t.Run("room domain delete", func(t *testing.T) {
		for _, d := range []string{"xroom:room_01J0000000000000000000000", "xroom:abc"} {
			r := ts.do("DELETE", "/memory/domain/"+d, ts.Key, nil)
			checkValidationMessage(t, r, "Room domains (xroom:) are not supported on this delete endpoint.")
		}
	})
}

func TestStatsExportHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, otherKey := ts.newOrg("other")
	a := ts.write("Stats alpha note about queues", map[string]any{"domain": "alpha", "fingerprint": "fp-a"})
	ts.write("Stats beta note about caches", map[string]any{"domain": "beta"})
	ts.supersede("Stats alpha note about queues, revised", a)
	ts.do("POST", "/memory/write", otherKey, map[string]any{"content": "Other org stats note", "domain": "gamma"})

	t.Run("stats", func(t *testing.T) {
		r := ts.do("GET", "/memory/stats", ts.Key, nil)
		mustStatus(t, r, 200)
		want := []string{"avg_importance", "avg_valence", "domains", "episodes", "episodic_fingerprints",
			"hebbian_edges", "prototypes", "singletons", "total_atoms"}
		if !reflect.DeepEqual(keys(r.Body), want) {
			t.Errorf("stats keys %v", keys(r.Body))
		}
		if r.Body["total_atoms"] != 3.0 || r.Body["episodes"] != 3.0 || r.Body["episodic_fingerprints"] != 1.0 {
			t.Errorf("stats %s", r.Raw)
		}
		doms := stringsOf(r.Body["domains"])
		sort.Strings(doms)
		if !reflect.DeepEqual(doms, []string{"alpha", "beta", "general"}) {
			t.Errorf("stats domains %v", doms)
		}
		d := ts.do("GET", "/memory/domains", ts.Key, nil)
		mustStatus(t, d, 200)
		dd := stringsOf(d.Body["domains"])
		sort.Strings(dd)
		if !reflect.DeepEqual(keys(d.Body), []string{"domains"}) || !reflect.DeepEqual(dd, doms) {
			t.Errorf("domains %s vs stats %v", d.Raw, doms)
		}
	})

	t.Run("empty org", func(t *testing.T) {
		_, k := ts.newOrg("empty")
		r := ts.do("GET", "/memory/stats", k, nil)
		mustStatus(t, r, 200)
		if r.Body["total_atoms"] != 0.0 || len(list(r.Body["domains"])) != 0 {
			t.Errorf("empty stats %s", r.Raw)
		}
		if _, ok := r.Body["domains"].([]any); !ok {
			t.Errorf("domains of an empty org is not []: %s", r.Raw)
		}
		d := ts.do("GET", "/memory/domains", k, nil)
		if string(d.Raw) != `{"domains":[]}` {
			t.Errorf("empty domains %s", d.Raw)
		}
		e := ts.do("GET", "/memory/export", k, nil)
		mustStatus(t, e, 200)
		if len(bytes.TrimSpace(e.Raw)) != 0 {
			t.Errorf("empty export %q", e.Raw)
		}
	})

	t.Run("export", func(t *testing.T) {
		r := ts.do("GET", "/memory/export", ts.Key, nil)
		mustStatus(t, r, 200)
		if ct := r.Header.Get("Content-Type"); !strings.Contains(ct, "ndjson") && !strings.Contains(ct, "jsonl") {
			t.Errorf("content type %q", ct)
		}
		lines := strings.Split(strings.TrimRight(string(r.Raw), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines, want 3: %s", len(lines), r.Raw)
		}
		seen := map[string]bool{}
		for i, l := range lines {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("line %d is not JSON: %q", i, l)
			}
			if _, ok := m["supersedes"].([]any); !ok {
				t.Errorf("line %d supersedes %v", i, m["supersedes"])
			}
			if _, ok := m["superseded_by"]; !ok {
				t.Errorf("line %d lacks superseded_by", i)
			}
			if str(m["atom_type"]) == "" {
				t.Errorf("line %d lacks atom_type", i)
			}
			if m["domain"] == "gamma" {
				t.Errorf("export leaks another org's atom")
			}
			seen[str(m["atom_id"])] = true
		}
		if !seen[a] {
			t.Errorf("superseded revision missing from export")
		}
	})
}

func TestExportPagingHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	want := map[string]bool{}
	// More than one export page (500 atoms), spread over domains so the
	// write gate's nearest-neighbour scans stay short.
	for b := range 2 {
		its := make([]map[string]any, 260)
		for i := range its {
			its[i] = map[string]any{"content": fmt.Sprintf("Export paging note %d of batch %d on topic %d", i, b, i*13+b),
				"domain": fmt.Sprintf("paging-%d", i%26)}
		}
		r := ts.do("POST", "/memory/write_batch", ts.Key, map[string]any{"items": its})
		mustStatus(t, r, 200)
		for _, x := range list(r.Body["results"]) {
			if id := str(obj(x)["atom_id"]); id != "" && obj(x)["stored"] == true {
				want[id] = true
			}
		}
	}
	if len(want) < 510 {
		t.Fatalf("only %d of 520 stored", len(want))
	}
	r := ts.do("GET", "/memory/export", ts.Key, nil)
	mustStatus(t, r, 200)
	got := map[string]bool{}
	for i, l := range strings.Split(strings.TrimRight(string(r.Raw), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		id := str(m["atom_id"])
		if got[id] {
			t.Fatalf("atom %s exported twice", id)
		}
		got[id] = true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("exported %d atoms, stored %d", len(got), len(want))
	}
}

func TestResetHTTP(t *testing.T) {
	t.Parallel()
	t.Run("disabled", func(t *testing.T) {
		ts := newTestServer(t)
		ts.write("Survives a refused reset", nil)
		r := ts.do("DELETE", "/memory/reset", ts.Key, nil)
		checkEnvelope(t, r, 403, "FORBIDDEN")
		if ts.do("GET", "/memory/stats", ts.Key, nil).Body["total_atoms"] != 1.0 {
			t.Error("refused reset deleted atoms")
		}
	})
	t.Run("enabled", func(t *testing.T) {
		ts := newTestServer(t, withReset())
		ts.write("Gone after a reset", map[string]any{"domain": "a"})
		ts.write("Also gone after a reset", map[string]any{"domain": "b"})
		r := ts.do("DELETE", "/memory/reset", ts.Key, nil)
		mustStatus(t, r, 200)
		if !reflect.DeepEqual(r.Body, map[string]any{"status": "cleared"}) {
			t.Errorf("reset body %s", r.Raw)
		}
		st := ts.do("GET", "/memory/stats", ts.Key, nil)
		mustStatus(t, st, 200)
		if st.Body["total_atoms"] != 0.0 {
			t.Errorf("stats after reset %s", st.Raw)
		}
		ts.write("Writable after a reset", nil)
	})
}

// revIDs lists the IDs of a chain answer's revisions, in order.
func revIDs(r resp) []string {
	var out []string
	for _, x := range list(r.Body["revisions"]) {
		out = append(out, str(obj(x)["id"]))
	}
	return out
}
