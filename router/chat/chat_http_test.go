package chat_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/hebbdb/hebb/router/chat"
	"github.com/hebbdb/hebb/router/internal/leakcheck"
	"github.com/hebbdb/hebb/router/vault"
)

func TestHealthAndOpenAPI(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	c := n.client()
	h := must(t, c.do("GET", "/health", nil), 200)
	if h.str("version") != chat.Version || h.str("status") != "ok" {
		t.Fatalf("health %s", h.Raw)
	}
	// HEAD too, as load balancers probe: it answered 405.
	head, err := http.Head(n.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()
	if head.StatusCode != 200 {
		t.Fatalf("HEAD /health: %d", head.StatusCode)
	}
	doc := must(t, c.do("GET", "/openapi.json", nil), 200)
	if !bytes.Equal(doc.Raw, chat.OpenAPI) {
		t.Fatal("served document differs from the embedded one")
	}
	loaded, err := openapi3.NewLoader().LoadFromData(doc.Raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document does not validate: %v", err)
	}
	if loaded.Info.Version != chat.Version {
		t.Fatalf("document version %s", loaded.Info.Version)
	}
	mustError(t, c.do("GET", "/nope", nil), 404, "NOT_FOUND", "")
	mustError(t, c.do("PUT", "/api/rooms", nil), 405, "METHOD_NOT_ALLOWED", "")
}

// TestConversation: two signed-in users and a guest converse in a room;
// every change reaches every connected participant in the same order.
func TestConversation(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	alice, bob := n.client(), n.client()
	must(t, alice.signInAs("alice", "Alice Liddell"), 200)
	must(t, bob.signInAs("bob", "Bob"), 200)
	gus := n.guest("Gus")
	if s := must(t, gus.do("GET", "/api/auth/get-session", nil), 200); dig(s.Body, "user", "isAnonymous") != true {
		t.Fatalf("guest session %s", s.Raw)
	}
	if s := must(t, alice.do("GET", "/api/auth/get-session", nil), 200); s.str("user", "name") != "Alice Liddell" ||
		s.str("user", "email") != "alice@example.com" || dig(s.Body, "user", "isAnonymous") != false {
		t.Fatalf("alice session %s", s.Raw)
	}

	room := must(t, alice.do("POST", "/api/rooms", map[string]any{"name": "Tea party", "description": "Mad"}), 201)
	id := room.str("id")
	if room.str("ownerId") != alice.me() || room.str("visibility") != "private" {
		t.Fatalf("room %s", room.Raw)
	}
	aliceWS := alice.connect(id, -1)
	for _, u := range []*client{bob, gus} {
		r := must(t, alice.do("POST", "/api/rooms/"+id+"/participants", map[string]any{"userId": u.me()}), 201)
		if r.str("role") != "member" || r.str("userId") != u.me() {
			t.Fatalf("participant %s", r.Raw)
		}
	}
	must(t, alice.do("POST", "/api/rooms/"+id+"/participants", map[string]any{"userId": bob.me()}), 200) // already in
	bobWS, gusWS := bob.connect(id, -1), gus.connect(id, -1)

	say := func(c *client, text string) string {
		return must(t, c.do("POST", "/api/rooms/"+id+"/messages", map[string]any{"content": text}), 201).str("id")
	}
	m1 := say(alice, "Have some wine")
	m2 := say(bob, "I don't see any wine")
	m3 := say(gus, "Nor do I")
	edited := must(t, bob.do("PATCH", "/api/rooms/"+id+"/messages/"+m2, map[string]any{"content": "There isn't any"}), 200)
	if h := dig(edited.Body, "history").([]any); len(h) != 1 || dig(h[0], "content") != "I don't see any wine" || edited.Body["editedAt"] == nil {
		t.Fatalf("edit %s", edited.Raw)
	}
	mustError(t, alice.do("PATCH", "/api/rooms/"+id+"/messages/"+m2, map[string]any{"content": "x"}), 403, "FORBIDDEN", "")
	mustError(t, bob.do("DELETE", "/api/rooms/"+id+"/messages/"+m3, nil), 403, "FORBIDDEN", "")
	must(t, gus.do("DELETE", "/api/rooms/"+id+"/messages/"+m3, nil), 200)
	mustError(t, gus.do("PATCH", "/api/rooms/"+id+"/messages/"+m3, map[string]any{"content": "x"}), 404, "NOT_FOUND", "")

	want := []string{"participant.joined", "participant.joined", "message.created", "message.created", "message.created",
		"message.edited", "message.deleted"}
	var orders [][]int
	for _, ws := range []*wsClient{aliceWS, bobWS, gusWS} {
		skip := 0
		if ws != aliceWS { // bob and gus connected after both joins
			skip = 2
		}
		evs := ws.expect(want[skip:]...)
		orders = append(orders, seqs(evs)[len(evs)-5:])
		if ws == gusWS && (dig(evs[1], "message", "author", "name") != "Bob" || dig(evs[3], "message", "content") != "There isn't any") {
			t.Fatalf("gus saw %v", evs)
		}
	}
	if !slices.Equal(orders[0], orders[1]) || !slices.Equal(orders[1], orders[2]) {
		t.Fatalf("participants saw different orders: %v", orders)
	}

	page := must(t, bob.do("GET", "/api/rooms/"+id+"/messages?limit=2", nil), 200)
	msgs := dig(page.Body, "messages").([]any)
	if len(msgs) != 2 || dig(msgs[0], "id") != m3 || dig(msgs[0], "deleted") != true || dig(msgs[0], "content") != "" ||
		page.Body["hasMore"] != true {
		t.Fatalf("newest page %s", page.Raw)
	}
	older := must(t, bob.do("GET", "/api/rooms/"+id+"/messages?limit=2&before="+num(page.Body["nextCursor"]), nil), 200)
	if msgs := dig(older.Body, "messages").([]any); len(msgs) != 1 || dig(msgs[0], "id") != m1 || older.Body["hasMore"] != false {
		t.Fatalf("older page %s", older.Raw)
	}
	since := must(t, gus.do("GET", "/api/rooms/"+id+"/messages?after="+num(dig(msgs[1], "seq")), nil), 200)
	if msgs := dig(since.Body, "messages").([]any); len(msgs) != 1 || dig(msgs[0], "id") != m3 {
		t.Fatalf("after cursor %s", since.Raw)
	}
	full := must(t, gus.do("GET", "/api/rooms/"+id, nil), 200)
	if full.Body["participantCount"] != 3.0 || len(dig(full.Body, "participants").([]any)) != 3 {
		t.Fatalf("room %s", full.Raw)
	}
	list := must(t, bob.do("GET", "/api/rooms", nil), 200)
	if rooms := dig(list.Body, "rooms").([]any); len(rooms) != 1 || dig(rooms[0], "id") != id {
		t.Fatalf("bob's rooms %s", list.Raw)
	}

	// Bob leaves: his socket is told and closed; the others see him go.
	must(t, bob.do("DELETE", "/api/rooms/"+id+"/participants/"+bob.me(), nil), 200)
	bobWS.expect("participant.left")
	if code := bobWS.closed(); code != 4003 {
		t.Fatalf("close code %d", code)
	}
	if left := gusWS.expect("participant.left"); dig(left[0], "participant", "userId") != bob.me() {
		t.Fatalf("left %v", left)
	}
	mustError(t, bob.do("GET", "/api/rooms/"+id+"/messages", nil), 403, "FORBIDDEN", "")
	// The owner deletes the room: sockets close, everything answers 404.
	must(t, alice.do("DELETE", "/api/rooms/"+id, nil), 200)
	gusWS.expect("room.deleted")
	if code := gusWS.closed(); code != 4004 {
		t.Fatalf("close code %d", code)
	}
	mustError(t, gus.do("GET", "/api/rooms/"+id, nil), 404, "NOT_FOUND", "")
}

func num(v any) string {
	f, _ := v.(float64)
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// TestNonParticipantRefused: a signed-in user who is not a participant is
// refused on every route of the room; an unknown room is 404.
func TestNonParticipantRefused(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	alice, eve := n.guest("Alice"), n.guest("Eve")
	room := alice.newRoom("secret")
	msg := must(t, alice.do("POST", "/api/rooms/"+room+"/messages", map[string]any{"content": "hi"}), 201).str("id")
	base := "/api/rooms/" + room
	cases := []struct{ method, path string }{
		{"GET", base}, {"PATCH", base}, {"DELETE", base},
		{"GET", base + "/messages"}, {"POST", base + "/messages"},
		{"PATCH", base + "/messages/" + msg}, {"DELETE", base + "/messages/" + msg},
		{"GET", base + "/participants"}, {"POST", base + "/participants"},
		{"DELETE", base + "/participants/" + alice.me()},
		{"POST", "/api/auth/partykit-token"},
	}
	bodies := map[string]any{"PATCH " + base: map[string]any{"name": "mine"}, "POST " + base + "/messages": map[string]any{"content": "x"},
		"PATCH " + base + "/messages/" + msg: map[string]any{"content": "x"}, "POST /api/auth/partykit-token": map[string]any{"roomId": room}}
	for _, tc := range cases {
		t.Run(tc.method+" "+strings.TrimPrefix(tc.path, base), func(t *testing.T) {
			mustError(t, eve.do(tc.method, tc.path, bodies[tc.method+" "+tc.path]), 403, "FORBIDDEN", "")
		})
	}
	if rooms := dig(must(t, eve.do("GET", "/api/rooms", nil), 200).Body, "rooms").([]any); len(rooms) != 0 {
		t.Fatalf("eve sees %v", rooms)
	}
	unknown := "/api/rooms/chat_01ARZ3NDEKTSV4RRFFQ69G5FAV"
	mustError(t, eve.do("GET", unknown, nil), 404, "NOT_FOUND", "")
	mustError(t, eve.do("POST", unknown+"/messages", map[string]any{"content": "x"}), 404, "NOT_FOUND", "")
	mustError(t, eve.do("GET", "/api/rooms/not-a-room/messages", nil), 404, "NOT_FOUND", "")
	anon := n.client()
	mustError(t, anon.do("GET", base, nil), 401, "UNAUTHORIZED", "missing_session")
	anon.token = "chs_" + strings.Repeat("x", 43)
	mustError(t, anon.do("GET", base, nil), 401, "UNAUTHORIZED", "invalid_session")
	// Public rooms take anyone who joins; then they may read.
	pub := must(t, alice.do("POST", "/api/rooms", map[string]any{"name": "open", "visibility": "public"}), 201).str("id")
	must(t, eve.do("POST", "/api/rooms/"+pub+"/participants", nil), 201)
	must(t, eve.do("GET", "/api/rooms/"+pub+"/messages", nil), 200)
	mustError(t, eve.do("PATCH", "/api/rooms/"+pub, map[string]any{"name": "x"}), 403, "FORBIDDEN", "")
}

func TestValidationAndLimits(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	alice := n.guest("Alice")
	room := alice.newRoom("limits")
	msgs := "/api/rooms/" + room + "/messages"
	cases := []struct {
		name, method, path string
		body               any
		status             int
		field              string
	}{
		{"unknown field", "POST", msgs, map[string]any{"content": "x", "pinned": true}, 400, "pinned"},
		{"missing content", "POST", msgs, map[string]any{}, 400, "content"},
		{"blank content", "POST", msgs, map[string]any{"content": "   "}, 400, "content"},
		{"content too long", "POST", msgs, map[string]any{"content": strings.Repeat("é", 4001)}, 400, "content"},
		{"content of the wrong type", "POST", msgs, map[string]any{"content": 7}, 400, "content"},
		{"malformed JSON", "POST", msgs, `{"content":`, 400, ""},
		{"not an object", "POST", msgs, `["x"]`, 400, ""},
		{"content not UTF-8", "POST", msgs, "{\"content\":\"a\xff\xfeb\"}", 400, "body"},
		{"room name not UTF-8", "POST", "/api/rooms", "{\"name\":\"\xc0\xaf\"}", 400, "body"},
		{"room name too long", "POST", "/api/rooms", map[string]any{"name": strings.Repeat("n", 101)}, 400, "name"},
		{"room name at the bound once trimmed", "POST", "/api/rooms", map[string]any{"name": "  " + strings.Repeat("n", 100) + "  "}, 201, ""},
		{"bad visibility", "POST", "/api/rooms", map[string]any{"name": "x", "visibility": "secret"}, 400, "visibility"},
		{"lobby is internal", "POST", "/api/rooms", map[string]any{"name": "x", "lobby": true}, 400, "lobby"},
		{"empty patch", "PATCH", "/api/rooms/" + room, map[string]any{}, 400, ""},
		{"bad limit", "GET", msgs + "?limit=0", nil, 400, "limit"},
		{"before and after", "GET", msgs + "?before=3&after=1", nil, 400, "after"},
		{"bad user id", "POST", "/api/rooms/" + room + "/participants", map[string]any{"userId": "bob"}, 400, "userId"},
		{"unknown user", "POST", "/api/rooms/" + room + "/participants", map[string]any{"userId": "usr_01ARZ3NDEKTSV4RRFFQ69G5FAV"}, 404, ""},
		{"name too long", "POST", "/api/auth/update-user", map[string]any{"name": strings.Repeat("n", 65)}, 400, "name"},
		{"a NUL in a name", "POST", "/api/auth/update-user", map[string]any{"name": "Alice\u0000"}, 400, "name"},
		{"an escape sequence in a room name", "POST", "/api/rooms", map[string]any{"name": "a\u001b[31mb"}, 400, "name"},
		{"a right-to-left override in a room name", "POST", "/api/rooms", map[string]any{"name": "\u202egnp.exe"}, 400, "name"},
		{"a line break in a room name", "POST", "/api/rooms", map[string]any{"name": "two\nlines"}, 400, "name"},
		{"a C1 control in a message", "POST", msgs, map[string]any{"content": "a\u009bb"}, 400, "content"},
		{"a message of several lines", "POST", msgs, map[string]any{"content": "one\n\ttwo\r\nthree"}, 201, ""},
		{"a right-to-left message", "POST", msgs, map[string]any{"content": "\u05e9\u05dc\u05d5\u05dd \u2067x\u2069"}, 201, ""},
		{"bad image", "POST", "/api/auth/update-user", map[string]any{"image": "javascript:alert(1)"}, 400, "image"},
		{"body too large", "POST", msgs, map[string]any{"content": strings.Repeat("x", 70<<10)}, 413, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := alice.do(tc.method, tc.path, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d: %s", r.Status, r.Raw)
			}
			if tc.field != "" {
				errs, _ := dig(r.Body, "details", "errors").([]any)
				if len(errs) == 0 || !slices.Contains(dig(errs[0], "loc").([]any), any(tc.field)) {
					t.Fatalf("errors %s", r.Raw)
				}
			}
		})
	}
	// A limit out of range is named so, not as a parse error.
	for q, typ := range map[string]string{"0": "greater_than_equal", "101": "less_than_equal", "x": "int_parsing"} {
		r := alice.do("GET", msgs+"?limit="+q, nil)
		if errs, _ := dig(r.Body, "details", "errors").([]any); r.Status != 400 || len(errs) == 0 || dig(errs[0], "type") != typ {
			t.Errorf("limit=%s: %d %s, want type %s", q, r.Status, r.Raw, typ)
		}
	}
	// Nothing comes before the first message.
	must(t, alice.do("POST", msgs, map[string]any{"content": "first"}), 201)
	if page := must(t, alice.do("GET", msgs+"?before=0", nil), 200); len(dig(page.Body, "messages").([]any)) != 0 ||
		page.Body["hasMore"] != false {
		t.Fatalf("before=0: %s", page.Raw)
	}
	// A session cookie is not hidden by another Authorization scheme.
	behindProxy := &client{t: t, n: n, hc: &http.Client{}, extra: map[string]string{
		"Authorization": "Basic Zm9vOmJhcg==", "Cookie": "hebb_chat.session_token=" + alice.token}}
	if r := behindProxy.do("GET", "/api/rooms/"+room, nil); r.Status != 200 {
		t.Fatalf("cookie beside Basic credentials: %d %s", r.Status, r.Raw)
	}
	// Participants are capped (MaxParticipants 5 in the harness).
	for i := range 4 {
		must(t, alice.do("POST", "/api/rooms/"+room+"/participants", map[string]any{"userId": n.guest("g").me()}), 201)
		_ = i
	}
	full := alice.do("POST", "/api/rooms/"+room+"/participants", map[string]any{"userId": n.guest("late").me()})
	mustError(t, full, 409, "CONFLICT", "room_full")
	// Edits are capped; every version stays.
	m := must(t, alice.do("POST", msgs, map[string]any{"content": "v0"}), 201).str("id")
	var last resp
	for i := range 51 {
		last = alice.do("PATCH", msgs+"/"+m, map[string]any{"content": "v" + strings.Repeat("!", i+1)})
	}
	mustError(t, last, 409, "CONFLICT", "edit_limit")
}

func TestSessions(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	laptop := n.client()
	must(t, laptop.signInAs("carol", "Carol"), 200)
	phone := n.client()
	must(t, phone.signInAs("carol", "Carol"), 200)
	if laptop.me() != phone.me() {
		t.Fatal("one identity, two users")
	}
	list := dig(must(t, laptop.do("GET", "/api/auth/list-sessions", nil), 200).Body, "sessions").([]any)
	if len(list) != 2 || dig(list[0], "current") != true || dig(list[1], "current") != false {
		t.Fatalf("sessions %v", list)
	}
	must(t, laptop.do("POST", "/api/auth/revoke-other-sessions", nil), 200)
	mustError(t, phone.do("GET", "/api/rooms", nil), 401, "UNAUTHORIZED", "invalid_session")
	if s := must(t, phone.do("GET", "/api/auth/get-session", nil), 200); string(s.Raw) != "null" {
		t.Fatalf("revoked session still resolves: %s", s.Raw)
	}
	mustError(t, laptop.do("POST", "/api/auth/revoke-session", map[string]any{"id": "ses_01ARZ3NDEKTSV4RRFFQ69G5FAV"}), 404, "NOT_FOUND", "")
	u := must(t, laptop.do("POST", "/api/auth/update-user", map[string]any{"name": "Caroline", "image": "https://example.com/c.png"}), 200)
	if u.str("user", "name") != "Caroline" {
		t.Fatalf("update %s", u.Raw)
	}
	// The cookie alone carries the session too.
	tok := laptop.token
	laptop.token = ""
	must(t, laptop.do("GET", "/api/rooms", nil), 200)
	must(t, laptop.do("POST", "/api/auth/sign-out", nil), 200)
	mustError(t, laptop.do("GET", "/api/rooms", nil), 401, "UNAUTHORIZED", "missing_session")
	laptop.token = tok
	mustError(t, laptop.do("GET", "/api/rooms", nil), 401, "UNAUTHORIZED", "invalid_session")
	// A guest may not sign in as a guest again.
	g := n.guest("Gina")
	mustError(t, g.do("POST", "/api/auth/sign-in/anonymous", nil), 409, "CONFLICT", "already_signed_in")
}

// TestGuestUpgrade: a guest signing in keeps what it wrote, either by
// becoming the new account or by merging into an existing one.
func TestGuestUpgrade(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	owner := n.guest("Owner")
	room := must(t, owner.do("POST", "/api/rooms", map[string]any{"name": "upgrade", "visibility": "public"}), 201).str("id")
	msgs := "/api/rooms/" + room + "/messages"

	g1 := n.guest("Gina")
	guestID := g1.me()
	must(t, g1.do("POST", "/api/rooms/"+room+"/participants", nil), 201)
	m1 := must(t, g1.do("POST", msgs, map[string]any{"content": "as a guest"}), 201).str("id")
	up := must(t, g1.signInAs("gina", "Gina G"), 200)
	if up.str("user", "id") != guestID || dig(up.Body, "user", "isAnonymous") != false || up.Body["upgraded"] != true {
		t.Fatalf("upgrade %s", up.Raw)
	}
	must(t, g1.do("PATCH", msgs+"/"+m1, map[string]any{"content": "as Gina"}), 200)

	dave := n.client()
	must(t, dave.signInAs("dave", "Dave"), 200)
	daveID := dave.me()
	g2 := n.guest("Guest of Dave")
	g2ID := g2.me()
	must(t, g2.do("POST", "/api/rooms/"+room+"/participants", nil), 201)
	must(t, dave.do("POST", "/api/rooms/"+room+"/participants", nil), 201) // dave is in the room too
	m2 := must(t, g2.do("POST", msgs, map[string]any{"content": "before signing in"}), 201).str("id")
	merged := must(t, g2.signInAs("dave", "Dave"), 200)
	if merged.str("user", "id") != daveID || merged.Body["merged"] != true {
		t.Fatalf("merge %s", merged.Raw)
	}
	// dave now reads the room, owns the guest's message, and is listed once.
	page := must(t, dave.do("GET", msgs+"?limit=1", nil), 200)
	if first := dig(page.Body, "messages").([]any)[0]; dig(first, "id") != m2 || dig(first, "authorId") != daveID {
		t.Fatalf("merged author %s", page.Raw)
	}
	must(t, dave.do("DELETE", msgs+"/"+m2, nil), 200)
	parts := dig(must(t, dave.do("GET", "/api/rooms/"+room+"/participants", nil), 200).Body, "participants").([]any)
	var ids []string
	for _, p := range parts {
		ids = append(ids, dig(p, "userId").(string))
	}
	if !slices.Contains(ids, daveID) || !slices.Contains(ids, guestID) || len(ids) != 3 {
		t.Fatalf("participants %v", ids)
	}
	if got := must(t, dave.do("GET", "/api/rooms/"+room, nil), 200).Body["participantCount"]; got != float64(3) {
		t.Fatalf("participantCount %v, want 3", got)
	}
	// Leaving leaves the room whole: no record of the guest stays behind.
	must(t, dave.do("DELETE", "/api/rooms/"+room+"/participants/"+daveID, nil), 200)
	must(t, dave.do("GET", msgs, nil), 403)
	user := must(t, n.service().do("GET", "/internal/users/"+g2ID, nil), 200)
	if user.str("id") != daveID {
		t.Fatalf("merged guest resolves to %s", user.Raw)
	}
}

func TestOIDCSignInFlow(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	c := n.client()
	start := must(t, c.do("POST", "/api/auth/sign-in/oauth2", map[string]any{"callbackURL": "/welcome"}), 200)
	n.idp.nextUser("frank", "Frank")
	callback := c.follow(start.str("url"))
	done := must(t, c.do("GET", callback, nil), 302)
	if loc := done.Header.Get("Location"); loc != n.URL+"/welcome" {
		t.Fatalf("redirected to %q", loc)
	}
	if s := must(t, c.do("GET", "/api/auth/get-session", nil), 200); s.str("user", "name") != "Frank" { // by cookie
		t.Fatalf("session %s", s.Raw)
	}
	mustError(t, c.do("GET", callback, nil), 401, "UNAUTHORIZED", "invalid_state") // replayed

	// A replay that still holds the state cookie: the provider refuses the
	// used code (invalid_grant), which is the client's doing, not a 502.
	r := n.client()
	start = must(t, r.do("POST", "/api/auth/sign-in/oauth2", nil), 200)
	n.idp.nextUser("grace", "Grace")
	u, _ := url.Parse(n.URL + "/api/auth/oauth2/callback/oidc")
	var sealed string
	for _, ck := range r.hc.Jar.Cookies(u) {
		if ck.Name == "hebb_chat.oidc_state" {
			sealed = ck.Value
		}
	}
	callback = r.follow(start.str("url"))
	must(t, r.do("GET", callback, nil), 200)
	replay := n.client()
	replay.extra = map[string]string{"Cookie": "hebb_chat.oidc_state=" + sealed}
	mustError(t, replay.do("GET", callback, nil), 401, "UNAUTHORIZED", "provider_denied")

	cases := []struct {
		name   string
		body   map[string]any
		status int
	}{
		{"foreign callback", map[string]any{"callbackURL": "https://evil.example/x"}, 400},
		{"protocol-relative callback", map[string]any{"callbackURL": "//evil.example/x"}, 400},
		{"a tab in the callback", map[string]any{"callbackURL": "/\t/evil.example"}, 400},
		{"a line break in the callback", map[string]any{"callbackURL": "/x\r\nSet-Cookie: a=b"}, 400},
		{"unknown provider", map[string]any{"providerId": "github"}, 400},
		{"unknown field", map[string]any{"scopes": "all"}, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustError(t, n.client().do("POST", "/api/auth/sign-in/oauth2", tc.body), tc.status, "VALIDATION_ERROR", "")
		})
	}
	// The provider refuses: the browser goes to the error callback.
	d := n.client()
	start = must(t, d.do("POST", "/api/auth/sign-in/oauth2", map[string]any{"errorCallbackURL": "/oops"}), 200)
	state := strings.SplitN(strings.SplitN(start.str("url"), "state=", 2)[1], "&", 2)[0]
	denied := must(t, d.do("GET", "/api/auth/oauth2/callback/oidc?error=access_denied&state="+state, nil), 302)
	if loc := denied.Header.Get("Location"); loc != n.URL+"/oops?error=access_denied" {
		t.Fatalf("error redirect %q", loc)
	}
	mustError(t, n.client().do("GET", "/api/auth/oauth2/callback/oidc?code=x&state=y", nil), 401, "UNAUTHORIZED", "invalid_state")
	mustError(t, n.client().do("GET", "/api/auth/oauth2/callback/github?code=x&state=y", nil), 404, "NOT_FOUND", "")

	none := newNode(t, withChat(func(c *chat.Config) { c.OIDC = chat.OIDC{} }))
	mustError(t, none.client().do("POST", "/api/auth/sign-in/oauth2", nil), 404, "NOT_FOUND", "provider_not_configured")
}

