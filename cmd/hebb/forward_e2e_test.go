package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/hebbdb/hebb/cluster"
)

// TestE2EForwardWithoutReplica: a node that holds no replica of a group
// answers requests for it by forwarding them whole, on the REST API and on
// the chat surface, and serves the chat surface's realtime channel by
// following the room from the group's leader. Two nodes with one replica per group keep every data
// group on the first, so the second holds none.
func TestE2EForwardWithoutReplica(t *testing.T) {
	c := &testCluster{t: t}
	// These ids make rendezvous placement keep both groups on the first
	// node; random ones would move a group to the second now and then.
	first := c.addNamed("holds-all", []string{"--replicas", "1"})
	second := c.addNamed("holds-none", []string{"--replicas", "1"})
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

	// The export comes through the second node page by page (500 atoms a
	// node call): the same lines as from the node that holds the group,
	// access counts aside (the reads above may be counted between the two).
	t.Run("export", func(t *testing.T) {
		for b := range 3 {
			items := make([]map[string]any, 450)
			for i := range items {
				items[i] = map[string]any{"content": fmt.Sprintf("Exported fact %d of batch %d about subject %x", i, b, i*7919+b)}
			}
			if st, body := apiDo(client, first.httpAddr, "POST", "/memory/write_batch", map[string]any{"items": items}); st != 200 {
				t.Fatalf("batch %d: %d %v", b, st, body)
			}
		}
		calls := forwardedHTTP(t, second.httpAddr)
		direct := withoutAccess(t, exportLines(t, first.httpAddr))
		through := withoutAccess(t, exportLines(t, second.httpAddr))
		if len(direct) < 1350 || !slices.Equal(direct, through) {
			t.Fatalf("export through the second node: %d lines, from the first %d (equal: %v)",
				len(through), len(direct), slices.Equal(direct, through))
		}
		if pages := forwardedHTTP(t, second.httpAddr) - calls; pages != 3 {
			t.Errorf("the export took %v node calls, want 3 pages", pages)
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
	auth := ""
	if token != "" {
		auth = "Bearer " + token
	}
	return sendJSON(t, method, "http://"+addr+path, "Authorization", auth, body)
}

// sendJSON sends body as JSON (none when nil) to url with header set to
// value (unless value is empty) and decodes the JSON answer.
func sendJSON(t *testing.T, method, url, header, value string, body any) (int, map[string]any) {
	t.Helper()
	var b []byte
	if body != nil {
		b, _ = json.Marshal(body)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if value != "" {
		req.Header.Set(header, value)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
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

// TestE2ERoomInAnotherGroup: a memory room is a tenant of its own, placed
// by its ID, so it often lives in another group than its owner org. Two
// nodes with one replica per group, each holding one of the two groups:
// every room route answers through either node, the one holding the org's
// group but not the room's included.
func TestE2ERoomInAnotherGroup(t *testing.T) {
	c := &testCluster{t: t}
	// These ids make rendezvous placement put group 1 on the first node
	// and group 2 on the second.
	a := c.addNamed("split-a0", []string{"--replicas", "1"})
	b := c.addNamed("split-b0", []string{"--replicas", "1"})
	waitFor(t, "one group on each node", 30*time.Second, func() bool {
		v, ok := a.view()
		for _, g := range v.Groups {
			want := map[int]string{1: a.id, 2: b.id}[g.GroupID]
			ok = ok && len(g.Replicas) == 1 && g.Replicas[0] == want
		}
		return ok && len(v.Groups) == 2
	})
	// Rooms until one lands in the group the org is not in.
	var room string
	for i := 0; i < 64 && room == ""; i++ {
		st, r := apiDo(client, a.httpAddr, "POST", "/memory/rooms", map[string]any{"name": fmt.Sprintf("room %d", i)})
		id, _ := r["room_id"].(string)
		org, _ := r["owner_org_id"].(string)
		if st != 200 || id == "" || org == "" {
			t.Fatalf("create room: %d %v", st, r)
		}
		if cluster.TenantGroup(id, 2) != cluster.TenantGroup(org, 2) {
			room = id
		}
	}
	if room == "" {
		t.Fatal("64 rooms, all in the org's group")
	}
	addr := "xroom:" + room
	for i, n := range []*cnode{a, b} {
		expect := func(what string, st int, body map[string]any, want int) {
			t.Helper()
			if st != want {
				t.Fatalf("through %s: %s: %d %v", n.id, what, st, body)
			}
		}
		st, inv := apiDo(client, n.httpAddr, "POST", "/memory/rooms/"+room+"/invites", map[string]any{"scope": "read"})
		expect("mint an invite", st, inv, 200)
		st, list := apiDo(client, n.httpAddr, "GET", "/memory/rooms/"+room+"/invites", nil)
		expect("list invites", st, list, 200)
		if invites, _ := list["invites"].([]any); len(invites) != i+1 {
			t.Fatalf("through %s: %d invites listed, want %d: %v", n.id, len(invites), i+1, list)
		}
		st, members := apiDo(client, n.httpAddr, "GET", "/memory/rooms/"+room+"/members", nil)
		expect("list members", st, members, 200)
		text := fmt.Sprintf("room fact %d: the deploy freeze starts on Thursday", i)
		st, w := apiDo(client, n.httpAddr, "POST", "/memory/write", map[string]any{"content": text, "domain": addr})
		expect("write to the room", st, w, 200)
		st, r := apiDo(client, n.httpAddr, "POST", "/memory/read", map[string]any{"query": "deploy freeze Thursday", "domain": addr})
		expect("read the room", st, r, 200)
		if !strings.Contains(fmt.Sprint(r["items"]), w["atom_id"].(string)) {
			t.Fatalf("through %s: the room read misses %v: %v", n.id, w["atom_id"], r)
		}
		st, batch := apiDo(client, n.httpAddr, "POST", "/memory/write_batch", map[string]any{"items": []map[string]any{
			{"content": fmt.Sprintf("private note %d about the release train", i)},
			{"content": fmt.Sprintf("room note %d about the release train", i), "domain": addr}}})
		expect("a batch of a private and a room item", st, batch, 200)
		if batch["stored_count"] != float64(2) {
			t.Fatalf("through %s: batch: %v", n.id, batch)
		}
		st, recent := apiDo(client, n.httpAddr, "POST", "/memory/recent", map[string]any{"domain": addr, "limit": 100})
		expect("recent of the room", st, recent, 200)
		if items, _ := recent["items"].([]any); len(items) != 2*(i+1) {
			t.Fatalf("through %s: %d recent room items, want %d: %v", n.id, len(items), 2*(i+1), recent)
		}
		st, graph := apiDo(client, n.httpAddr, "POST", "/memory/graph", map[string]any{"seeds": []string{"release"}, "domain": addr})
		expect("graph of the room", st, graph, 200)
		if edges, _ := graph["edges"].([]any); len(edges) == 0 {
			t.Fatalf("through %s: the room's graph has no edge: %v", n.id, graph)
		}
		st, fb := apiDo(client, n.httpAddr, "POST", "/memory/feedback", map[string]any{"atom_ids": []any{w["atom_id"]}, "outcome": 1, "domain": addr})
		expect("feedback in the room", st, fb, 200)
		if fb["updated_count"] != float64(1) {
			t.Fatalf("through %s: feedback: %v", n.id, fb)
		}
		st, private := apiDo(client, n.httpAddr, "POST", "/memory/read", map[string]any{"query": "private note release train"})
		expect("read of the private memory", st, private, 200)
		if !strings.Contains(fmt.Sprint(private["items"]), fmt.Sprintf("private note %d", i)) {
			t.Fatalf("through %s: the private read misses the batch's private item: %v", n.id, private)
		}
		st, got := apiDo(client, n.httpAddr, "GET", "/memory/atoms/"+w["atom_id"].(string), nil)
		expect("by-id lookup of a room atom (own account only)", st, got, 404)
	}
	// With an atom limit, the early check of a batch reads the org's
	// replica; a batch forwarded to the room's node is answered anyway
	// (apply checks the limit).
	org := func() string {
		st, r := apiDo(client, a.httpAddr, "GET", "/memory/rooms", nil)
		rooms, _ := r["rooms"].([]any)
		if st != 200 || len(rooms) == 0 {
			t.Fatalf("rooms: %d %v", st, r)
		}
		return roomOwner(t, a, rooms[0].(map[string]any)["room_id"].(string))
	}()
	if st := a.admin("PATCH", "/orgs/"+org+"/settings", map[string]any{"plan": map[string]any{"atom_limit": 1000}}, nil); st != 200 {
		t.Fatalf("set the atom limit: %d", st)
	}
	for i, n := range []*cnode{a, b} {
		body := map[string]any{"items": []map[string]any{
			{"content": fmt.Sprintf("limited private note %d", i)},
			{"content": fmt.Sprintf("limited room note %d", i), "domain": addr}}}
		if st, out := apiDo(client, n.httpAddr, "POST", "/memory/write_batch", body); st != 200 || out["stored_count"] != float64(2) {
			t.Fatalf("through %s: a limited batch of a private and a room item: %d %v", n.id, st, out)
		}
	}
	st, arch := apiDo(client, b.httpAddr, "POST", "/memory/rooms/"+room+"/archive", map[string]any{})
	if st != 200 {
		t.Fatalf("archive: %d %v", st, arch)
	}
	for _, n := range []*cnode{a, b} {
		if st, w := apiDo(client, n.httpAddr, "POST", "/memory/write", map[string]any{"content": "after the archive", "domain": addr}); st != 403 {
			t.Fatalf("through %s: write to an archived room: %d %v", n.id, st, w)
		}
	}
}

// roomOwner reads the owner org of a room through the admin placement and
// room listing: the room's members list names it with role owner.
func roomOwner(t *testing.T, cn *cnode, room string) string {
	t.Helper()
	st, m := apiDo(client, cn.httpAddr, "GET", "/memory/rooms/"+room+"/members", nil)
	members, _ := m["members"].([]any)
	if st != 200 || len(members) == 0 {
		t.Fatalf("members of %s: %d %v", room, st, m)
	}
	return members[0].(map[string]any)["org_id"].(string)
}

// exportLines returns the lines of the account's export through addr.
func exportLines(t *testing.T, addr string) []string {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/memory/export", nil)
	req.Header.Set("X-Api-Key", clusterKey)
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("export through %s: %v", addr, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("export through %s: %d %s", addr, res.StatusCode, body)
	}
	return strings.Split(strings.TrimSpace(string(body)), "\n")
}

// withoutAccess returns export lines without their access_count and
// last_accessed_at, which reads change as they are counted.
func withoutAccess(t *testing.T, lines []string) []string {
	t.Helper()
	out := make([]string, len(lines))
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("export line %d: %v: %s", i, err, l)
		}
		delete(m, "access_count")
		delete(m, "last_accessed_at")
		b, _ := json.Marshal(m)
		out[i] = string(b)
	}
	return out
}

// forwardedHTTP is the count of HTTP requests the node at addr forwarded
// (hebb_cluster_forwarded_requests_total{kind="http"}).
func forwardedHTTP(t *testing.T, addr string) float64 {
	t.Helper()
	res, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, `hebb_cluster_forwarded_requests_total{kind="http"} `); ok {
			var f float64
			_, _ = fmt.Sscan(v, &f)
			return f
		}
	}
	return 0
}
