package chat_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/getkin/kin-openapi/openapi3"
)

// wsClient is one realtime connection.
type wsClient struct {
	t      *testing.T
	ws     *websocket.Conn
	schema *openapi3.Schema
	ready  map[string]any
}

// realtimeURL asks for a partykit token of room and returns the socket URL.
func (c *client) realtimeURL(room string, cursor int) string {
	c.t.Helper()
	tok := must(c.t, c.do("POST", "/api/auth/partykit-token", map[string]any{"roomId": room}), 200)
	u := tok.str("url") + "?token=" + tok.str("token")
	if cursor >= 0 {
		u += fmt.Sprintf("&cursor=%d", cursor)
	}
	return u
}

// connect opens the room's realtime channel (cursor < 0: from now on).
func (c *client) connect(room string, cursor int) *wsClient {
	c.t.Helper()
	return dialRealtime(c.t, c.realtimeURL(room, cursor))
}

func dialRealtime(t *testing.T, u string) *wsClient {
	t.Helper()
	ws, res, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		body := ""
		if res != nil {
			b, _ := io.ReadAll(res.Body)
			body = fmt.Sprintf("%d %s", res.StatusCode, b)
		}
		t.Fatalf("dial %s: %v %s", u, err, body)
	}
	t.Cleanup(func() { _ = ws.Close() })
	doc := specDoc(t)
	w := &wsClient{t: t, ws: ws, schema: doc.Components.Schemas["RealtimeFrame"].Value}
	w.ready = w.next()
	if w.ready["type"] != "ready" {
		t.Fatalf("first frame %v", w.ready)
	}
	return w
}

// next reads one frame and checks it against the RealtimeFrame schema. The
// read deadline only guards against a hang.
func (w *wsClient) next() map[string]any {
	w.t.Helper()
	_ = w.ws.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, raw, err := w.ws.ReadMessage()
	if err != nil {
		w.t.Fatalf("read frame: %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		w.t.Fatalf("frame %s: %v", raw, err)
	}
	var generic any
	_ = json.Unmarshal(raw, &generic)
	if err := w.schema.VisitJSON(generic); err != nil {
		w.t.Errorf("frame does not match RealtimeFrame: %v\n%s", err, raw)
	}
	return v
}

// expect reads len(kinds) events and checks their types.
func (w *wsClient) expect(kinds ...string) []map[string]any {
	w.t.Helper()
	var out []map[string]any
	for _, k := range kinds {
		ev := w.next()
		if ev["type"] != k {
			w.t.Fatalf("got %s (%v), want %s", ev["type"], ev, k)
		}
		out = append(out, ev)
	}
	return out
}

// closed reads until the server closes the connection and returns the code.
func (w *wsClient) closed() int {
	w.t.Helper()
	for {
		_ = w.ws.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, _, err := w.ws.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code
			}
			w.t.Fatalf("connection ended without a close frame: %v", err)
		}
	}
}

func seqOf(ev map[string]any) int { return int(ev["seq"].(float64)) }

func seqs(evs []map[string]any) []int {
	out := make([]int, 0, len(evs))
	for _, ev := range evs {
		out = append(out, seqOf(ev))
	}
	return out
}

func TestRealtimeResumeAfterReconnect(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	alice := n.guest("Alice")
	room := must(t, alice.do("POST", "/api/rooms", map[string]any{"name": "resume"}), 201).str("id")
	ws := alice.connect(room, 0) // replay from the start: the owner's join
	first := ws.expect("participant.joined")
	post := func(text string) string {
		return must(t, alice.do("POST", "/api/rooms/"+room+"/messages", map[string]any{"content": text}), 201).str("id")
	}
	m1 := post("one")
	seen := ws.expect("message.created")
	cursor := seqOf(seen[0])
	_ = ws.ws.Close() // the client drops

	m2 := post("two")
	must(t, alice.do("PATCH", "/api/rooms/"+room+"/messages/"+m1, map[string]any{"content": "one, edited"}), 200)
	must(t, alice.do("DELETE", "/api/rooms/"+room+"/messages/"+m2, nil), 200)
	must(t, alice.do("PATCH", "/api/rooms/"+room, map[string]any{"name": "renamed"}), 200)

	back := alice.connect(room, cursor)
	missed := back.expect("message.created", "message.edited", "message.deleted", "room.updated")
	if got := seqs(missed); !slices.Equal(got, []int{cursor + 1, cursor + 2, cursor + 3, cursor + 4}) {
		t.Fatalf("missed events %v after cursor %d", got, cursor)
	}
	if dig(missed[0], "message", "id") != m2 || dig(missed[1], "message", "content") != "one, edited" ||
		dig(missed[2], "message", "deleted") != true || dig(missed[3], "room", "name") != "renamed" {
		t.Fatalf("missed events %v", missed)
	}
	if int(back.ready["head"].(float64)) != cursor+4 || seqOf(first[0]) != 1 {
		t.Fatalf("ready %v", back.ready)
	}
	post("three") // and then live
	if live := back.expect("message.created"); seqOf(live[0]) != cursor+5 {
		t.Fatalf("live event %v", live)
	}
	// A cursor from the future is refused before the upgrade.
	ahead := alice.do("GET", strings.Replace(alice.realtimeURL(room, 999), "ws://", "http://", 1), nil)
	mustError(t, ahead, 400, "VALIDATION_ERROR", "")
}

