package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// TestE2EForwardWithoutReplica: a node that holds no replica of a group
// answers requests for it by forwarding them whole, on the REST API and on
// the chat surface, and serves the chat surface's realtime channel by
// following the room from the group's leader. Two nodes with one replica per group keep every data
// group on the first, so the second holds none.
func TestE2EForwardWithoutReplica(t *testing.T) {
	c := &testCluster{t: t}
	first := c.add([]string{"--replicas", "1"})
	second := c.add([]string{"--replicas", "1"})
	v, ok := second.view()
	if !ok || len(v.Groups) == 0 {
		t.Fatalf("cluster view: %v %+v", ok, v)
	}
	for _, g := range v.Groups {
		if slices.Contains(g.Replicas, second.id) {
			t.Fatalf("group %d has a replica on the second node (%v): the test needs a node without any", g.GroupID, g.Replicas)
		}
	}

	t.Run("rest", func(t *testing.T) {
		st, w := apiDo(client, second.httpAddr, "POST", "/memory/write", map[string]any{"content": "forwarded reads find the atom"})
		id, _ := w["atom_id"].(string)
		if st != 200 || id == "" {
			t.Fatalf("write through the second node: %d %v", st, w)
		}
		st, r := apiDo(client, second.httpAddr, "POST", "/memory/read", map[string]any{"query": "forwarded reads"})
		items, _ := r["items"].([]any)
		if st != 200 || len(items) == 0 || items[0].(map[string]any)["atom_id"] != id {
			t.Fatalf("search through the second node: %d %v", st, r)
		}
		checkReadable(t, second, []string{id})
		// Deleting an atom the account does not hold asks every group
		// whether a room holds it (a room atom is 404): none does, so it is
		// already gone (200, deleted 0), not 503.
		st, del := apiDo(client, second.httpAddr, "DELETE", "/memory/atoms/01a215f5-d167-7101-b665-c070c9842952", nil)
		if st != 200 || del["deleted"] != float64(0) {
			t.Fatalf("delete of an unknown atom through the second node: %d %v", st, del)
		}
	})

	t.Run("chat", func(t *testing.T) {
		via := argValue(second.spec.args, "--chat-addr")
		token := chatSignIn(t, via)
		ids := map[string]bool{}
		for i := range 6 { // rooms land in either group; none is held here
			st, room := chatDo(t, via, token, "POST", "/api/rooms", map[string]any{"name": "forwarded"})
			id, _ := room["id"].(string)
			if st != 201 || id == "" {
				t.Fatalf("create room %d through the second node: %d %v", i, st, room)
			}
			ids[id] = true
			if st, got := chatDo(t, via, token, "GET", "/api/rooms/"+id, nil); st != 200 || got["id"] != id {
				t.Fatalf("get room through the second node: %d %v", st, got)
			}
			if st, msg := chatDo(t, via, token, "POST", "/api/rooms/"+id+"/messages", map[string]any{"content": "hello"}); st != 201 {
				t.Fatalf("post through the second node: %d %v", st, msg)
			}
			st, page := chatDo(t, via, token, "GET", "/api/rooms/"+id+"/messages", nil)
			if msgs, _ := page["messages"].([]any); st != 200 || len(msgs) != 1 {
				t.Fatalf("messages through the second node: %d %v", st, page)
			}
			if st, got := chatDo(t, argValue(first.spec.args, "--chat-addr"), token, "GET", "/api/rooms/"+id, nil); st != 200 || got["id"] != id {
				t.Fatalf("the room through the first node: %d %v", st, got)
			}
		}
		if len(ids) != 6 {
			t.Fatalf("6 creates made %d rooms", len(ids))
		}
		// The listing gathers from every group's leader.
		st, list := chatDo(t, via, token, "GET", "/api/rooms", nil)
		rooms, _ := list["rooms"].([]any)
		if st != 200 || len(rooms) != len(ids) {
			t.Fatalf("room list through the second node: %d %v", st, list)
		}
		for _, r := range rooms {
			if id, _ := r.(map[string]any)["id"].(string); !ids[id] {
				t.Fatalf("room list names %q, not one of %v", id, ids)
			}
		}
	})

	t.Run("realtime", func(t *testing.T) {
		// The second node follows the room by long polling the first.
		via, other := argValue(second.spec.args, "--chat-addr"), argValue(first.spec.args, "--chat-addr")
		token := chatSignIn(t, via)
		st, room := chatDo(t, via, token, "POST", "/api/rooms", map[string]any{"name": "live"})
		id, _ := room["id"].(string)
		if st != 201 || id == "" {
			t.Fatalf("create room: %d %v", st, room)
		}
		st, tok := chatDo(t, via, token, "POST", "/api/auth/partykit-token", map[string]any{"roomId": id})
		if st != 200 || !strings.HasPrefix(fmt.Sprint(tok["url"]), "ws://"+via+"/") {
			t.Fatalf("realtime token through the second node: %d %v", st, tok)
		}
		url := fmt.Sprintf("%s?token=%s", tok["url"], tok["token"])
		live := dialLive(t, url)
		start := live.frame("ready")["cursor"]
		for i, addr := range []string{other, via, other} {
			text := fmt.Sprintf("live %d", i)
			if st, m := chatDo(t, addr, token, "POST", "/api/rooms/"+id+"/messages", map[string]any{"content": text}); st != 201 {
				t.Fatalf("post %d: %d %v", i, st, m)
			}
			if ev := live.frame("message.created"); fmt.Sprint(ev["message"].(map[string]any)["content"]) != text {
				t.Fatalf("event %d: %v", i, ev)
			}
		}
		replay := dialLive(t, fmt.Sprintf("%s&cursor=%v", url, start))
		replay.frame("ready")
		for i := range 3 {
			if ev := replay.frame("message.created"); fmt.Sprint(ev["message"].(map[string]any)["content"]) != fmt.Sprintf("live %d", i) {
				t.Fatalf("replayed event %d: %v", i, ev)
			}
		}
		if st, del := chatDo(t, other, token, "DELETE", "/api/rooms/"+id, nil); st != 200 {
			t.Fatalf("delete room: %d %v", st, del)
		}
		live.frame("room.deleted")
		if code := live.closeCode(); code != 4004 {
			t.Fatalf("close code after the room was deleted: %d", code)
		}
	})

	t.Run("key through the other node", func(t *testing.T) {
		// A key created through one node works at once on the other.
		for i, pair := range [][2]*cnode{{first, second}, {second, first}, {first, second}, {second, first}} {
			var org map[string]string
			if st := pair[0].admin("POST", "/orgs", map[string]any{"name": "org " + pair[0].id}, &org); st != 200 || org["api_key"] == "" {
				t.Fatalf("create org through %s: %d %v", pair[0].id, st, org)
			}
			req, _ := http.NewRequest("GET", "http://"+pair[1].httpAddr+"/api/v1/memory/stats", nil)
			req.Header.Set("X-Api-Key", org["api_key"])
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("round %d: key from %s refused by %s: %d", i, pair[0].id, pair[1].id, res.StatusCode)
			}
		}
	})

	t.Run("session through the other node", func(t *testing.T) {
		// Each node accepts at once a session signed in through the other,
		// whichever of them leads the meta group.
		chats := []string{argValue(first.spec.args, "--chat-addr"), argValue(second.spec.args, "--chat-addr")}
		for i := range 6 {
			in, use := chats[i%2], chats[1-i%2]
			token := chatSignIn(t, in)
			if st, got := chatDo(t, use, token, "GET", "/api/auth/list-sessions", nil); st != 200 {
				t.Fatalf("round %d: session from %s refused by %s: %d %v", i, in, use, st, got)
			}
		}
	})
}