// Guest sign-ins are limited per client address: each makes a user kept
// for good, and one address made 1,000 in 3.7 s. X-Forwarded-For from a
// peer that is no trusted proxy changes nothing.
func TestGuestSignInLimit(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	for i := range 60 {
		if r := n.client().do("POST", "/api/auth/sign-in/anonymous", map[string]any{}); r.Status != 200 {
			t.Fatalf("guest %d: %d %s", i, r.Status, r.Raw)
		}
	}
	spoof := n.client()
	spoof.extra = map[string]string{"X-Forwarded-For": "203.0.113.7"}
	for _, c := range []*client{n.client(), spoof} {
		r := c.do("POST", "/api/auth/sign-in/anonymous", map[string]any{})
		mustError(t, r, 429, "RATE_LIMITED", "guest_sign_in_limit")
		if r.Body["retryable"] != true || r.Header.Get("Retry-After") == "" {
			t.Fatalf("429 without retryable or Retry-After: %v %s", r.Header, r.Raw)
		}
	}
}

// A user creates at most 100 rooms in 15 minutes: each is a tenant of its
// own, and one guest made 500 in 1.5 s. Another user is not held back.
func TestRoomCreationLimit(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	alice := n.guest("Alice")
	for i := range 100 {
		if r := alice.do("POST", "/api/rooms", map[string]any{"name": fmt.Sprintf("room %d", i)}); r.Status != 201 {
			t.Fatalf("room %d: %d %s", i, r.Status, r.Raw)
		}
	}
	r := alice.do("POST", "/api/rooms", map[string]any{"name": "one too many"})
	mustError(t, r, 429, "RATE_LIMITED", "room_creation_limit")
	if r.Header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After: %v", r.Header)
	}
	// The mark of a request another node forwarded (counted there) is not
	// the client's to send: it skipped the limit.
	alice.extra = map[string]string{"X-Hebb-Forwarded": "1"}
	mustError(t, alice.do("POST", "/api/rooms", map[string]any{"name": "forwarded, says the client"}),
		429, "RATE_LIMITED", "room_creation_limit")
	alice.extra = nil
	must(t, n.guest("Bob").do("POST", "/api/rooms", map[string]any{"name": "bob's"}), 201)
}

