package router_test

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

// Room tests use three orgs besides the owner (the bootstrapped org): a read
// member, a read_write member and an outsider that never joins.

var (
	rmRoomIDRE = regexp.MustCompile(`^room_[0-9A-HJKMNP-TV-Z]{26}$`)
	rmCodeRE   = regexp.MustCompile(`^mshare_[0-9A-HJKMNP-TV-Z]{26}_[0-9A-Za-z]+$`)
)

// rmMissingRoom is a well-formed room ID that names no room.
const rmMissingRoom = "room_01ARZ3NDEKTSV4RRFFQ69G5FAV"

// rmOrg is one org taking part in room tests.
type rmOrg struct{ id, key string }

// rmFixture is a server with a room owned by owner, joined by reader (read)
// and writer (read_write); outsider belongs to no room.
type rmFixture struct {
	ts                              *testServer
	owner, reader, writer, outsider rmOrg
	room, addr                      string
}

func newRoomFixture(t *testing.T, opts ...serverOpt) *rmFixture {
	t.Helper()
	ts := newTestServer(t, opts...)
	f := &rmFixture{ts: ts, owner: rmOrg{ts.OrgID, ts.Key}}
	for _, o := range []*rmOrg{&f.reader, &f.writer, &f.outsider} {
		o.id, o.key = ts.newOrg("org")
	}
	f.room = rmCreateRoom(t, ts, f.owner.key, "shared notes")
	f.addr = "xroom:" + f.room
	rmAddMember(t, ts, f.owner.key, f.room, f.reader.key, "read")
	rmAddMember(t, ts, f.owner.key, f.room, f.writer.key, "read_write")
	return f
}

func rmCreateRoom(t *testing.T, ts *testServer, key, name string) string {
	t.Helper()
	r := ts.do("POST", "/memory/rooms", key, map[string]any{"name": name})
	mustStatus(t, r, 200)
	return str(r.Body["room_id"])
}

// rmInvite mints an invite with body (nil for the defaults) and returns it.
func rmInvite(t *testing.T, ts *testServer, key, room string, body any) map[string]any {
	t.Helper()
	r := ts.do("POST", "/memory/rooms/"+room+"/invites", key, body)
	mustStatus(t, r, 200)
	return r.Body
}

func rmJoin(ts *testServer, key, code string) resp {
	ts.t.Helper()
	return ts.do("POST", "/memory/rooms/join", key, map[string]any{"code": code})
}

// rmAddMember makes the org of memberKey a member of room at scope.
func rmAddMember(t *testing.T, ts *testServer, ownerKey, room, memberKey, scope string) {
	t.Helper()
	inv := rmInvite(t, ts, ownerKey, room, map[string]any{"scope": scope})
	mustStatus(t, rmJoin(ts, memberKey, str(inv["code"])), 200)
}

// rmErr asserts an error envelope with status, code and the exact message.
func rmErr(t *testing.T, r resp, status int, code, msg string) {
	t.Helper()
	checkEnvelope(t, r, status, code)
	if r.Body["message"] != msg {
		t.Errorf("message %q, want %q", r.Body["message"], msg)
	}
}

// rmDo sends a request with the API key and the provenance headers.
func rmDo(ts *testServer, method, path, key, agent, env string, body any) resp {
	ts.t.Helper()
	h := http.Header{}
	h.Set("X-Api-Key", key)
	if agent != "" {
		h.Set("X-Hebb-Agent", agent)
	}
	if env != "" {
		h.Set("X-Hebb-Client-Env", env)
	}
	return ts.doH(method, path, h, body)
}

// rmRead reads domain with a floor of 0 so every stored atom can come back.
func rmRead(ts *testServer, key, domain, query string, extra map[string]any) resp {
	ts.t.Helper()
	body := map[string]any{"query": query, "min_relevance": 0, "top_k": 50}
	if domain != "" {
		body["domain"] = domain
	}
	for k, v := range extra {
		body[k] = v
	}
	return ts.do("POST", "/memory/read", key, body)
}