// chatSignIn signs in a guest on the chat surface at addr; it returns the
// session token.
func chatSignIn(t *testing.T, addr string) string {
	t.Helper()
	st, out := chatDo(t, addr, "", "POST", "/api/auth/sign-in/anonymous", map[string]any{})
	tok, _ := out["token"].(string)
	if st != 200 || tok == "" {
		t.Fatalf("guest sign-in: %d %v", st, out)
	}
	return tok
}

// chatDo calls the chat surface at addr with a session token (none when
// empty) and decodes the JSON answer.
func chatDo(t *testing.T, addr, token, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	req, err := http.NewRequest(method, "http://"+addr+path, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// liveConn is a realtime WebSocket of the chat surface.
type liveConn struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialLive(t *testing.T, url string) *liveConn {
	t.Helper()
	ws, res, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", url, err, status)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return &liveConn{t: t, ws: ws}
}

// frame reads the next frame and checks its type.
func (l *liveConn) frame(typ string) map[string]any {
	l.t.Helper()
	_ = l.ws.SetReadDeadline(time.Now().Add(30 * time.Second))
	var v map[string]any
	if err := l.ws.ReadJSON(&v); err != nil {
		l.t.Fatalf("reading a %s frame: %v", typ, err)
	}
	if v["type"] != typ {
		l.t.Fatalf("frame %v, want type %s", v, typ)
	}
	return v
}

// closeCode reads until the server closes the socket and returns its code.
func (l *liveConn) closeCode() int {
	l.t.Helper()
	_ = l.ws.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		if _, _, err := l.ws.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code
			}
			l.t.Fatalf("no close frame: %v", err)
		}
	}
}
