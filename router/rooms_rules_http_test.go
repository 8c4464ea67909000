package router_test

import (
	"reflect"
	"strings"
	"testing"
)

// Messages of interface §7.3, word for word.
const (
	rmMsgNonCanonical = "Non-canonical room address; use 'xroom:<room_id>' (no leading space, lowercase prefix)"
	rmMsgInvalid      = "Invalid room address"
	rmMsgNoOrg        = "Caller org not identified"
	rmMsgNotFound     = "Room not found"
	rmMsgNotMember    = "Not an active member of this room"
	rmMsgArchived     = "Room is archived"
	rmMsgReadOnly     = "Read-only membership cannot write to this room"
	rmMsgV2Only       = "xroom: rooms are only supported on the v2 memory API (/memory/write, /memory/read)."
	rmMsgDelete       = "Room domains (xroom:) are not supported on this delete endpoint."
)

// rmEndpoint sends one room-capable request addressing domain.
type rmEndpoint struct {
	name  string
	write bool // needs read_write
	send  func(ts *testServer, key, domain string) resp
}

// rmEndpoints are the data-path endpoints of interface §7.2 that accept a
// room domain. atomID is any UUID (feedback needs one).
func rmEndpoints(atomID string) []rmEndpoint {
	return []rmEndpoint{
		{"write", true, func(ts *testServer, key, d string) resp {
			return ts.do("POST", "/memory/write", key, map[string]any{"content": "Room rule probe written here", "domain": d})
		}},
		{"write_batch", true, func(ts *testServer, key, d string) resp {
			return ts.do("POST", "/memory/write_batch", key, map[string]any{"items": []any{
				map[string]any{"content": "A private batch item beside the probe"},
				map[string]any{"content": "Room rule probe in a batch", "domain": d}}})
		}},
		{"read", false, func(ts *testServer, key, d string) resp {
			return ts.do("POST", "/memory/read", key, map[string]any{"query": "probe", "domain": d})
		}},
		{"recent", false, func(ts *testServer, key, d string) resp {
			return ts.do("POST", "/memory/recent", key, map[string]any{"domain": d})
		}},
		{"graph", false, func(ts *testServer, key, d string) resp {
			return ts.do("POST", "/memory/graph", key, map[string]any{"seeds": []string{"probe"}, "domain": d})
		}},
		{"feedback", true, func(ts *testServer, key, d string) resp {
			return ts.do("POST", "/memory/feedback", key, map[string]any{"atom_ids": []string{atomID}, "outcome": 0.5, "domain": d})
		}},
		{"consolidate", true, func(ts *testServer, key, d string) resp {
			return ts.do("POST", "/memory/consolidate", key, map[string]any{"domain": d})
		}},
	}
}