// rmRoomRow returns the GET /memory/rooms row of room, or nil.
func rmRoomRow(t *testing.T, ts *testServer, key, room string) map[string]any {
	t.Helper()
	r := ts.do("GET", "/memory/rooms", key, nil)
	mustStatus(t, r, 200)
	for _, x := range list(r.Body["rooms"]) {
		if row := obj(x); row["room_id"] == room {
			return row
		}
	}
	return nil
}

// rmMember returns the members-list row of org, or nil.
func rmMember(t *testing.T, ts *testServer, ownerKey, room, org string) map[string]any {
	t.Helper()
	r := ts.do("GET", "/memory/rooms/"+room+"/members", ownerKey, nil)
	mustStatus(t, r, 200)
	for _, x := range list(r.Body["members"]) {
		if m := obj(x); m["org_id"] == org {
			return m
		}
	}
	return nil
}

// rmKeys is the sorted key list of m, comma-joined.
func rmKeys(m map[string]any) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestRoomCreateAndListHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	r := ts.do("POST", "/memory/rooms", ts.Key, map[string]any{"name": "  team memory "})
	mustStatus(t, r, 200)
	if got := rmKeys(r.Body); got != "address,created_at,name,owner_org_id,room_id,status" {
		t.Errorf("room keys %s", got)
	}
	room := str(r.Body["room_id"])
	if !rmRoomIDRE.MatchString(room) {
		t.Errorf("room_id %q is not room_<ulid>", room)
	}
	if r.Body["address"] != "xroom:"+room || r.Body["name"] != "team memory" || r.Body["owner_org_id"] != ts.OrgID ||
		r.Body["status"] != "active" {
		t.Errorf("room: %s", r.Raw)
	}

	t.Run("owner is a read_write member", func(t *testing.T) {
		m := rmMember(t, ts, ts.Key, room, ts.OrgID)
		if m == nil || m["scope"] != "read_write" || m["status"] != "active" || m["expires_at"] != nil ||
			str(m["joined_at"]) == "" {
			t.Errorf("owner membership: %v", m)
		}
		row := rmRoomRow(t, ts, ts.Key, room)
		if row == nil || row["role"] != "owner" || row["scope"] != "read_write" || row["status"] != "active" ||
			row["address"] != "xroom:"+room || row["name"] != "team memory" || row["expires_at"] != nil {
			t.Errorf("owner's rooms row: %v", row)
		}
		if _, ok := row["expires_at"]; !ok {
			t.Errorf("expires_at key missing: %v", row)
		}
	})

	t.Run("invalid bodies", func(t *testing.T) {
		checkValidation(t, ts.do("POST", "/memory/rooms", ts.Key, map[string]any{}), "body", "name")
		checkValidation(t, ts.do("POST", "/memory/rooms", ts.Key, map[string]any{"name": "   "}), "body", "name")
		checkValidation(t, ts.do("POST", "/memory/rooms", ts.Key, map[string]any{"name": "x", "color": "red"}))
	})

	t.Run("rooms list of an org with none", func(t *testing.T) {
		_, key := ts.newOrg("lonely")
		r := ts.do("GET", "/memory/rooms", key, nil)
		mustStatus(t, r, 200)
		if l, ok := r.Body["rooms"].([]any); !ok || len(l) != 0 {
			t.Errorf("rooms: %s", r.Raw)
		}
	})
}

func TestRoomInvitesHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	room := rmCreateRoom(t, ts, ts.Key, "invites")
	memberID, memberKey := ts.newOrg("member")
	_, outsiderKey := ts.newOrg("outsider")

	t.Run("defaults", func(t *testing.T) {
		for _, body := range []any{nil, map[string]any{}} {
			inv := rmInvite(t, ts, ts.Key, room, body)
			if got := rmKeys(inv); got != "code,expires_at,join_url,max_uses,room_id,scope,share_message,uses" {
				t.Errorf("invite keys %s", got)
			}
			code := str(inv["code"])
			if !rmCodeRE.MatchString(code) || !strings.HasPrefix(code, "mshare_"+strings.TrimPrefix(room, "room_")+"_") {
				t.Errorf("code %q", code)
			}
			if inv["room_id"] != room || inv["scope"] != "read_write" || num(inv["max_uses"]) != 1 || num(inv["uses"]) != 0 {
				t.Errorf("invite: %v", inv)
			}
			exp, err := time.Parse(time.RFC3339Nano, str(inv["expires_at"]))
			if week := time.Now().Add(7 * 24 * time.Hour); err != nil || exp.Before(week.Add(-time.Hour)) || exp.After(week.Add(time.Hour)) {
				t.Errorf("expires_at %v is not about 7 days ahead (%v)", inv["expires_at"], err)
			}
			if want := ts.URL + "/console/join/" + code; inv["join_url"] != want {
				t.Errorf("join_url %v, want %s", inv["join_url"], want)
			}
			msg := str(inv["share_message"])
			if !strings.Contains(msg, code) || !strings.Contains(msg, str(inv["join_url"])) {
				t.Errorf("share_message lacks the code or the link: %q", msg)
			}
		}
	})

	t.Run("bounds", func(t *testing.T) {
		path := "/memory/rooms/" + room + "/invites"
		checkValidation(t, ts.do("POST", path, ts.Key, map[string]any{"max_uses": 0}), "body", "max_uses")
		checkValidation(t, ts.do("POST", path, ts.Key, map[string]any{"max_uses": 1001}), "body", "max_uses")
		checkValidation(t, ts.do("POST", path, ts.Key, map[string]any{"scope": "admin"}), "body", "scope")
		checkValidation(t, ts.do("POST", path, ts.Key, map[string]any{"uses": 2}))
		inv := rmInvite(t, ts, ts.Key, room, map[string]any{"max_uses": 1000, "scope": "read", "expires_in_days": 2})
		if num(inv["max_uses"]) != 1000 || inv["scope"] != "read" {
			t.Errorf("invite: %v", inv)
		}
	})

	t.Run("single-use code redeemed twice", func(t *testing.T) {
		inv := rmInvite(t, ts, ts.Key, room, map[string]any{"scope": "read"})
		r := rmJoin(ts, memberKey, str(inv["code"]))
		mustStatus(t, r, 200)
		if got := rmKeys(r.Body); got != "address,room_id,scope" {
			t.Errorf("join keys %s", got)
		}
		if r.Body["room_id"] != room || r.Body["address"] != "xroom:"+room || r.Body["scope"] != "read" {
			t.Errorf("join: %s", r.Raw)
		}
		_, otherKey := ts.newOrg("late")
		rmErr(t, rmJoin(ts, otherKey, str(inv["code"])), 404, "NOT_FOUND", "Invite not found")
		row := rmRoomRow(t, ts, memberKey, room)
		if row == nil || row["role"] != "member" || row["scope"] != "read" || row["status"] != "active" {
			t.Errorf("member's rooms row: %v", row)
		}
		m := rmMember(t, ts, ts.Key, room, memberID)
		if m == nil || m["scope"] != "read" || m["status"] != "active" {
			t.Errorf("member row: %v", m)
		}
	})

	t.Run("unknown codes", func(t *testing.T) {
		for _, code := range []string{"mshare_nope", "mshare_" + strings.TrimPrefix(rmMissingRoom, "room_") + "_abc",
			"mshare_" + strings.TrimPrefix(room, "room_") + "_notacode", "hello"} {
			rmErr(t, rmJoin(ts, memberKey, code), 404, "NOT_FOUND", "Invite not found")
		}
		checkValidation(t, ts.do("POST", "/memory/rooms/join", memberKey, map[string]any{}), "body", "code")
	})

	t.Run("max_uses 3 admits three orgs", func(t *testing.T) {
		inv := rmInvite(t, ts, ts.Key, room, map[string]any{"max_uses": 3})
		code := str(inv["code"])
		listed := func() map[string]any {
			r := ts.do("GET", "/memory/rooms/"+room+"/invites", ts.Key, nil)
			mustStatus(t, r, 200)
			for _, x := range list(r.Body["invites"]) {
				if obj(x)["code"] == code {
					return obj(x)
				}
			}
			return nil
		}
		for i := range 3 {
			id, key := ts.newOrg("guest")
			r := rmJoin(ts, key, code)
			mustStatus(t, r, 200)
			if r.Body["scope"] != "read_write" {
				t.Errorf("join %d: %s", i, r.Raw)
			}
			if m := rmMember(t, ts, ts.Key, room, id); m == nil || m["status"] != "active" {
				t.Errorf("guest %d not a member: %v", i, m)
			}
			if l := listed(); i < 2 && (l == nil || num(l["uses"]) != float64(i+1)) {
				t.Errorf("after %d uses the invite lists as %v", i+1, l)
			} else if i == 2 && l != nil {
				t.Errorf("used-up invite still listed: %v", l)
			}
		}
		_, key := ts.newOrg("fourth")
		rmErr(t, rmJoin(ts, key, code), 404, "NOT_FOUND", "Invite not found")
	})

	t.Run("list shows outstanding invites only", func(t *testing.T) {
		fresh := rmCreateRoom(t, ts, ts.Key, "listing")
		a := rmInvite(t, ts, ts.Key, fresh, nil)
		b := rmInvite(t, ts, ts.Key, fresh, map[string]any{"max_uses": 2, "scope": "read"})
		_, key := ts.newOrg("joiner")
		mustStatus(t, rmJoin(ts, key, str(a["code"])), 200)
		r := ts.do("GET", "/memory/rooms/"+fresh+"/invites", ts.Key, nil)
		mustStatus(t, r, 200)
		l := list(r.Body["invites"])
		if len(l) != 1 || obj(l[0])["code"] != b["code"] {
			t.Fatalf("invites: %s", r.Raw)
		}
		if got := rmKeys(obj(l[0])); got != "code,expires_at,join_url,max_uses,room_id,scope,share_message,uses" {
			t.Errorf("listed invite keys %s", got)
		}
	})

	t.Run("a member's or the owner's redemption changes nothing", func(t *testing.T) {
		fresh := rmCreateRoom(t, ts, ts.Key, "redeemed again")
		joined := rmInvite(t, ts, ts.Key, fresh, map[string]any{"scope": "read_write"})
		id, key := ts.newOrg("limited")
		mustStatus(t, rmJoin(ts, key, str(joined["code"])), 200)
		expiry := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
		mustStatus(t, ts.do("PATCH", "/memory/rooms/"+fresh+"/members/"+id, ts.Key,
			map[string]any{"scope": "read", "expires_at": expiry}), 200)
		spare := rmInvite(t, ts, ts.Key, fresh, map[string]any{"max_uses": 2, "scope": "read_write"})
		for _, k := range []string{key, key, ts.Key} {
			r := rmJoin(ts, k, str(spare["code"]))
			mustStatus(t, r, 200)
			if want := map[bool]string{true: "read_write", false: "read"}[k == ts.Key]; r.Body["scope"] != want {
				t.Errorf("redeemed again: %s, want scope %s", r.Raw, want)
			}
		}
		m := rmMember(t, ts, ts.Key, fresh, id)
		if m == nil || m["scope"] != "read" || m["status"] != "active" || m["expires_at"] == nil {
			t.Errorf("the owner's scope and expiry were overwritten: %v", m)
		}
		r := ts.do("GET", "/memory/rooms/"+fresh+"/invites", ts.Key, nil)
		mustStatus(t, r, 200)
		for _, x := range list(r.Body["invites"]) {
			if obj(x)["code"] == spare["code"] && num(obj(x)["uses"]) != 0 {
				t.Errorf("redemptions without effect used the code: %v", x)
			}
		}
		// It still admits two new members.
		for range 2 {
			_, other := ts.newOrg("newcomer")
			mustStatus(t, rmJoin(ts, other, str(spare["code"])), 200)
		}
	})

	t.Run("owner-only routes", func(t *testing.T) {
		for _, key := range []string{memberKey, outsiderKey} {
			checkEnvelope(t, ts.do("POST", "/memory/rooms/"+room+"/invites", key, nil), 403, "FORBIDDEN")
			checkEnvelope(t, ts.do("GET", "/memory/rooms/"+room+"/invites", key, nil), 403, "FORBIDDEN")
			checkEnvelope(t, ts.do("GET", "/memory/rooms/"+room+"/members", key, nil), 403, "FORBIDDEN")
			checkEnvelope(t, ts.do("PATCH", "/memory/rooms/"+room+"/members/"+memberID, key,
				map[string]any{"scope": "read_write"}), 403, "FORBIDDEN")
			checkEnvelope(t, ts.do("DELETE", "/memory/rooms/"+room+"/members/"+memberID, key, nil), 403, "FORBIDDEN")
			checkEnvelope(t, ts.do("POST", "/memory/rooms/"+room+"/archive", key, nil), 403, "FORBIDDEN")
		}
		for _, missing := range []string{rmMissingRoom, "nothing"} {
			rmErr(t, ts.do("POST", "/memory/rooms/"+missing+"/invites", ts.Key, nil), 404, "NOT_FOUND", "Room not found")
			rmErr(t, ts.do("GET", "/memory/rooms/"+missing+"/invites", ts.Key, nil), 404, "NOT_FOUND", "Room not found")
			rmErr(t, ts.do("GET", "/memory/rooms/"+missing+"/members", ts.Key, nil), 404, "NOT_FOUND", "Room not found")
			rmErr(t, ts.do("POST", "/memory/rooms/"+missing+"/archive", ts.Key, nil), 404, "NOT_FOUND", "Room not found")
		}
	})
}

