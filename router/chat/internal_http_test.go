package chat_test

import (
	"testing"

	"github.com/hebbdb/hebb/router/chat"
)

func TestInternalRoutesRefuseBadTokens(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	room := "chat_01ARZ3NDEKTSV4RRFFQ69G5FAV"
	routes := []struct {
		method, path string
		body         any
	}{
		{"POST", "/internal/messages", map[string]any{"roomId": room, "content": "x"}},
		{"GET", "/internal/rooms/" + room, nil},
		{"GET", "/internal/rooms/" + room + "/messages", nil},
		{"GET", "/internal/users/usr_01ARZ3NDEKTSV4RRFFQ69G5FAV", nil},
		{"GET", "/internal/lobby/rooms", nil},
		{"POST", "/internal/lobby/rooms", map[string]any{"name": "x"}},
		{"PATCH", "/internal/lobby/rooms/" + room, map[string]any{"name": "x"}},
		{"DELETE", "/internal/lobby/rooms/" + room, nil},
	}
	creds := []struct {
		name   string
		header map[string]string
		reason string
	}{
		{"missing", nil, "missing_service_token"},
		{"wrong", map[string]string{"X-Service-Token": serviceToken + "x"}, "invalid_service_token"},
		{"wrong bearer", map[string]string{"Authorization": "Bearer nope"}, "invalid_service_token"},
		{"a session is not a service token", map[string]string{"Authorization": "Bearer " + n.guest("g").token}, "invalid_service_token"},
	}
	for _, rt := range routes {
		for _, cr := range creds {
			t.Run(rt.method+" "+rt.path+" "+cr.name, func(t *testing.T) {
				c := n.client()
				c.extra = cr.header
				mustError(t, c.do(rt.method, rt.path, rt.body), 401, "UNAUTHORIZED", cr.reason)
			})
		}
	}
	bearer := n.client()
	bearer.extra = map[string]string{"Authorization": "Bearer " + serviceToken}
	must(t, bearer.do("GET", "/internal/lobby/rooms", nil), 200)

	off := newNode(t, withChat(func(c *chat.Config) { c.ServiceToken = "" }))
	mustError(t, off.service().do("GET", "/internal/lobby/rooms", nil), 404, "NOT_FOUND", "internal_disabled")
}

func TestInternalRoutes(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	svc := n.service()
	alice, eve := n.guest("Alice"), n.guest("Eve")
	room := must(t, alice.do("POST", "/api/rooms", map[string]any{"name": "ops"}), 201).str("id")
	ws := alice.connect(room, -1)

	sys := must(t, svc.do("POST", "/internal/messages", map[string]any{"roomId": room, "content": "Deploy finished"}), 201)
	if sys.Body["authorId"] != nil || sys.Body["author"] != nil {
		t.Fatalf("system message %s", sys.Raw)
	}
	as := must(t, svc.do("POST", "/internal/messages", map[string]any{"roomId": room, "userId": alice.me(), "content": "on behalf"}), 201)
	if as.str("authorId") != alice.me() {
		t.Fatalf("message for alice %s", as.Raw)
	}
	mustError(t, svc.do("POST", "/internal/messages", map[string]any{"roomId": room, "userId": eve.me(), "content": "x"}), 403, "FORBIDDEN", "")
	mustError(t, svc.do("POST", "/internal/messages", map[string]any{"roomId": room, "content": ""}), 400, "VALIDATION_ERROR", "")
	if evs := ws.expect("message.created", "message.created"); dig(evs[1], "message", "author", "name") != "Alice" {
		t.Fatalf("events %v", evs)
	}

	got := must(t, svc.do("GET", "/internal/rooms/"+room, nil), 200)
	if got.str("id") != room || got.Body["participantCount"] != 1.0 {
		t.Fatalf("room %s", got.Raw)
	}
	page := must(t, svc.do("GET", "/internal/rooms/"+room+"/messages?after=0", nil), 200)
	if msgs := dig(page.Body, "messages").([]any); len(msgs) != 2 || dig(msgs[0], "content") != "Deploy finished" {
		t.Fatalf("messages %s", page.Raw)
	}
	user := must(t, svc.do("GET", "/internal/users/"+alice.me(), nil), 200)
	if user.str("name") != "Alice" || user.Body["isAnonymous"] != true {
		t.Fatalf("user %s", user.Raw)
	}
	mustError(t, svc.do("GET", "/internal/users/usr_01ARZ3NDEKTSV4RRFFQ69G5FAV", nil), 404, "NOT_FOUND", "")
	mustError(t, svc.do("GET", "/internal/rooms/chat_01ARZ3NDEKTSV4RRFFQ69G5FAV", nil), 404, "NOT_FOUND", "")

	// The lobby: rooms created here are public and listed.
	lobby := must(t, svc.do("POST", "/internal/lobby/rooms", map[string]any{"name": "Lobby", "ownerId": alice.me()}), 201)
	lid := lobby.str("id")
	if lobby.Body["lobby"] != true || lobby.str("visibility") != "public" || lobby.str("ownerId") != alice.me() {
		t.Fatalf("lobby room %s", lobby.Raw)
	}
	bare := must(t, svc.do("POST", "/internal/lobby/rooms", map[string]any{"name": "Nobody's"}), 201)
	if bare.Body["ownerId"] != nil || bare.Body["participantCount"] != 0.0 {
		t.Fatalf("ownerless room %s", bare.Raw)
	}
	listed := func(c *client, path string) []any {
		return dig(must(t, c.do("GET", path, nil), 200).Body, "rooms").([]any)
	}
	if rooms := listed(svc, "/internal/lobby/rooms"); len(rooms) != 2 || dig(rooms[0], "id") != lid {
		t.Fatalf("lobby %v", rooms)
	}
	if rooms := listed(eve, "/api/rooms?lobby=true"); len(rooms) != 2 {
		t.Fatalf("eve's lobby %v", rooms)
	}
	must(t, eve.do("POST", "/api/rooms/"+lid+"/participants", nil), 201)
	must(t, eve.do("POST", "/api/rooms/"+lid+"/messages", map[string]any{"content": "hello lobby"}), 201)
	upd := must(t, svc.do("PATCH", "/internal/lobby/rooms/"+lid, map[string]any{"lobby": false, "description": "quiet"}), 200)
	if upd.Body["lobby"] != false || upd.str("description") != "quiet" {
		t.Fatalf("patched %s", upd.Raw)
	}
	if rooms := listed(svc, "/internal/lobby/rooms"); len(rooms) != 1 {
		t.Fatalf("lobby after unlisting %v", rooms)
	}
	must(t, svc.do("DELETE", "/internal/lobby/rooms/"+lid, nil), 200)
	mustError(t, eve.do("GET", "/api/rooms/"+lid, nil), 404, "NOT_FOUND", "")
	mustError(t, svc.do("DELETE", "/internal/lobby/rooms/"+lid, nil), 404, "NOT_FOUND", "")
}
