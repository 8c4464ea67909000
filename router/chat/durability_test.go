package chat_test

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
	"time"
)

// chatState is what a participant can read of a room, for comparing
// before and after a restart or a leader change.
func chatState(t *testing.T, c *client, room string) map[string]any {
	t.Helper()
	return map[string]any{
		"room":     must(t, c.do("GET", "/api/rooms/"+room, nil), 200).Body,
		"messages": must(t, c.do("GET", "/api/rooms/"+room+"/messages?after=0", nil), 200).Body,
		"session":  must(t, c.do("GET", "/api/auth/get-session", nil), 200).Body,
		"rooms":    must(t, c.do("GET", "/api/rooms", nil), 200).Body,
	}
}

func TestSurvivesRestart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts []func(*node)
	}{
		{"log replay", nil},
		{"snapshots", []func(*node){withSnapshots(4)}},
		{"sealed secret", []func(*node){withSnapshots(4), withKeyRing}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testRestart(t, tc.opts...)
		})
	}
}

func testRestart(t *testing.T, opts ...func(*node)) {
	n := newNode(t, opts...)
	alice := n.client()
	must(t, alice.signInAs("alice", "Alice"), 200)
	gus := n.guest("Gus")
	room := must(t, alice.do("POST", "/api/rooms", map[string]any{"name": "durable"}), 201).str("id")
	must(t, alice.do("POST", "/api/rooms/"+room+"/participants", map[string]any{"userId": gus.me()}), 201)
	m1 := must(t, gus.do("POST", "/api/rooms/"+room+"/messages", map[string]any{"content": "first"}), 201).str("id")
	m2 := must(t, alice.do("POST", "/api/rooms/"+room+"/messages", map[string]any{"content": "second"}), 201).str("id")
	must(t, gus.do("PATCH", "/api/rooms/"+room+"/messages/"+m1, map[string]any{"content": "first, edited"}), 200)
	must(t, alice.do("DELETE", "/api/rooms/"+room+"/messages/"+m2, nil), 200)
	wsURL := gus.realtimeURL(room, -1) // a token issued before the restart
	if k, ok := n.cl.Meta().ChatKey(); n.opts.Keys != nil && (!ok || !bytes.HasPrefix(k.Secret, []byte("hebb-sealed-key-v1"))) {
		t.Fatal("the chat secret is not sealed in the meta state")
	}
	ws := dialRealtime(t, wsURL)
	head := int(ws.ready["head"].(float64))
	before := map[*client]map[string]any{alice: chatState(t, alice, room), gus: chatState(t, gus, room)}

	n.restart()

	for c, b := range before {
		if after := chatState(t, c, room); !reflect.DeepEqual(after, b) {
			t.Fatalf("state differs after the restart:\nbefore %v\nafter  %v", b, after)
		}
	}
	m3 := must(t, gus.do("POST", "/api/rooms/"+room+"/messages", map[string]any{"content": "after the restart"}), 201).str("id")
	back := dialRealtime(t, wsURL+"&cursor="+num(float64(head))) // the token and the cursor still hold
	if ev := back.expect("message.created"); seqOf(ev[0]) != head+1 || dig(ev[0], "message", "id") != m3 {
		t.Fatalf("resumed %v", ev)
	}
}

// TestSurvivesLeaderChange runs three nodes, each with a chat surface;
// the leader of the room's group stops, and a survivor serves the same
// state, takes new messages and resumes a realtime client.
func TestSurvivesLeaderChange(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-node")
	}
	t.Parallel()
	multi := func(id string, join ...string) func(*node) {
		return func(n *node) {
			n.ccfg.NodeID, n.ccfg.GossipAddr, n.ccfg.Join = id, "127.0.0.1:0", join
			n.ccfg.Groups, n.ccfg.Replicas, n.ccfg.DeadGrace = 1, 3, time.Second
		}
	}
	n1 := newNode(t, multi("n1"))
	seed := n1.ccfg.GossipAddr
	n2, n3 := newNode(t, multi("n2", seed)), newNode(t, multi("n3", seed))
	nodes := []*node{n1, n2, n3}
	waitFor(t, "three replicas of every group", func() bool {
		st := n1.cl.Status().Admin
		return len(st.Meta.Voters) == 3 && len(st.Groups) == 1 && len(st.Groups[0].Replicas) == 3
	})

	alice := n1.guest("Alice")
	room := must(t, alice.do("POST", "/api/rooms", map[string]any{"name": "replicated"}), 201).str("id")
	for i := range 3 {
		must(t, alice.do("POST", "/api/rooms/"+room+"/messages", map[string]any{"content": "before " + num(float64(i))}), 201)
	}
	before := chatState(t, alice, room)
	head := int(dig(before["room"], "cursor").(float64))

	p := n1.cl.Placement(room)
	if p.LeaderNodeID == nil {
		t.Fatal("the room's group has no leader")
	}
	i := slices.IndexFunc(nodes, func(n *node) bool { return n.cl.NodeID() == *p.LeaderNodeID })
	nodes[i].stop()
	survivor := nodes[(i+1)%3]
	alice.n = survivor // the same session token, on another node
	waitFor(t, "a new leader", func() bool {
		pl := survivor.cl.Placement(room)
		return pl.LeaderNodeID != nil && *pl.LeaderNodeID != *p.LeaderNodeID
	})
	after := chatState(t, alice, room)
	if !reflect.DeepEqual(after["messages"], before["messages"]) || !reflect.DeepEqual(after["session"], before["session"]) {
		t.Fatalf("state differs after the leader change:\nbefore %v\nafter  %v", before, after)
	}
	must(t, alice.do("POST", "/api/rooms/"+room+"/messages", map[string]any{"content": "after"}), 201)
	ws := alice.connect(room, head)
	if ev := ws.expect("message.created"); seqOf(ev[0]) != head+1 {
		t.Fatalf("resumed %v", ev)
	}
}

// waitFor polls cond; the deadline only guards against a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