func TestRoomMembershipHTTP(t *testing.T) {
	t.Parallel()
	f := newRoomFixture(t)
	ts := f.ts
	write := func(key, content string) resp {
		return ts.do("POST", "/memory/write", key, map[string]any{"content": content, "domain": f.addr})
	}
	members := "/memory/rooms/" + f.room + "/members/"

	t.Run("scope change takes effect on the next request", func(t *testing.T) {
		rmErr(t, write(f.reader.key, "Reader tries to write before the upgrade"), 403, "FORBIDDEN",
			"Read-only membership cannot write to this room")
		r := ts.do("PATCH", members+f.reader.id, f.owner.key, map[string]any{"scope": "read_write"})
		mustStatus(t, r, 200)
		if got := rmKeys(r.Body); got != "expires_at,joined_at,org_id,scope,status" {
			t.Errorf("member keys %s", got)
		}
		if r.Body["org_id"] != f.reader.id || r.Body["scope"] != "read_write" || r.Body["status"] != "active" {
			t.Errorf("patched member: %s", r.Raw)
		}
		mustStatus(t, write(f.reader.key, "Reader writes after the upgrade to read_write"), 200)
		mustStatus(t, ts.do("PATCH", members+f.reader.id, f.owner.key, map[string]any{"scope": "read"}), 200)
		rmErr(t, write(f.reader.key, "Reader tries to write after the downgrade"), 403, "FORBIDDEN",
			"Read-only membership cannot write to this room")
		if row := rmRoomRow(t, ts, f.reader.key, f.room); row == nil || row["scope"] != "read" {
			t.Errorf("reader's row after downgrade: %v", row)
		}
	})

	t.Run("invalid patches", func(t *testing.T) {
		past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
		checkValidation(t, ts.do("PATCH", members+f.reader.id, f.owner.key, map[string]any{"expires_at": past}),
			"body", "expires_at")
		checkValidation(t, ts.do("PATCH", members+f.reader.id, f.owner.key, map[string]any{"expires_at": "soon"}),
			"body", "expires_at")
		checkValidation(t, ts.do("PATCH", members+f.reader.id, f.owner.key, map[string]any{"scope": "owner"}),
			"body", "scope")
		checkValidation(t, ts.do("PATCH", members+f.reader.id, f.owner.key, map[string]any{"role": "x"}))
		checkEnvelope(t, ts.do("PATCH", members+f.outsider.id, f.owner.key, map[string]any{"scope": "read"}),
			404, "NOT_FOUND")
		if m := rmMember(t, ts, f.owner.key, f.room, f.reader.id); m["expires_at"] != nil || m["scope"] != "read" {
			t.Errorf("a refused patch changed the member: %v", m)
		}
	})

	t.Run("the owner cannot be revoked or changed", func(t *testing.T) {
		checkEnvelope(t, ts.do("DELETE", members+f.owner.id, f.owner.key, nil), 403, "FORBIDDEN")
		checkEnvelope(t, ts.do("PATCH", members+f.owner.id, f.owner.key, map[string]any{"scope": "read"}), 403, "FORBIDDEN")
		if m := rmMember(t, ts, f.owner.key, f.room, f.owner.id); m["status"] != "active" || m["scope"] != "read_write" {
			t.Errorf("owner membership: %v", m)
		}
	})

	t.Run("revoke is immediate and re-invite restores", func(t *testing.T) {
		kept := str(write(f.writer.key, "Writer leaves a note about the staging database").Body["atom_id"])
		if kept == "" {
			t.Fatal("writer's room write not stored")
		}
		// A code of several uses minted before the revocation (say, the one
		// the member joined with) must not undo it: the member rejoined by
		// themselves.
		old := str(rmInvite(t, ts, f.owner.key, f.room, map[string]any{"max_uses": 5})["code"])
		r := ts.do("DELETE", members+f.writer.id, f.owner.key, nil)
		mustStatus(t, r, 200)
		if r.Body["org_id"] != f.writer.id || r.Body["status"] != "revoked" {
			t.Errorf("revoked member: %s", r.Raw)
		}
		rmErr(t, rmRead(ts, f.writer.key, f.addr, "staging database", nil), 403, "FORBIDDEN",
			"Not an active member of this room")
		rmErr(t, write(f.writer.key, "Writer tries again after revocation"), 403, "FORBIDDEN",
			"Not an active member of this room")
		if row := rmRoomRow(t, ts, f.writer.key, f.room); row != nil {
			t.Errorf("revoked member still lists the room: %v", row)
		}
		if m := rmMember(t, ts, f.owner.key, f.room, f.writer.id); m == nil || m["status"] != "revoked" {
			t.Errorf("members list after revoke: %v", m)
		}
		rmErr(t, rmJoin(ts, f.writer.key, old), 403, "FORBIDDEN", "Not an active member of this room")
		rmErr(t, ts.do("PATCH", members+f.writer.id, f.owner.key, map[string]any{"scope": "read"}), 403, "FORBIDDEN",
			"Membership is not active; a new invite restores access")
		rmErr(t, rmRead(ts, f.writer.key, f.addr, "staging database", nil), 403, "FORBIDDEN",
			"Not an active member of this room")
		owner := rmRead(ts, f.owner.key, f.addr, "staging database", nil)
		mustStatus(t, owner, 200)
		if !contains(itemIDs(owner), kept) {
			t.Errorf("the revoked member's atom left the room: %s", owner.Raw)
		}
		rmAddMember(t, ts, f.owner.key, f.room, f.writer.key, "read_write")
		mustStatus(t, rmRead(ts, f.writer.key, f.addr, "staging database", nil), 200)
		mustStatus(t, write(f.writer.key, "Writer is back after the re-invite"), 200)
		if m := rmMember(t, ts, f.owner.key, f.room, f.writer.id); m == nil || m["status"] != "active" {
			t.Errorf("members list after re-invite: %v", m)
		}
	})

	t.Run("expiry passes", func(t *testing.T) {
		// An expiry that has passed by the time the server checks it is a
		// 400; on a slow machine try again further ahead.
		var exp time.Time
		var r resp
		for ahead := 1500 * time.Millisecond; ; ahead *= 2 {
			exp = time.Now().Add(ahead).UTC().Truncate(time.Microsecond)
			r = ts.do("PATCH", members+f.reader.id, f.owner.key,
				map[string]any{"expires_at": exp.Format("2006-01-02T15:04:05.000000Z")})
			if r.Status != 400 || ahead > 20*time.Second {
				break
			}
		}
		mustStatus(t, r, 200)
		if got, err := time.Parse(time.RFC3339Nano, str(r.Body["expires_at"])); err != nil || !got.Equal(exp) {
			t.Errorf("expires_at %v, want %v", r.Body["expires_at"], exp)
		}
		old := str(rmInvite(t, ts, f.owner.key, f.room, map[string]any{"max_uses": 5})["code"])
		time.Sleep(time.Until(exp) + 100*time.Millisecond)
		rmErr(t, rmRead(ts, f.reader.key, f.addr, "anything", nil), 403, "FORBIDDEN", "Not an active member of this room")
		// A code minted before the expiry does not extend it, and the owner
		// cannot lift it either (§3.2 changes active members only).
		rmErr(t, rmJoin(ts, f.reader.key, old), 403, "FORBIDDEN", "Not an active member of this room")
		for _, patch := range []map[string]any{{"expires_at": nil}, {"scope": "read_write"}} {
			rmErr(t, ts.do("PATCH", members+f.reader.id, f.owner.key, patch), 403, "FORBIDDEN",
				"Membership is not active; a new invite restores access")
		}
		rmErr(t, rmRead(ts, f.reader.key, f.addr, "anything", nil), 403, "FORBIDDEN", "Not an active member of this room")
		if m := rmMember(t, ts, f.owner.key, f.room, f.reader.id); m == nil || m["status"] != "expired" {
			t.Errorf("members list after expiry: %v", m)
		}
		rmAddMember(t, ts, f.owner.key, f.room, f.reader.key, "read")
		mustStatus(t, rmRead(ts, f.reader.key, f.addr, "anything", nil), 200)
		if m := rmMember(t, ts, f.owner.key, f.room, f.reader.id); m == nil || m["status"] != "active" || m["expires_at"] != nil {
			t.Errorf("members list after re-invite: %v", m)
		}
	})

	t.Run("archive", func(t *testing.T) {
		outstanding := str(rmInvite(t, ts, f.owner.key, f.room, map[string]any{})["code"])
		checkValidation(t, ts.do("POST", "/memory/rooms/"+f.room+"/archive", f.owner.key, map[string]any{"bogus": 1}),
			"body", "bogus")
		checkValidation(t, ts.do("POST", "/memory/rooms/"+f.room+"/archive", f.owner.key, "garbage"))
		if row := rmRoomRow(t, ts, f.owner.key, f.room); row == nil || row["status"] != "active" {
			t.Errorf("a refused archive archived the room: %v", row)
		}
		r := ts.do("POST", "/memory/rooms/"+f.room+"/archive", f.owner.key, map[string]any{})
		mustStatus(t, r, 200)
		if r.Body["room_id"] != f.room || r.Body["status"] != "archived" {
			t.Errorf("archived room: %s", r.Raw)
		}
		for _, o := range []rmOrg{f.owner, f.reader} {
			if row := rmRoomRow(t, ts, o.key, f.room); row == nil || row["status"] != "archived" {
				t.Errorf("rooms row after archive: %v", row)
			}
		}
		rmErr(t, rmRead(ts, f.reader.key, f.addr, "anything", nil), 403, "FORBIDDEN", "Room is archived")
		rmErr(t, write(f.owner.key, "Owner writes into the archived room"), 403, "FORBIDDEN", "Room is archived")
		rmErr(t, rmRead(ts, f.outsider.key, f.addr, "anything", nil), 403, "FORBIDDEN", "Not an active member of this room")
		// No code is minted or redeemed into an archived room: a joiner got a
		// membership, the room's name, and used up a redemption.
		rmErr(t, ts.do("POST", "/memory/rooms/"+f.room+"/invites", f.owner.key, map[string]any{}), 403, "FORBIDDEN",
			"Room is archived")
		rmErr(t, rmJoin(ts, f.outsider.key, outstanding), 403, "FORBIDDEN", "Room is archived")
		if row := rmRoomRow(t, ts, f.outsider.key, f.room); row != nil {
			t.Errorf("the archived room is listed for a joiner: %v", row)
		}
	})
}

