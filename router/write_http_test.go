package router_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

const nonCanonicalRoomMsg = "Non-canonical room address; use 'xroom:<room_id>' (no leading space, lowercase prefix)"

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestWriteHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)

	t.Run("stored result shape and defaults", func(t *testing.T) {
		r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "The deploy pipeline runs on Fridays at noon"})
		mustStatus(t, r, 200)
		if got := strings.Join(keys(r.Body), ","); got != "atom_id,importance,reason,stored,superseded" {
			t.Errorf("write result keys %s: %s", got, r.Raw)
		}
		if r.Body["stored"] != true || !uuidRE.MatchString(str(r.Body["atom_id"])) {
			t.Fatalf("not stored with a UUID: %s", r.Raw)
		}
		if imp := num(r.Body["importance"]); imp < 0 || imp > 1 {
			t.Errorf("importance %v outside [0,1]", imp)
		}
		if _, ok := r.Body["reason"].(string); !ok {
			t.Errorf("reason is not a string: %s", r.Raw)
		}
		if sup, ok := r.Body["superseded"].([]any); !ok || len(sup) != 0 {
			t.Errorf("superseded is not []: %s", r.Raw)
		}
		a := ts.do("GET", "/memory/atoms/"+str(r.Body["atom_id"]), ts.Key, nil)
		mustStatus(t, a, 200)
		if a.Body["domain"] != "general" {
			t.Errorf("default domain %v, want general", a.Body["domain"])
		}
	})

	t.Run("duplicate refused by the gate", func(t *testing.T) {
		body := map[string]any{"content": "Postgres vacuum runs nightly on the replica", "domain": "dup"}
		mustStatus(t, ts.do("POST", "/memory/write", ts.Key, body), 200)
		r := ts.do("POST", "/memory/write", ts.Key, body)
		mustStatus(t, r, 200)
		if r.Body["stored"] != false || r.Body["atom_id"] != nil {
			t.Errorf("duplicate: %s", r.Raw)
		}
		if _, ok := r.Body["atom_id"]; !ok {
			t.Errorf("atom_id key missing (must be null): %s", r.Raw)
		}
		if sup, ok := r.Body["superseded"].([]any); !ok || len(sup) != 0 {
			t.Errorf("superseded is not []: %s", r.Raw)
		}
		if imp := num(r.Body["importance"]); imp < 0 || imp > 1 {
			t.Errorf("importance %v outside [0,1]", imp)
		}
		if str(r.Body["reason"]) == "" {
			t.Errorf("refusal without a reason: %s", r.Raw)
		}
	})

	t.Run("external_ref is idempotent", func(t *testing.T) {
		id := ts.write("Invoices are archived after ninety days", map[string]any{"external_ref": "ticket-42"})
		r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "Something else entirely about llamas", "external_ref": "ticket-42"})
		mustStatus(t, r, 200)
		if r.Body["stored"] != false || r.Body["atom_id"] != id || r.Body["reason"] != "external_ref exists" {
			t.Errorf("second write with the ref: %s", r.Raw)
		}
		a := ts.do("GET", "/memory/atoms/"+id, ts.Key, nil)
		if a.Body["content"] != "Invoices are archived after ninety days" {
			t.Errorf("first atom changed: %s", a.Raw)
		}
	})

	t.Run("private domains that look like rooms", func(t *testing.T) {
		for _, d := range []string{"room:abc", "xroomy", "x-room:abc", "xroom"} {
			r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "Kept in a lookalike domain " + d, "domain": d})
			mustStatus(t, r, 200)
			if r.Body["stored"] != true {
				t.Errorf("%q: %s", d, r.Raw)
			}
		}
	})

	t.Run("limits at the bound are accepted", func(t *testing.T) {
		concepts := make([]string, 256)
		for i := range concepts {
			concepts[i] = fmt.Sprintf("c%d", i)
		}
		concepts[255] = strings.Repeat("é", 200)
		cases := []struct {
			name string
			body any
		}{
			{"content 10000 chars", map[string]any{"content": "boundary " + strings.Repeat("a", 10000-9)}},
			// 120 KB as sent, 40 KB as UTF-8 JSON (what the limit counts).
			{"metadata with escaped non-ASCII", `{"content": "escaped metadata at the bound", "metadata": {"k": "` +
				strings.Repeat(`\u00e9`, 20000) + `"}}`},
			{"content 10000 multibyte chars", map[string]any{"content": strings.Repeat("é", 10000)}},
			// 66 KB as sent, 33 KB as UTF-8 JSON: Python's json.dumps escapes U+2028.
			{"metadata with escaped line separators", `{"content": "line separators in metadata", "metadata": {"k": "` +
				strings.Repeat(`\u2028`, 11000) + `"}}`},
			{"256 concepts", map[string]any{"content": "many concepts at the bound", "concepts": concepts}},
			{"metadata 65536 bytes", map[string]any{"content": "big metadata at the bound",
				"metadata": map[string]any{"k": strings.Repeat("x", 65536-8)}}},
			{"fingerprint 512", map[string]any{"content": "long fingerprint at the bound", "fingerprint": strings.Repeat("f", 512)}},
			{"domain 100", map[string]any{"content": "long domain at the bound", "domain": strings.Repeat("d", 100)}},
			{"empty supersedes", map[string]any{"content": "nothing to replace here", "supersedes": []string{}}},
			{"author ignored", map[string]any{"content": "author block on an api key call", "author": map[string]any{"agent": "x"}}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := ts.do("POST", "/memory/write", ts.Key, tc.body)
				mustStatus(t, r, 200)
				if r.Body["stored"] != true {
					t.Errorf("not stored: %s", r.Raw)
				}
			})
		}
	})

	t.Run("validation errors", func(t *testing.T) {
		ids := make([]string, 33)
		for i := range ids {
			ids[i] = fmt.Sprintf("00000000-0000-7000-8000-%012d", i)
		}
		one := "00000000-0000-7000-8000-000000000001"
		cases := []struct {
			name string
			body any
			loc  string
			typ  string
		}{
			{"missing content", map[string]any{"domain": "x"}, "body.content", "missing"},
			// Names match exactly: CONTENT was taken for content.
			{"a field name in another case", map[string]any{"CONTENT": "Stored under another name"}, "body.CONTENT", "extra_forbidden"},
			{"empty content", map[string]any{"content": ""}, "body.content", "string_too_short"},
			{"content 10001 chars", map[string]any{"content": strings.Repeat("a", 10001)}, "body.content", "string_too_long"},
			{"content not a string", map[string]any{"content": 5}, "body.content", "string_type"},
			{"257 concepts", map[string]any{"content": "x", "concepts": make([]string, 257)}, "body.concepts", ""},
			{"metadata a list", map[string]any{"content": "x", "metadata": []int{1}}, "body.metadata", ""},
			{"metadata a string", map[string]any{"content": "x", "metadata": "{}"}, "body.metadata", ""},
			{"author a string", map[string]any{"content": "x", "author": "bob"}, "body.author", "dict_type"},
			{"a null concept", map[string]any{"content": "x", "concepts": []any{"keep", nil}}, "body.concepts.1", "string_type"},
			{"a concept of 201 characters", map[string]any{"content": "x", "concepts": []string{"keep", strings.Repeat("c", 201)}},
				"body.concepts.1", "string_too_long"},
			{"metadata over 65536 bytes", map[string]any{"content": "x",
				"metadata": map[string]any{"k": strings.Repeat("x", 65536-7)}}, "body.metadata", ""},
			{"escaped metadata over 65536 bytes as UTF-8", `{"content": "x", "metadata": {"k": "` +
				strings.Repeat(`\u00e9`, 32765) + `"}}`, "body.metadata", ""},
			// Each copy is kept; a decode counted only the last.
			{"metadata over 65536 bytes in repeated keys", `{"content": "x", "metadata": {` +
				strings.TrimSuffix(strings.Repeat(`"k": "`+strings.Repeat("v", 40000)+`",`, 3), ",") + `}}`, "body.metadata", ""},
			{"fingerprint 513", map[string]any{"content": "x", "fingerprint": strings.Repeat("f", 513)}, "body.fingerprint", "string_too_long"},
			{"domain 101", map[string]any{"content": "x", "domain": strings.Repeat("d", 101)}, "body.domain", "string_too_long"},
			{"unknown field", map[string]any{"content": "x", "colour": "red"}, "body.colour", "extra_forbidden"},
			{"malformed supersedes ID", map[string]any{"content": "x", "supersedes": []string{"not-a-uuid"}}, "body.supersedes.0", ""},
			{"repeated supersedes ID", map[string]any{"content": "x", "supersedes": []string{one, one}}, "body.supersedes.1", ""},
			{"33 supersedes IDs", map[string]any{"content": "x", "supersedes": ids}, "body.supersedes", ""},
			{"supersedes on a room write", map[string]any{"content": "x", "domain": "xroom:room_01J0000000000000000000000",
				"supersedes": []string{one}}, "body.supersedes", ""},
			{"not an object", []int{1, 2}, "body", ""},
			{"invalid JSON", `{"content": `, "body", ""},
			{"empty body", "", "body", ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := ts.do("GET", "/memory/stats", ts.Key, nil)
				r := ts.do("POST", "/memory/write", ts.Key, tc.body)
				errs := checkValidation(t, r, tc.loc)
				if tc.typ != "" {
					found := false
					for _, e := range errs {
						found = found || (locString(e["loc"]) == tc.loc && e["type"] == tc.typ)
					}
					if !found {
						t.Errorf("no %s error at %s: %s", tc.typ, tc.loc, r.Raw)
					}
				}
				after := ts.do("GET", "/memory/stats", ts.Key, nil)
				if before.Body["total_atoms"] != after.Body["total_atoms"] {
					t.Errorf("a refused write stored something: %v -> %v", before.Body["total_atoms"], after.Body["total_atoms"])
				}
			})
		}
	})

	// details.errors is bounded: one entry per wrong item or unknown key
	// made a reply 47 times the size of its body.
	t.Run("at most 50 errors", func(t *testing.T) {
		nums := make([]int, 5000)
		extra := map[string]any{"content": "x"}
		for i := range 5000 {
			extra[fmt.Sprintf("k%d", i)] = i
		}
		for name, body := range map[string]any{
			"5,000 numeric concepts": map[string]any{"content": "x", "concepts": nums},
			"5,000 unknown fields":   extra,
			"5,000 null concepts":    `{"content":"x","concepts":[` + strings.TrimSuffix(strings.Repeat("null,", 5000), ",") + `]}`,
		} {
			r := ts.do("POST", "/memory/write", ts.Key, body)
			mustStatus(t, r, 400)
			details, _ := r.Body["details"].(map[string]any)
			if errs, _ := details["errors"].([]any); len(errs) == 0 || len(errs) > 50 {
				t.Errorf("%s: %d errors in %d bytes", name, len(errs), len(r.Raw))
			}
		}
	})

	t.Run("secret: external_ref", func(t *testing.T) {
		for _, ref := range []string{"secret:db", "secret:", "secret:" + strings.Repeat("x", 300)} {
			r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "looks like a vault write", "external_ref": ref})
			errs := checkValidation(t, r)
			if len(errs) != 1 {
				t.Fatalf("%q: want exactly one error entry: %s", ref, r.Raw)
			}
			if locString(errs[0]["loc"]) != "body.external_ref" || str(errs[0]["msg"]) == "" || str(errs[0]["type"]) == "" {
				t.Errorf("%q: entry %v", ref, errs[0])
			}
		}
		// Case-sensitive: only the exact lowercase prefix is reserved.
		r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "an ordinary ref that starts with Secret", "external_ref": "Secret:db"})
		mustStatus(t, r, 200)
	})

	t.Run("near-miss room addresses", func(t *testing.T) {
		for _, d := range []string{"XROOM:room_x", " xroom:room_x", "Xroom:room_x", "\txroom:room_x"} {
			r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "near miss", "domain": d})
			errs := checkValidationMessage(t, r, nonCanonicalRoomMsg)
			if len(errs) != 1 || locString(errs[0]["loc"]) != "body.domain" {
				t.Errorf("%q: errors %v", d, errs)
			}
		}
	})
}