func TestRoomAddressRulesHTTP(t *testing.T) {
	t.Parallel()
	f := newRoomFixture(t)
	ts := f.ts
	private := ts.write("Owner keeps a private note about rules", nil)
	archived := rmCreateRoom(t, ts, f.owner.key, "old room")
	rmAddMember(t, ts, f.owner.key, archived, f.reader.key, "read_write")
	mustStatus(t, ts.do("POST", "/memory/rooms/"+archived+"/archive", f.owner.key, nil), 200)

	type want struct {
		status int
		code   string
		msg    string
	}
	malformed := want{400, "VALIDATION_ERROR", "Malformed room id: room_a!b"}
	cases := []struct {
		name   string
		key    string
		domain string
		want   want
		write  *want // when a write endpoint answers differently
	}{
		{"uppercase prefix", f.owner.key, "XROOM:room_x", want{400, "VALIDATION_ERROR", rmMsgNonCanonical}, nil},
		{"mixed-case prefix", f.owner.key, "xRoom:" + f.room, want{400, "VALIDATION_ERROR", rmMsgNonCanonical}, nil},
		{"leading space", f.owner.key, " xroom:x", want{400, "VALIDATION_ERROR", rmMsgNonCanonical}, nil},
		{"leading space canonical id", f.owner.key, " xroom:" + f.room, want{400, "VALIDATION_ERROR", rmMsgNonCanonical}, nil},
		{"leading no-break space", f.owner.key, "\u00a0xroom:" + f.room, want{400, "VALIDATION_ERROR", rmMsgNonCanonical}, nil},
		{"leading em space", f.owner.key, "\u2003xroom:" + f.room, want{400, "VALIDATION_ERROR", rmMsgNonCanonical}, nil},
		{"leading zero-width space", f.owner.key, "\u200bxroom:" + f.room, want{400, "VALIDATION_ERROR", rmMsgNonCanonical}, nil},
		{"full-width letters", f.owner.key, "ｘroom：" + f.room, want{400, "VALIDATION_ERROR", rmMsgNonCanonical}, nil},
		{"disallowed character", f.owner.key, "xroom:room_a!b", malformed, nil},
		{"empty id", f.owner.key, "xroom:", want{403, "FORBIDDEN", rmMsgInvalid}, nil},
		{"reserved room_", f.owner.key, "xroom:room_", want{403, "FORBIDDEN", rmMsgInvalid}, nil},
		{"reserved system", f.owner.key, "xroom:system", want{403, "FORBIDDEN", rmMsgInvalid}, nil},
		{"reserved admin", f.owner.key, "xroom:admin", want{403, "FORBIDDEN", rmMsgInvalid}, nil},
		{"unknown room", f.owner.key, "xroom:" + rmMissingRoom, want{404, "NOT_FOUND", rmMsgNotFound}, nil},
		{"unknown room id with allowed characters", f.owner.key, "xroom:room_does-not_exist", want{404, "NOT_FOUND", rmMsgNotFound}, nil},
		{"outsider", f.outsider.key, f.addr, want{403, "FORBIDDEN", rmMsgNotMember}, nil},
		{"outsider on an archived room", f.outsider.key, "xroom:" + archived, want{403, "FORBIDDEN", rmMsgNotMember}, nil},
		{"member of an archived room", f.reader.key, "xroom:" + archived, want{403, "FORBIDDEN", rmMsgArchived}, nil},
		{"owner of an archived room", f.owner.key, "xroom:" + archived, want{403, "FORBIDDEN", rmMsgArchived}, nil},
		{"read member", f.reader.key, f.addr, want{200, "", ""}, &want{403, "FORBIDDEN", rmMsgReadOnly}},
	}
	for _, ep := range rmEndpoints(private) {
		t.Run(ep.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					w := tc.want
					if ep.write && tc.write != nil {
						w = *tc.write
					}
					r := ep.send(ts, tc.key, tc.domain)
					if w.status == 200 {
						mustStatus(t, r, 200)
						return
					}
					rmErr(t, r, w.status, w.code, w.msg)
					if w.status == 400 {
						fieldErrors(t, r)
					}
				})
			}
		})
	}

	t.Run("unauthenticated room request", func(t *testing.T) {
		for _, ep := range rmEndpoints(private) {
			for _, d := range []string{f.addr, "xroom:" + rmMissingRoom} {
				r := ep.send(ts, "", d)
				rmErr(t, r, 401, "UNAUTHORIZED", rmMsgNoOrg)
				if reason := obj(r.Body["details"])["reason"]; reason != "missing_key" {
					t.Errorf("%s: details.reason %v, want missing_key", ep.name, reason)
				}
			}
		}
	})

	t.Run("room domains refused by the v1 endpoints", func(t *testing.T) {
		for _, d := range []string{f.addr, "xroom:" + rmMissingRoom} {
			// Without a key: the room request's 401 (§7.3), as on the others.
			for _, r := range []resp{
				ts.do("POST", "/memory/query", "", map[string]any{"query": "notes", "domains": []string{"general", d}}),
				ts.do("POST", "/memory/read-batch", "", map[string]any{"queries": []any{map[string]any{"query": "notes", "domain": d}}}),
				ts.do("DELETE", "/memory/domain/"+d, "", nil),
			} {
				rmErr(t, r, 401, "UNAUTHORIZED", rmMsgNoOrg)
			}
			r := ts.do("POST", "/memory/query", f.owner.key, map[string]any{"query": "notes", "domains": []string{"general", d}})
			rmErr(t, r, 400, "VALIDATION_ERROR", rmMsgV2Only)
			rmHasLoc(t, r, "body.domains.1")
			r = ts.do("POST", "/memory/read-batch", f.owner.key, map[string]any{"queries": []any{
				map[string]any{"query": "notes"}, map[string]any{"query": "notes", "domain": d}}})
			rmErr(t, r, 400, "VALIDATION_ERROR", rmMsgV2Only)
			rmHasLoc(t, r, "body.queries.1.domain")
			r = ts.do("POST", "/memory/write-batch", f.owner.key, map[string]any{"items": []any{
				map[string]any{"content": "Hyphen batch private item"},
				map[string]any{"content": "Hyphen batch room item", "domain": d}}})
			rmErr(t, r, 400, "VALIDATION_ERROR", rmMsgV2Only)
			rmHasLoc(t, r, "body.items.1.domain")
			r = ts.do("DELETE", "/memory/domain/"+d, f.owner.key, nil)
			rmErr(t, r, 400, "VALIDATION_ERROR", rmMsgDelete)
			fieldErrors(t, r)
		}
		if got := rmRead(ts, f.owner.key, "", "Hyphen batch private item", nil); contains(rmContents(got), "Hyphen batch private item") {
			t.Errorf("a refused hyphen batch wrote its private item")
		}
	})

	t.Run("lookalike prefixes are private domains", func(t *testing.T) {
		for _, d := range []string{"room:abc", "xroomx:abc", "xroom_abc", "xroom", "myxroom:room_x"} {
			id := ts.write("Private note filed under the lookalike domain "+d, map[string]any{"domain": d})
			if a := ts.do("GET", "/memory/atoms/"+id, f.owner.key, nil); a.Status != 200 || a.Body["domain"] != d {
				t.Errorf("%q: atom %d %s", d, a.Status, a.Raw)
			}
			r := rmRead(ts, f.owner.key, d, "lookalike domain", nil)
			mustStatus(t, r, 200)
			if ids := itemIDs(r); len(ids) != 1 || ids[0] != id {
				t.Errorf("%q: read %s", d, r.Raw)
			}
			mustStatus(t, ts.do("POST", "/memory/query", f.owner.key, map[string]any{"query": "lookalike", "domains": []string{d}}), 200)
			mustStatus(t, ts.do("POST", "/memory/recent", f.owner.key, map[string]any{"domain": d}), 200)
			mustStatus(t, ts.do("POST", "/memory/write-batch", f.owner.key, map[string]any{"items": []any{
				map[string]any{"content": "Hyphen batch item in lookalike " + d, "domain": d}}}), 200)
			// Another org's private lookalike domain is not shared.
			if r := rmRead(ts, f.outsider.key, d, "lookalike domain", nil); r.Status != 200 || len(items(r)) != 0 {
				t.Errorf("%q: outsider read %d %s", d, r.Status, r.Raw)
			}
			del := ts.do("DELETE", "/memory/domain/"+d, f.owner.key, nil)
			mustStatus(t, del, 200)
			if num(del.Body["deleted"]) != 2 {
				t.Errorf("%q: delete domain %s", d, del.Raw)
			}
		}
	})
}