// TestRoomQuotaHTTP: room queries are charged to the caller, never the
// owner, and only answers below 400 count (interface §5 item 8).
func TestRoomQuotaHTTP(t *testing.T) {
	t.Parallel()
	clearOfMidnight(t)
	const quota = 3
	f := newRoomFixture(t, withPlan(cluster.Plan{DailyQueryQuota: quota}))
	ts := f.ts
	mustStatus(t, ts.do("POST", "/memory/write", f.owner.key, map[string]any{"content": "Quota probe in the room",
		"domain": f.addr}), 200)
	for range 2 * quota {
		rmErr(t, rmRead(ts, f.outsider.key, f.addr, "quota probe", nil), 403, "FORBIDDEN", rmMsgNotMember)
	}
	for range quota {
		mustStatus(t, rmRead(ts, f.reader.key, f.addr, "quota probe", nil), 200)
	}
	for _, r := range []resp{
		rmRead(ts, f.reader.key, f.addr, "quota probe", nil),
		ts.do("POST", "/memory/recent", f.reader.key, map[string]any{"domain": f.addr}),
		rmRead(ts, f.reader.key, "", "own account", nil),
	} {
		checkEnvelope(t, r, 429, "RATE_LIMITED")
		if obj(r.Body["details"])["reason"] != "daily_query_quota" {
			t.Errorf("429 reason: %s", r.Raw)
		}
	}
	for _, o := range []rmOrg{f.owner, f.outsider} {
		for range quota {
			mustStatus(t, rmRead(ts, o.key, "", "own account", nil), 200)
		}
		checkEnvelope(t, rmRead(ts, o.key, "", "own account", nil), 429, "RATE_LIMITED")
	}
	mustStatus(t, ts.do("POST", "/memory/graph", f.writer.key, map[string]any{"seeds": []string{"quota"}, "domain": f.addr}), 200)
}