func TestRealtimeRefusals(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	alice, eve := n.guest("Alice"), n.guest("Eve")
	room := must(t, alice.do("POST", "/api/rooms", map[string]any{"name": "private"}), 201).str("id")
	other := must(t, alice.do("POST", "/api/rooms", map[string]any{"name": "other"}), 201).str("id")
	type refusal struct {
		name   string
		do     func() resp
		status int
		reason string
	}
	cases := []refusal{
		{"no token", func() resp { return eve.do("GET", "/parties/chat/"+room, nil) }, 401, "missing_token"},
		{"forged token", func() resp { return eve.do("GET", "/parties/chat/"+room+"?token=a.b.c", nil) }, 401, "invalid_token"},
		{"token of another room", func() resp {
			return eve.do("GET", "/parties/chat/"+room+"?token="+tokenOf(t, alice.realtimeURL(other, -1)), nil)
		}, 401, "invalid_token"},
		{"token for a non-participant", func() resp {
			return eve.do("POST", "/api/auth/partykit-token", map[string]any{"roomId": room})
		}, 403, ""},
		{"not a websocket", func() resp {
			return eve.do("GET", "/parties/chat/"+room+"?token="+tokenOf(t, alice.realtimeURL(room, -1)), nil)
		}, 400, ""},
	}
	// A participant who left holds a token that no longer opens the room.
	pub := must(t, alice.do("POST", "/api/rooms", map[string]any{"name": "open", "visibility": "public"}), 201).str("id")
	must(t, eve.do("POST", "/api/rooms/"+pub+"/participants", nil), 201)
	stale := strings.Replace(eve.realtimeURL(pub, -1), "ws://", "http://", 1)
	must(t, eve.do("DELETE", "/api/rooms/"+pub+"/participants/"+eve.me(), nil), 200)
	cases = append(cases, refusal{"token of a former participant", func() resp { return eve.do("GET", stale, nil) }, 403, ""})
	// A token issued to a session that signed out opens nothing.
	carol := n.guest("Carol")
	must(t, carol.do("POST", "/api/rooms/"+pub+"/participants", nil), 201)
	signedOut := strings.Replace(carol.realtimeURL(pub, -1), "ws://", "http://", 1)
	must(t, carol.do("POST", "/api/auth/sign-out", nil), 200)
	cases = append(cases, refusal{"token of a signed-out session", func() resp { return eve.do("GET", signedOut, nil) }, 401, "invalid_token"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.do()
			if r.Status != tc.status || (tc.reason != "" && r.str("details", "reason") != tc.reason) {
				t.Fatalf("got %d %s", r.Status, r.Raw)
			}
		})
	}
}

// One user holds at most 32 realtime connections on a node; the next is
// refused with 429 until one closes.
func TestRealtimeConnectionsPerUser(t *testing.T) {
	t.Parallel()
	n := newNode(t)
	alice := n.guest("Alice")
	room := must(t, alice.do("POST", "/api/rooms", map[string]any{"name": "tabs"}), 201).str("id")
	open := make([]*wsClient, 32)
	for i := range open {
		open[i] = alice.connect(room, -1)
	}
	_, res, err := websocket.DefaultDialer.Dial(alice.realtimeURL(room, -1), nil)
	if err == nil || res == nil || res.StatusCode != 429 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("the 33rd connection: %v %+v", err, res)
	}
	body, _ := io.ReadAll(res.Body)
	var env struct {
		Code    string
		Details struct{ Reason string }
	}
	if json.Unmarshal(body, &env) != nil || env.Code != "RATE_LIMITED" || env.Details.Reason != "too_many_connections" {
		t.Fatalf("the 33rd connection's answer: %s", body)
	}
	// Another user is not affected, and a closed connection frees a place.
	bob := n.guest("Bob")
	pub := must(t, alice.do("POST", "/api/rooms", map[string]any{"name": "open", "visibility": "public"}), 201).str("id")
	must(t, bob.do("POST", "/api/rooms/"+pub+"/participants", nil), 201)
	bob.connect(pub, -1)
	_ = open[0].ws.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ws, res, err := websocket.DefaultDialer.Dial(alice.realtimeURL(room, -1), nil)
		if err == nil {
			_ = ws.Close()
			return
		}
		if res == nil || res.StatusCode != 429 || time.Now().After(deadline) {
			t.Fatalf("after closing one: %v %+v", err, res)
		}
	}
}

func tokenOf(t *testing.T, u string) string {
	t.Helper()
	_, tok, ok := strings.Cut(u, "?token=")
	if !ok {
		t.Fatalf("no token in %s", u)
	}
	return tok
}