// rmHasLoc asserts a details.errors entry at loc (dotted).
func rmHasLoc(t *testing.T, r resp, loc string) {
	t.Helper()
	for _, e := range fieldErrors(t, r) {
		if locString(e["loc"]) == loc {
			return
		}
	}
	t.Errorf("no details.errors entry at %s: %s", loc, r.Raw)
}

func rmContents(r resp) []string {
	var out []string
	for _, it := range items(r) {
		out = append(out, str(it["content"]))
	}
	return out
}

// TestRoomDataPathHTTP covers interface §7.2: what each endpoint does with a
// room, provenance, author filters and who pays the quota.
func TestRoomDataPathHTTP(t *testing.T) {
	t.Parallel()
	f := newRoomFixture(t)
	ts := f.ts
	before := map[string]float64{}
	for _, o := range []rmOrg{f.owner, f.writer} {
		before[o.key] = num(ts.do("GET", "/memory/stats", o.key, nil).Body["total_atoms"])
	}
	roomWrite := func(o rmOrg, agent, env string, body map[string]any) string {
		t.Helper()
		body["domain"] = f.addr
		r := rmDo(ts, "POST", "/memory/write", o.key, agent, env, body)
		mustStatus(t, r, 200)
		if r.Body["stored"] != true {
			t.Fatalf("room write not stored: %s", r.Raw)
		}
		return str(r.Body["atom_id"])
	}
	ownerAtom := roomWrite(f.owner, "owner-agent", "cli", map[string]any{"content": "The owner decided to deploy the lighthouse service on Mondays",
		"concepts": []string{"lighthouse", "deploy"}, "external_ref": "room-ref-owner"})
	writerAtom := roomWrite(f.writer, "writer-agent", "vscode", map[string]any{"content": "The writer learned that zebracorn caches must be warmed first",
		"concepts": []string{"zebracorn", "cache"}, "external_ref": "room-ref-writer"})
	privateAtom := ts.write("The owner's private thoughts about lunch", nil)

	t.Run("read returns room atoms with provenance", func(t *testing.T) {
		for _, o := range []rmOrg{f.owner, f.reader, f.writer} {
			r := rmRead(ts, o.key, f.addr, "deploy lighthouse zebracorn caches", nil)
			mustStatus(t, r, 200)
			ids := itemIDs(r)
			if len(ids) != 2 || !contains(ids, ownerAtom) || !contains(ids, writerAtom) {
				t.Fatalf("room read: %s", r.Raw)
			}
			rmCheckProvenance(t, rmFind(r, ownerAtom), f.owner.id, "owner-agent", "cli", false)
			rmCheckProvenance(t, rmFind(r, writerAtom), f.writer.id, "writer-agent", "vscode", true)
			if d := rmFind(r, ownerAtom)["domain"]; d != f.addr {
				t.Errorf("room atom domain %v", d)
			}
		}
		r := rmRead(ts, f.owner.key, "", "deploy lighthouse zebracorn caches", nil)
		mustStatus(t, r, 200)
		if ids := itemIDs(r); contains(ids, ownerAtom) || contains(ids, writerAtom) || !contains(ids, privateAtom) {
			t.Errorf("a read with domain null must cover private domains only: %s", r.Raw)
		}
		if p := rmFind(r, privateAtom); p != nil && p["provenance"] != nil {
			t.Errorf("a private atom carries provenance: %v", p)
		}
	})

	t.Run("author filters", func(t *testing.T) {
		cases := []struct {
			name   string
			filter map[string]any
			want   string
		}{
			{"principal", map[string]any{"author_principal": f.writer.id}, writerAtom},
			{"agent", map[string]any{"author_agent": "owner-agent"}, ownerAtom},
			{"client_env", map[string]any{"author_client_env": "vscode"}, writerAtom},
			{"external", map[string]any{"author_is_external": true}, writerAtom},
			{"not external", map[string]any{"author_is_external": false}, ownerAtom},
			{"combined", map[string]any{"author_principal": f.owner.id, "author_client_env": "cli"}, ownerAtom},
			{"no match", map[string]any{"author_agent": "nobody"}, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := rmRead(ts, f.reader.key, f.addr, "deploy lighthouse zebracorn caches", tc.filter)
				mustStatus(t, r, 200)
				ids := itemIDs(r)
				if tc.want == "" && len(ids) != 0 || tc.want != "" && (len(ids) != 1 || ids[0] != tc.want) {
					t.Errorf("ids %v, want [%s]", ids, tc.want)
				}
			})
		}
	})

	t.Run("recent with provenance and exclude_author", func(t *testing.T) {
		r := ts.do("POST", "/memory/recent", f.reader.key, map[string]any{"domain": f.addr})
		mustStatus(t, r, 200)
		got := items(r)
		if len(got) != 2 || got[0]["atom_id"] != writerAtom || got[1]["atom_id"] != ownerAtom {
			t.Fatalf("room feed: %s", r.Raw)
		}
		rmCheckProvenance(t, got[0], f.writer.id, "writer-agent", "vscode", true)
		rmCheckProvenance(t, got[1], f.owner.id, "owner-agent", "cli", false)
		r = ts.do("POST", "/memory/recent", f.reader.key, map[string]any{"domain": f.addr, "exclude_author": f.writer.id})
		mustStatus(t, r, 200)
		if ids := itemIDs(r); len(ids) != 1 || ids[0] != ownerAtom {
			t.Errorf("exclude_author: %s", r.Raw)
		}
		r = ts.do("POST", "/memory/recent", f.owner.key, map[string]any{})
		mustStatus(t, r, 200)
		if ids := itemIDs(r); contains(ids, ownerAtom) || contains(ids, writerAtom) {
			t.Errorf("the owner's own feed holds room atoms: %s", r.Raw)
		}
	})

	t.Run("graph reads the room's edges", func(t *testing.T) {
		r := ts.do("POST", "/memory/graph", f.reader.key, map[string]any{"seeds": []string{"zebracorn"}, "domain": f.addr})
		mustStatus(t, r, 200)
		if len(list(r.Body["edges"])) == 0 {
			t.Errorf("no room edges for zebracorn: %s", r.Raw)
		}
		r = ts.do("POST", "/memory/graph", f.writer.key, map[string]any{"seeds": []string{"zebracorn"}})
		mustStatus(t, r, 200)
		if len(list(r.Body["edges"])) != 0 {
			t.Errorf("the writer's own graph holds room edges: %s", r.Raw)
		}
	})

	t.Run("feedback in a room", func(t *testing.T) {
		body := map[string]any{"atom_ids": []string{ownerAtom, writerAtom}, "outcome": 1, "domain": f.addr,
			"query_concepts": []string{"lighthouse"}}
		r := ts.do("POST", "/memory/feedback", f.writer.key, body)
		mustStatus(t, r, 200)
		if num(r.Body["updated_count"]) != 2 {
			t.Errorf("room feedback: %s", r.Raw)
		}
		delete(body, "domain")
		r = ts.do("POST", "/memory/feedback", f.writer.key, body)
		mustStatus(t, r, 200)
		if num(r.Body["updated_count"]) != 0 {
			t.Errorf("feedback without the room domain reached room atoms: %s", r.Raw)
		}
		rr := rmRead(ts, f.owner.key, f.addr, "deploy lighthouse zebracorn caches", nil)
		if v := num(rmFind(rr, writerAtom)["valence"]); v <= 0 {
			t.Errorf("valence after positive room feedback %v", v)
		}
	})

	t.Run("consolidate answers 503 in a room", func(t *testing.T) {
		r := ts.do("POST", "/memory/consolidate", f.writer.key, map[string]any{"domain": f.addr})
		checkEnvelope(t, r, 503, "INTERNAL")
		if obj(r.Body["details"])["reason"] != "consolidation_disabled" || r.Body["retryable"] != false {
			t.Errorf("consolidate: %s", r.Raw)
		}
	})

	t.Run("supersedes on a room write", func(t *testing.T) {
		r := ts.do("POST", "/memory/write", f.owner.key, map[string]any{"content": "A room revision that cannot be",
			"domain": f.addr, "supersedes": []string{privateAtom}})
		checkValidation(t, r, "body", "supersedes")
		r = ts.do("POST", "/memory/write", f.owner.key, map[string]any{"content": "A room revision of a room atom",
			"domain": f.addr, "supersedes": []string{ownerAtom}})
		checkValidation(t, r, "body", "supersedes")
		if a := ts.do("GET", "/memory/atoms/"+privateAtom, f.owner.key, nil); a.Body["superseded_by"] != nil {
			t.Errorf("a refused room write touched its target: %s", a.Raw)
		}
	})

	t.Run("lookups answer 404 for room atoms", func(t *testing.T) {
		unknown := ts.do("GET", "/memory/atoms/"+"0190c2a1-0000-7000-8000-000000000000", f.owner.key, nil)
		checkEnvelope(t, unknown, 404, "NOT_FOUND")
		for _, o := range []rmOrg{f.owner, f.writer, f.reader} {
			for _, id := range []string{ownerAtom, writerAtom} {
				r := ts.do("GET", "/memory/atoms/"+id, o.key, nil)
				checkEnvelope(t, r, 404, "NOT_FOUND")
				rmSameBody(t, r, unknown)
				r = ts.do("GET", "/memory/atoms/"+id+"/chain", o.key, nil)
				checkEnvelope(t, r, 404, "NOT_FOUND")
				rmSameBody(t, r, unknown)
				checkEnvelope(t, ts.do("DELETE", "/memory/atoms/"+id, o.key, nil), 404, "NOT_FOUND")
			}
			for _, ref := range []string{"room-ref-owner", "room-ref-writer"} {
				r := ts.do("POST", "/memory/atoms/by-external-ref", o.key, map[string]any{"external_ref": ref})
				checkEnvelope(t, r, 404, "NOT_FOUND")
			}
		}
		// To an org never in the room, a room atom's ID is any unknown ID:
		// its DELETE cannot tell that a UUID names an atom in a room.
		for _, id := range []string{ownerAtom, writerAtom} {
			r := ts.do("DELETE", "/memory/atoms/"+id, f.outsider.key, nil)
			mustStatus(t, r, 200)
			if num(r.Body["deleted"]) != 0 || r.Body["atom_id"] != id || r.Body["history_destroyed"] != false {
				t.Errorf("outsider's delete of a room atom: %s", r.Raw)
			}
		}
		r := rmRead(ts, f.reader.key, f.addr, "deploy lighthouse zebracorn caches", nil)
		if ids := itemIDs(r); !contains(ids, ownerAtom) || !contains(ids, writerAtom) {
			t.Errorf("room atoms gone after the refused deletes: %s", r.Raw)
		}
	})

	t.Run("include_history is inert for rooms", func(t *testing.T) {
		mustStatus(t, ts.admin("PATCH", "/admin/v1/orgs/"+f.reader.id+"/settings", map[string]any{"hide_replaced": true}), 200)
		plain := rmRead(ts, f.reader.key, f.addr, "deploy lighthouse zebracorn caches", nil)
		hist := rmRead(ts, f.reader.key, f.addr, "deploy lighthouse zebracorn caches", map[string]any{"include_history": true})
		mustStatus(t, hist, 200)
		if a, b := itemIDs(plain), itemIDs(hist); len(a) != len(b) || len(a) != 2 {
			t.Errorf("include_history changed a room read: %v vs %v", a, b)
		}
		r := ts.do("POST", "/memory/recent", f.reader.key, map[string]any{"domain": f.addr, "include_history": true})
		mustStatus(t, r, 200)
		if len(items(r)) != 2 {
			t.Errorf("include_history changed the room feed: %s", r.Raw)
		}
	})

	t.Run("write_batch mixes private and room items", func(t *testing.T) {
		r := rmDo(ts, "POST", "/memory/write_batch", f.writer.key, "batch-agent", "ci", map[string]any{"items": []any{
			map[string]any{"content": "Batch private note on kiwi fruit"},
			map[string]any{"content": "Batch room note on mango ripeness", "domain": f.addr},
			map[string]any{"content": "Batch private note on papaya seeds", "domain": "fruit"}}})
		mustStatus(t, r, 200)
		res := list(r.Body["results"])
		if num(r.Body["total_count"]) != 3 || num(r.Body["stored_count"]) != 3 || len(res) != 3 {
			t.Fatalf("batch: %s", r.Raw)
		}
		for i, x := range res {
			if it := obj(x); num(it["index"]) != float64(i) || it["stored"] != true || it["error"] != nil {
				t.Errorf("result %d: %v", i, it)
			}
		}
		p0, room, p2 := str(obj(res[0])["atom_id"]), str(obj(res[1])["atom_id"]), str(obj(res[2])["atom_id"])
		for _, id := range []string{p0, p2} {
			mustStatus(t, ts.do("GET", "/memory/atoms/"+id, f.writer.key, nil), 200)
		}
		checkEnvelope(t, ts.do("GET", "/memory/atoms/"+room, f.writer.key, nil), 404, "NOT_FOUND")
		rr := rmRead(ts, f.owner.key, f.addr, "mango ripeness", nil)
		it := rmFind(rr, room)
		if it == nil {
			t.Fatalf("batch room item not in the room: %s", rr.Raw)
		}
		rmCheckProvenance(t, it, f.writer.id, "batch-agent", "ci", true)
	})

	t.Run("write_batch fails with the room item's status", func(t *testing.T) {
		other := rmCreateRoom(t, ts, f.outsider.key, "outsider's room")
		cases := []struct {
			name   string
			key    string
			domain string
			status int
			code   string
			msg    string
		}{
			{"not a member", f.writer.key, "xroom:" + other, 403, "FORBIDDEN", rmMsgNotMember},
			{"unknown room", f.writer.key, "xroom:" + rmMissingRoom, 404, "NOT_FOUND", rmMsgNotFound},
			{"read member", f.reader.key, f.addr, 403, "FORBIDDEN", rmMsgReadOnly},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				total := num(ts.do("GET", "/memory/stats", tc.key, nil).Body["total_atoms"])
				r := ts.do("POST", "/memory/write_batch", tc.key, map[string]any{"items": []any{
					map[string]any{"content": "Private item ahead of a refused room item " + tc.name},
					map[string]any{"content": "Room item that cannot be written " + tc.name, "domain": tc.domain}}})
				rmErr(t, r, tc.status, tc.code, tc.msg)
				if got := num(ts.do("GET", "/memory/stats", tc.key, nil).Body["total_atoms"]); got != total {
					t.Errorf("a refused batch wrote: total_atoms %v -> %v", total, got)
				}
			})
		}
	})

	t.Run("stats, domains and export never show room atoms", func(t *testing.T) {
		for _, o := range []rmOrg{f.owner, f.writer} {
			st := ts.do("GET", "/memory/stats", o.key, nil)
			mustStatus(t, st, 200)
			if o.key == f.owner.key && num(st.Body["total_atoms"]) != before[o.key]+1 {
				t.Errorf("owner total_atoms %v, want %v (one private write)", st.Body["total_atoms"], before[o.key]+1)
			}
			if o.key == f.writer.key && num(st.Body["total_atoms"]) != before[o.key]+2 {
				t.Errorf("writer total_atoms %v, want %v (two private batch items)", st.Body["total_atoms"], before[o.key]+2)
			}
			for _, d := range rmStrings(st.Body["domains"]) {
				if d == f.addr {
					t.Errorf("stats domains list the room: %s", st.Raw)
				}
			}
			doms := ts.do("GET", "/memory/domains", o.key, nil)
			for _, d := range rmStrings(doms.Body["domains"]) {
				if d == f.addr {
					t.Errorf("domains list the room: %s", doms.Raw)
				}
			}
			exp := ts.do("GET", "/memory/export", o.key, nil)
			mustStatus(t, exp, 200)
			if rmRawHas(exp.Raw, f.addr) {
				t.Errorf("export holds room atoms: %s", exp.Raw)
			}
		}
	})

	t.Run("author is ignored on API-key calls", func(t *testing.T) {
		id := roomWrite(f.writer, "real-agent", "real-env", map[string]any{"content": "Spoofing attempt about quokka habitats",
			"author": map[string]any{"principal": f.owner.id, "agent": "spoofed", "client_env": "spoofed", "is_external": false}})
		r := rmRead(ts, f.owner.key, f.addr, "quokka habitats", nil)
		rmCheckProvenance(t, rmFind(r, id), f.writer.id, "real-agent", "real-env", true)
	})
}