// A write_batch mixing room and private items that the atom limit refuses
// writes none of them: its room items were written before the private
// group was checked, and the caller heard only the 429.
func TestRoomBatchAtomLimitHTTP(t *testing.T) {
	t.Parallel()
	f := newRoomFixture(t)
	ts := f.ts
	mustStatus(t, ts.admin("PATCH", "/admin/v1/orgs/"+f.writer.id+"/settings",
		map[string]any{"plan": map[string]any{"atom_limit": 1}}), 200)
	memWrite(t, ts, f.writer.key, "The writer's one private atom", nil)
	r := ts.do("POST", "/memory/write_batch", f.writer.key, map[string]any{"items": []any{
		map[string]any{"content": "Room item of a refused batch about pelicans", "domain": f.addr},
		map[string]any{"content": "Private item over the limit"},
	}})
	checkEnvelope(t, r, 429, "RATE_LIMITED")
	feed := ts.do("POST", "/memory/recent", f.owner.key, map[string]any{"domain": f.addr})
	mustStatus(t, feed, 200)
	if n := len(items(feed)); n != 0 {
		t.Fatalf("the refused batch left %d room atoms: %s", n, feed.Raw)
	}
	// Room items alone are not the caller's atoms: they are written.
	mustStatus(t, ts.do("POST", "/memory/write_batch", f.writer.key, map[string]any{"items": []any{
		map[string]any{"content": "Room item of a batch about herons", "domain": f.addr},
	}}), 200)
}