// A node whose vault key is not the data dir's makes no chat signing key
// (it made one sealed with the wrong key, and every later start with the
// right one answered 500 for good): 503 signing_key_unavailable.
func TestSigningKeyRefused(t *testing.T) {
	t.Parallel()
	ring, err := vault.Parse(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	ring.RefuseNewKeys()
	n := newNode(t, func(n *node) { n.opts.Keys = ring })
	alice := n.guest("Alice")
	room := alice.newRoom("keyless")
	r := alice.do("POST", "/api/auth/partykit-token", map[string]any{"roomId": room})
	mustError(t, r, 503, "INTERNAL", "signing_key_unavailable")
}

// A user posts at most 1,000 messages in 15 minutes: each is kept, in
// memory too, as long as its room lives. Another user is not held back.
func TestMessageLimit(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	alice := n.guest("Alice")
	path := "/api/rooms/" + alice.newRoom("chatty") + "/messages"
	for i := range 1000 {
		if r := alice.do("POST", path, map[string]any{"content": fmt.Sprintf("message %d", i)}); r.Status != 201 {
			t.Fatalf("message %d: %d %s", i, r.Status, r.Raw)
		}
	}
	r := alice.do("POST", path, map[string]any{"content": "one too many"})
	mustError(t, r, 429, "RATE_LIMITED", "message_limit")
	if r.Header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After: %v", r.Header)
	}
	bob := n.guest("Bob")
	bobRoom := bob.newRoom("bob's")
	must(t, bob.do("POST", "/api/rooms/"+bobRoom+"/messages", map[string]any{"content": "hello"}), 201)
}