// rmCheckProvenance asserts the provenance of a read item or feed entry.
func rmCheckProvenance(t *testing.T, it map[string]any, principal, agent, env string, external bool) {
	t.Helper()
	p := obj(it["provenance"])
	if p == nil {
		t.Errorf("no provenance on %v", it)
		return
	}
	if p["principal"] != principal || p["agent"] != agent || p["client_env"] != env || p["is_external"] != external ||
		str(p["recorded_at"]) == "" {
		t.Errorf("provenance %v, want principal %s agent %s client_env %s is_external %v", p, principal, agent, env, external)
	}
}

// rmSameBody asserts two error bodies are equal apart from requestId.
func rmSameBody(t *testing.T, got, want resp) {
	t.Helper()
	if g, w := withoutRequestID(got), withoutRequestID(want); !reflect.DeepEqual(g, w) {
		t.Errorf("body %v, want %v", g, w)
	}
}

func rmRawHas(b []byte, s string) bool { return strings.Contains(string(b), s) }

// rmFind returns the read item with atom ID id, or nil.
func rmFind(r resp, id string) map[string]any {
	for _, it := range items(r) {
		if it["atom_id"] == id {
			return it
		}
	}
	return nil
}

func rmStrings(v any) []string {
	var out []string
	for _, x := range list(v) {
		out = append(out, str(x))
	}
	return out
}