// checkValidationMessage asserts a 400 VALIDATION_ERROR whose message is the
// given one (interface §7.3) and whose details.errors carries it too.
func checkValidationMessage(t *testing.T, r resp, msg string) []map[string]any {
	t.Helper()
	checkEnvelope(t, r, 400, "VALIDATION_ERROR")
	if r.Body["message"] != msg {
		t.Errorf("message %q, want %q", r.Body["message"], msg)
	}
	errs := fieldErrors(t, r)
	found := false
	for _, e := range errs {
		found = found || e["msg"] == msg
	}
	if !found {
		t.Errorf("no details.errors entry with msg %q: %s", msg, r.Raw)
	}
	return errs
}

func TestSupersedeHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, otherKey := ts.newOrg("other")

	t.Run("supersede links both sides", func(t *testing.T) {
		old := ts.write("The build cache lives on the NFS share", nil)
		r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "The build cache moved to object storage", "supersedes": []string{old}})
		mustStatus(t, r, 200)
		nid := str(r.Body["atom_id"])
		if r.Body["stored"] != true || fmt.Sprint(r.Body["superseded"]) != fmt.Sprint([]any{old}) {
			t.Fatalf("supersede write: %s", r.Raw)
		}
		a := ts.do("GET", "/memory/atoms/"+old, ts.Key, nil)
		if a.Body["superseded_by"] != nid {
			t.Errorf("old superseded_by %v, want %s", a.Body["superseded_by"], nid)
		}
		b := ts.do("GET", "/memory/atoms/"+nid, ts.Key, nil)
		if fmt.Sprint(b.Body["supersedes"]) != fmt.Sprint([]any{old}) {
			t.Errorf("new supersedes %v", b.Body["supersedes"])
		}
	})

	t.Run("another domain may supersede", func(t *testing.T) {
		old := ts.write("Oncall rotation is weekly", map[string]any{"domain": "ops"})
		r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "Oncall rotation is biweekly", "domain": "team", "supersedes": []string{old}})
		mustStatus(t, r, 200)
		if r.Body["stored"] != true {
			t.Fatalf("cross-domain supersede: %s", r.Raw)
		}
	})

	t.Run("missing target is 404, foreign target identical", func(t *testing.T) {
		foreign := ""
		{
			r := ts.do("POST", "/memory/write", otherKey, map[string]any{"content": "Belongs to the other org"})
			mustStatus(t, r, 200)
			foreign = str(r.Body["atom_id"])
		}
		missing := "0190a000-0000-7000-8000-000000000000"
		var bodies []map[string]any
		for _, id := range []string{missing, foreign} {
			r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "Replaces " + id, "supersedes": []string{id}})
			checkEnvelope(t, r, 404, "NOT_FOUND")
			b := withoutRequestID(r)
			// The message names the target; compare with the ID masked.
			b["message"] = strings.ReplaceAll(str(b["message"]), id, "<id>")
			if d := obj(b["details"]); d != nil {
				for k, v := range d {
					if v == id {
						d[k] = "<id>"
					}
				}
			}
			bodies = append(bodies, b)
		}
		if fmt.Sprint(bodies[0]) != fmt.Sprint(bodies[1]) {
			t.Errorf("foreign and missing targets differ:\n%v\n%v", bodies[0], bodies[1])
		}
		// The foreign atom is untouched.
		a := ts.do("GET", "/memory/atoms/"+foreign, otherKey, nil)
		if a.Body["superseded_by"] != nil {
			t.Errorf("foreign atom was superseded: %s", a.Raw)
		}
	})

	t.Run("already superseded target is 409 naming the successor", func(t *testing.T) {
		v1 := ts.write("Staging database is db-stage-1", nil)
		v2 := str(ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "Staging database is db-stage-2", "supersedes": []string{v1}}).Body["atom_id"])
		r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "Staging database is db-stage-3", "supersedes": []string{v1}})
		checkEnvelope(t, r, 409, "CONFLICT")
		if !strings.Contains(str(r.Body["message"]), v2) {
			t.Errorf("409 message does not name the successor %s: %s", v2, r.Raw)
		}
	})

	t.Run("all or nothing", func(t *testing.T) {
		good := ts.write("Release train leaves on Tuesdays", nil)
		gone := ts.write("Release train leaves on Mondays", nil)
		succ := str(ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "Release train leaves on Wednesdays", "supersedes": []string{gone}}).Body["atom_id"])
		before := num(ts.do("GET", "/memory/stats", ts.Key, nil).Body["total_atoms"])
		cases := []struct {
			name   string
			ids    []string
			status int
		}{
			{"good then conflicting", []string{good, gone}, 409},
			{"good then missing", []string{good, "0190a000-0000-7000-8000-00000000dead"}, 404},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := ts.do("POST", "/memory/write", ts.Key, map[string]any{"content": "Release train leaves on Thursdays", "supersedes": tc.ids})
				if r.Status != tc.status {
					t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Raw)
				}
				if a := ts.do("GET", "/memory/atoms/"+good, ts.Key, nil); a.Body["superseded_by"] != nil {
					t.Errorf("good target was superseded: %s", a.Raw)
				}
				if a := ts.do("GET", "/memory/atoms/"+gone, ts.Key, nil); a.Body["superseded_by"] != succ {
					t.Errorf("conflicting target changed: %s", a.Raw)
				}
				if after := num(ts.do("GET", "/memory/stats", ts.Key, nil).Body["total_atoms"]); after != before {
					t.Errorf("total_atoms %v -> %v: something was stored", before, after)
				}
			})
		}
	})
}