// A body over the 1 MiB the server reads is refused from its headers; a
// client that sends it whole before reading (no Expect: 100-continue)
// still gets the 413 envelope, not a connection reset (the first attempt
// was reset before the connection drained on close).
func TestBodyOverReadLimit(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	body := bytes.Repeat([]byte("a"), 12<<20) // more than the sockets' buffers hold
	for i := range 5 {
		req, err := http.NewRequest("POST", n.URL+"/api/rooms", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		sendWhole(t, req, i, 413)
	}
}

// sendWhole sends req (net/http writes it whole before it reads) and
// checks that it answers status with the VALIDATION_ERROR envelope.
func sendWhole(t *testing.T, req *http.Request, attempt, status int) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("attempt %d: %v", attempt, err)
	}
	raw, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil || res.StatusCode != status || !bytes.Contains(raw, []byte(`"VALIDATION_ERROR"`)) {
		t.Fatalf("attempt %d: %d %s %v", attempt, res.StatusCode, raw, err)
	}
}

// Headers over the buffer the server reads a request's head into answer
// the 400 envelope to a client that sends them whole before reading, not
// a reset (the connection drains on close, as after a 413).
func TestHeadersOverReadLimit(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	for i := range 5 {
		req, err := http.NewRequest("GET", n.URL+"/api/auth/session", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Cookie", "a="+strings.Repeat("c", 4<<20)) // more than the sockets' buffers hold
		sendWhole(t, req, i, 400)
	}
}

// TestMalformedRequestsLogNoSecrets: a request the HTTP layer refuses is
// answered 400, its connection closed, and logged without its bytes
// (session cookies, tokens).
func TestMalformedRequestsLogNoSecrets(t *testing.T) {
	t.Parallel()
	var log leakcheck.Buffer
	n := newNode(t, withChat(func(c *chat.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}))
	const secret = "tok_LeakCanaryLeakCanaryLeakCanary01"
	for name, raw := range leakcheck.Malformed("/api/rooms", secret) {
		out, err := leakcheck.Send(n.addr, raw)
		if err != nil || !strings.HasPrefix(out, "HTTP/1.1 400") {
			t.Errorf("%s: answered %.60q, %v; want 400", name, out, err)
		}
	}
	if got := log.String(); strings.Contains(got, "LeakCanary") {
		t.Fatalf("the log quotes a refused request:\n%s", got)
	}
}

// TestCrossOriginCookieRefused: the session cookie alone does not let a
// page of another origin act (a sibling subdomain's page gets it despite
// SameSite=Lax); this surface's own origin, a trusted one, a request
// without browser headers, a safe method and a bearer token all pass.
func TestCrossOriginCookieRefused(t *testing.T) {
	t.Parallel()
	const trusted = "https://app.example.com"
	n := newNode(t, withChat(func(c *chat.Config) { c.TrustedOrigins = []string{trusted} }))
	g := n.guest("Olga")
	token := g.token
	g.token = "" // the cookie alone
	create := func(headers map[string]string) resp {
		g.extra = headers
		return g.do("POST", "/api/rooms", map[string]any{"name": "room"})
	}
	for _, h := range []map[string]string{
		{"Origin": "https://evil.example"},
		{"Sec-Fetch-Site": "same-site", "Origin": "https://chat.evil.example"},
		{"Sec-Fetch-Site": "cross-site"},
	} {
		mustError(t, create(h), 403, "FORBIDDEN", "cross_origin")
	}
	g.extra = map[string]string{"Sec-Fetch-Site": "cross-site"}
	mustError(t, g.do("POST", "/api/auth/sign-out", nil), 403, "FORBIDDEN", "cross_origin")
	allowed := []map[string]string{
		{"Sec-Fetch-Site": "same-origin", "Origin": n.URL},
		{"Origin": n.URL}, // an older browser: Origin matches Host
		nil,               // no browser headers: not a browser
		{"Sec-Fetch-Site": "cross-site", "Origin": trusted},
	}
	for _, h := range allowed {
		must(t, create(h), 201)
	}
	g.extra = map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}
	rooms := must(t, g.do("GET", "/api/rooms", nil), 200) // a safe method
	g.token = token
	must(t, create(g.extra), 201) // a bearer token: no browser sends it on its own
	if got, want := len(dig(rooms.Body, "rooms").([]any)), len(allowed); got != want {
		t.Fatalf("%d rooms after %d allowed creations (refused ones must create none): %s", got, want, rooms.Raw)
	}
}