// A join with a code the room does not have outstanding (guessed, used up)
// is refused without a Raft entry: any account could grow a room group's
// log one entry per try.
func TestRoomJoinUnknownCodeWritesNothingHTTP(t *testing.T) {
	t.Parallel()
	f := newRoomFixture(t)
	ts := f.ts
	code := str(rmInvite(t, ts, f.owner.key, f.room, map[string]any{})["code"])
	mustStatus(t, rmJoin(ts, f.outsider.key, code), 200)
	before := quietApplied(t, ts, f.room)
	for _, c := range []string{code, code[:len(code)-4] + "abcd", "mshare_" + strings.TrimPrefix(f.room, "room_") + "_guess"} {
		rmErr(t, rmJoin(ts, f.reader.key, c), 404, "NOT_FOUND", "Invite not found")
	}
	if after := quietApplied(t, ts, f.room); after != before {
		t.Fatalf("refused joins moved the room group's applied index %v → %v", before, after)
	}
}

// An org creates at most 100 rooms in 15 minutes: no route deletes a room,
// and one key made 10,000 in 26 s. Another org is not held back.
func TestRoomCreationLimitHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	_, key := ts.newOrg("many-rooms")
	for i := range 100 {
		rmCreateRoom(t, ts, key, fmt.Sprintf("room %d", i))
	}
	r := ts.do("POST", "/memory/rooms", key, map[string]any{"name": "one too many"})
	rmErr(t, r, 429, "RATE_LIMITED", "Too many rooms created; try again later")
	details, _ := r.Body["details"].(map[string]any)
	if details["reason"] != "room_creation_limit" || r.Body["retryable"] != true || r.Header.Get("Retry-After") == "" {
		t.Errorf("429 body %s, Retry-After %q", r.Raw, r.Header.Get("Retry-After"))
	}
	_, other := ts.newOrg("one-room")
	rmCreateRoom(t, ts, other, "mine")
}
