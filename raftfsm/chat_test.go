package raftfsm

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

// chatFixture drives one FSM holding chat rooms; the clock ticks per command.
type chatFixture struct {
	t  testing.TB
	f  *FSM
	at int64
	n  uint64
}

func newChatFixture(t *testing.T) *chatFixture {
	return &chatFixture{t: t, f: New(testDim), at: baseTime}
}

func (x *chatFixture) apply(c ChatCmd) *ChatResult {
	x.t.Helper()
	x.n++
	x.at += 1000
	if c.At == 0 {
		c.At = x.at
	}
	return x.f.Apply(x.n, c.Encode()).(*ChatResult)
}

// as returns a command run by user (whose only identity is itself).
func as(user string, c ChatCmd) ChatCmd {
	c.Actor, c.Actors = user, []string{user}
	return c
}

func (x *chatFixture) ok(c ChatCmd) *ChatResult {
	x.t.Helper()
	r := x.apply(c)
	if r.Err != nil {
		x.t.Fatalf("op %d: %v", c.Op, r.Err)
	}
	return r
}

// room creates room id owned by owner.
func (x *chatFixture) room(id, owner, vis string) {
	x.t.Helper()
	x.ok(as(owner, ChatCmd{Op: ChatCreateRoom, Room: id, Name: "Room " + id, Vis: vis}))
}

func (x *chatFixture) post(room, user, id, content string) ChatCmd {
	return as(user, ChatCmd{Op: ChatPost, Room: room, Message: id, Content: content})
}

func errKind(r *ChatResult) error {
	if r.Err == nil {
		return nil
	}
	return r.Err.Kind
}

func TestChatPermissions(t *testing.T) {
	x := newChatFixture(t)
	x.room("chat_a", "alice", ChatPrivate)
	x.room("chat_pub", "alice", ChatPublic)
	x.ok(as("alice", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "bob", Limit: 3}))
	x.ok(x.post("chat_a", "bob", "m1", "hello"))
	cases := []struct {
		name string
		cmd  ChatCmd
		want error
	}{
		{"stranger posts", as("eve", ChatCmd{Op: ChatPost, Room: "chat_a", Message: "m2", Content: "x"}), ErrForbidden},
		{"stranger joins a private room", as("eve", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "eve"}), ErrForbidden},
		{"member adds someone", as("bob", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "carol"}), ErrForbidden},
		{"member renames", as("bob", ChatCmd{Op: ChatUpdateRoom, Room: "chat_a", SetName: true, Name: "x"}), ErrForbidden},
		{"member deletes the room", as("bob", ChatCmd{Op: ChatDeleteRoom, Room: "chat_a"}), ErrForbidden},
		{"other edits", as("alice", ChatCmd{Op: ChatEdit, Room: "chat_a", Message: "m1", Content: "y"}), ErrForbidden},
		{"other deletes", as("alice", ChatCmd{Op: ChatDeleteMessage, Room: "chat_a", Message: "m1"}), ErrForbidden},
		{"stranger edits", as("eve", ChatCmd{Op: ChatEdit, Room: "chat_a", Message: "m1", Content: "y"}), ErrForbidden},
		{"unknown message", as("bob", ChatCmd{Op: ChatEdit, Room: "chat_a", Message: "nope", Content: "y"}), ErrNotFound},
		{"unknown room", as("bob", ChatCmd{Op: ChatPost, Room: "chat_zz", Message: "m3", Content: "y"}), ErrNotFound},
		{"duplicate message id", as("bob", ChatCmd{Op: ChatPost, Room: "chat_a", Message: "m1", Content: "y"}), ErrConflict},
		{"owner leaves", as("alice", ChatCmd{Op: ChatLeave, Room: "chat_a", User: "alice"}), ErrForbidden},
		{"member removes another", as("bob", ChatCmd{Op: ChatLeave, Room: "chat_a", User: "alice"}), ErrForbidden},
		{"duplicate room", as("bob", ChatCmd{Op: ChatCreateRoom, Room: "chat_a"}), ErrConflict},
		{"self-join a public room", as("eve", ChatCmd{Op: ChatJoin, Room: "chat_pub", User: "eve"}), nil},
		{"owner adds", as("alice", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "carol", Limit: 3}), nil},
		{"room full", as("alice", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "dave", Limit: 3}), ErrConflict},
		{"join twice is a no-op", as("alice", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "carol", Limit: 3}), nil},
		{"service posts as a participant", ChatCmd{Op: ChatPost, Service: true, Room: "chat_a", User: "carol", Message: "s1", Content: "svc"}, nil},
		{"service posts as a stranger", ChatCmd{Op: ChatPost, Service: true, Room: "chat_a", User: "eve", Message: "s2", Content: "svc"}, ErrForbidden},
		{"service posts as the system", ChatCmd{Op: ChatPost, Service: true, Room: "chat_a", Message: "s3", Content: "svc"}, nil},
		{"member leaves", as("carol", ChatCmd{Op: ChatLeave, Room: "chat_a", User: "carol"}), nil},
		{"leave twice", as("carol", ChatCmd{Op: ChatLeave, Room: "chat_a", User: "carol"}), ErrForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x.t = t
			if got := errKind(x.apply(tc.cmd)); !errors.Is(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestChatMergedIdentities(t *testing.T) {
	x := newChatFixture(t)
	x.room("chat_a", "alice", ChatPrivate)
	x.ok(as("alice", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "guest"}))
	x.ok(x.post("chat_a", "guest", "m1", "as a guest"))
	// The guest signed in: the account "bob" now carries the guest's identity.
	bob := ChatCmd{Actor: "bob", Actors: []string{"bob", "guest"}}
	edit := bob
	edit.Op, edit.Room, edit.Message, edit.Content = ChatEdit, "chat_a", "m1", "as bob"
	if r := x.ok(edit); r.Message.Content() != "as bob" || r.Message.Author != "guest" {
		t.Fatalf("edit %+v", r.Message)
	}
	join := bob
	join.Op, join.Room, join.User = ChatJoin, "chat_a", "bob"
	if r := x.ok(join); r.Seq != 0 || r.Participant.UserID != "guest" {
		t.Fatalf("join of a merged guest %+v", r)
	}
	leave := bob
	leave.Op, leave.Room, leave.User = ChatLeave, "chat_a", "bob"
	if r := x.ok(leave); r.Participant.UserID != "guest" {
		t.Fatalf("leave %+v", r)
	}

	// A guest that joined a room its account was in already: leaving
	// removes both records; an owner's stays whole.
	x.ok(as("alice", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "bob"}))
	x.ok(as("alice", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "guest"}))
	x.ok(leave)
	if v, _ := x.f.ChatRoom("chat_a"); len(v.Participants) != 1 {
		t.Fatalf("after one leave the room holds %+v", v.Participants)
	}
	x.ok(as("alice", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "guest"}))
	owner := ChatCmd{Op: ChatLeave, Room: "chat_a", User: "alice", Actor: "alice", Actors: []string{"alice", "guest"}}
	if r := x.apply(owner); !errors.Is(errKind(r), ErrForbidden) {
		t.Fatalf("an owner with a merged guest left: %+v", r)
	}
}

func TestChatEventsAndHistory(t *testing.T) {
	x := newChatFixture(t)
	x.room("chat_a", "alice", ChatPrivate)
	x.ok(as("alice", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "bob"}))
	x.ok(x.post("chat_a", "bob", "m1", "v1"))
	x.ok(as("bob", ChatCmd{Op: ChatEdit, Room: "chat_a", Message: "m1", Content: "v2", Limit: 3}))
	x.ok(x.post("chat_a", "alice", "m2", "gone soon"))
	x.ok(as("alice", ChatCmd{Op: ChatDeleteMessage, Room: "chat_a", Message: "m2"}))
	x.ok(as("bob", ChatCmd{Op: ChatLeave, Room: "chat_a", User: "bob"}))

	feed := x.f.ChatEvents("chat_a", 0, 100)
	type ev struct{ kind, who, content string }
	var got []ev
	for i, e := range feed.Events {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		switch {
		case e.Message != nil:
			got = append(got, ev{e.Kind, e.Message.ID, e.Message.Content()})
		case e.Participant != nil:
			got = append(got, ev{e.Kind, e.Participant.UserID, e.Participant.Role})
		}
	}
	want := []ev{{"participant.joined", "alice", "owner"}, {"participant.joined", "bob", "member"},
		{"message.created", "m1", "v1"}, {"message.edited", "m1", "v2"}, {"message.created", "m2", ""},
		{"message.deleted", "m2", ""}, {"participant.left", "bob", "member"}}
	if !slices.Equal(got, want) || feed.Head != 7 {
		t.Fatalf("events %v head %d", got, feed.Head)
	}
	if rest := x.f.ChatEvents("chat_a", 4, 100); len(rest.Events) != 3 || rest.Events[0].Seq != 5 {
		t.Fatalf("resume after 4: %+v", rest.Events)
	}
	m, _ := x.f.ChatMessage("chat_a", "m1")
	if len(m.Versions) != 2 || m.Versions[0].Content != "v1" || m.EditedAt() != m.Versions[1].At {
		t.Fatalf("history %+v", m)
	}
	x.ok(as("alice", ChatCmd{Op: ChatJoin, Room: "chat_a", User: "bob"}))
	x.ok(as("bob", ChatCmd{Op: ChatEdit, Room: "chat_a", Message: "m1", Content: "v3", Limit: 3}))
	if r := x.apply(as("bob", ChatCmd{Op: ChatEdit, Room: "chat_a", Message: "m1", Content: "v4", Limit: 3})); !errors.Is(errKind(r), ErrConflict) {
		t.Fatalf("edit past the limit: %v", r.Err)
	}
}

func TestChatWakeAndDelete(t *testing.T) {
	x := newChatFixture(t)
	x.room("chat_a", "alice", ChatPrivate)
	feed := x.f.ChatEvents("chat_a", 1, 10)
	select {
	case <-feed.Wake:
		t.Fatal("woken before any event")
	default:
	}
	x.ok(x.post("chat_a", "alice", "m1", "hi"))
	<-feed.Wake // closed by the post; a hang here is the failure
	x.ok(as("alice", ChatCmd{Op: ChatDeleteRoom, Room: "chat_a"}))
	if _, ok := x.f.ChatRoom("chat_a"); ok {
		t.Fatal("deleted room still served")
	}
	gone := x.f.ChatEvents("chat_a", 1, 10)
	if !gone.Gone || len(gone.Events) != 1 || gone.Events[0].Kind != "room.deleted" || gone.Events[0].Seq != 3 {
		t.Fatalf("after delete %+v", gone)
	}
	if r := x.apply(x.post("chat_a", "alice", "m2", "x")); !errors.Is(errKind(r), ErrNotFound) {
		t.Fatalf("post to a deleted room: %v", r.Err)
	}
	if f := x.f.ChatEvents("chat_none", 0, 10); !f.Gone {
		t.Fatal("unknown room not gone")
	}
}

func TestChatMessagePages(t *testing.T) {
	x := newChatFixture(t)
	x.room("chat_a", "alice", ChatPrivate)
	for i := range 7 {
		x.ok(x.post("chat_a", "alice", fmt.Sprintf("m%d", i), "x"))
	}
	ids := func(ms []ChatMessage) (out []string) {
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	cases := []struct {
		name string
		page ChatPage
		want []string
		more bool
	}{
		{"newest", ChatPage{Limit: 3}, []string{"m6", "m5", "m4"}, true},
		{"before", ChatPage{Before: 5, Limit: 3}, []string{"m2", "m1", "m0"}, false},
		{"after", ChatPage{After: 4, Forward: true, Limit: 2}, []string{"m3", "m4"}, true},
		{"from the start", ChatPage{Forward: true, Limit: 2}, []string{"m0", "m1"}, true},
		{"after the end", ChatPage{After: 8, Forward: true, Limit: 2}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, more, ok := x.f.ChatMessages("chat_a", tc.page)
			if !ok || !slices.Equal(ids(got), tc.want) || more != tc.more {
				t.Fatalf("got %v more %v", ids(got), more)
			}
		})
	}
	rooms := x.f.ChatRooms(&ChatRoomFilter{IDs: []string{"alice"}})
	if len(rooms) != 1 || rooms[0].Head != 8 {
		t.Fatalf("rooms %+v", rooms)
	}
}

func TestChatEventRetention(t *testing.T) {
	x := newChatFixture(t)
	x.room("chat_a", "alice", ChatPrivate)
	total := chatEventsRetained + chatEventsRetained/4 + 1
	for i := 1; i < total; i++ {
		x.ok(x.post("chat_a", "alice", fmt.Sprint(i), "x"))
	}
	if f := x.f.ChatEvents("chat_a", 0, 10); !f.Missed || f.Head != uint64(total) {
		t.Fatalf("old cursor: missed %v head %d", f.Missed, f.Head)
	}
	last := x.f.ChatEvents("chat_a", uint64(total-2), 10)
	if last.Missed || len(last.Events) != 2 {
		t.Fatalf("recent cursor %+v", last)
	}
}

// chatScript is a random but valid-looking command sequence over two rooms.
func chatScript(rng *rand.Rand, n int) []ChatCmd {
	users := []string{"alice", "bob", "carol"}
	out := []ChatCmd{as("alice", ChatCmd{Op: ChatCreateRoom, Room: "chat_a", Name: "a", Vis: ChatPublic, Lobby: true}),
		as("bob", ChatCmd{Op: ChatCreateRoom, Room: "chat_b", Name: "b", Vis: ChatPrivate})}
	for i := range n {
		u, room := users[rng.Intn(3)], []string{"chat_a", "chat_b"}[rng.Intn(2)]
		msg := fmt.Sprint("m", rng.Intn(i+1))
		c := []ChatCmd{
			{Op: ChatJoin, Room: room, User: users[rng.Intn(3)], Limit: 10},
			{Op: ChatPost, Room: room, Message: fmt.Sprint("m", i), Content: fmt.Sprint("text ", i)},
			{Op: ChatEdit, Room: room, Message: msg, Content: fmt.Sprint("edit ", i), Limit: 4},
			{Op: ChatDeleteMessage, Room: room, Message: msg},
			{Op: ChatLeave, Room: room, User: users[rng.Intn(3)]},
			{Op: ChatUpdateRoom, Room: room, SetName: true, Name: fmt.Sprint("name ", i), SetLobby: true},
		}[rng.Intn(6)]
		out = append(out, as(u, c))
	}
	return append(out, as("bob", ChatCmd{Op: ChatDeleteRoom, Room: "chat_b"}))
}

func TestChatSnapshotReplay(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	script := chatScript(rng, 300)
	a, b := newChatFixture(t), newChatFixture(t)
	cut := len(script) / 2
	for _, c := range script[:cut] {
		a.apply(c)
		b.apply(c)
	}
	assertSameAsRestored(t, a.f)
	checkDecodeState(t, a.f.encodeState())
	r := restored(t, snapshotBytes(t, a.f), testDim)
	b.f = r
	for _, c := range script[cut:] {
		ra, rb := a.apply(c), b.apply(c)
		if (ra.Err == nil) != (rb.Err == nil) || ra.Seq != rb.Seq {
			t.Fatalf("replica results differ: %+v vs %+v", ra, rb)
		}
	}
	if a.f.StateHash() != b.f.StateHash() {
		t.Fatal("replica restored mid-way hashes differently")
	}
	full := a.f.ChatEvents("chat_a", 0, 1<<20)
	again := b.f.ChatEvents("chat_a", 0, 1<<20)
	if len(full.Events) == 0 || !reflect.DeepEqual(full.Events, again.Events) {
		t.Fatal("event logs differ after restore")
	}
}

func TestChatSnapshotCorruptionNeverPanics(t *testing.T) {
	x := newChatFixture(t)
	for _, c := range chatScript(rand.New(rand.NewSource(5)), 40) {
		x.apply(c)
	}
	valid := snapshotBytes(t, x.f)
	rng := rand.New(rand.NewSource(9))
	for range 2000 {
		b := slices.Clone(valid)
		for range 1 + rng.Intn(4) {
			b[len(snapshotMagic)+1+rng.Intn(len(b)-len(snapshotMagic)-1)] = byte(rng.Intn(256))
		}
		checkDecodeState(t, b)
	}
}

func TestChatCommandRoundTrip(t *testing.T) {
	c := ChatCmd{Op: ChatUpdateRoom, Room: "chat_x", At: 42, Actor: "u", Actors: []string{"u", "g"}, Service: true,
		Name: "n", Desc: "d", Vis: ChatPublic, Lobby: true, SetName: true, SetVis: true, SetLobby: true,
		User: "v", Limit: 7, Message: "m", Content: "c"}
	got := decodeCommand(c.Encode()).(*ChatCmd)
	if fmt.Sprint(*got) != fmt.Sprint(c) {
		t.Fatalf("round trip\n got %+v\nwant %+v", *got, c)
	}
}

// FuzzChatState: a corrupted snapshot holding chat rooms never panics and
// decodes to a stable state.
func FuzzChatState(f *testing.F) {
	x := &chatFixture{t: f, f: New(testDim), at: baseTime}
	for _, c := range chatScript(rand.New(rand.NewSource(11)), 20) {
		x.apply(c)
	}
	f.Add(x.f.encodeState())
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeState(t, b)
	})
}

// BenchmarkChatRoomsOfNone lists the rooms of a user in none of 12,000
// (the chat API's GET /api/rooms, per group).
func BenchmarkChatRoomsOfNone(b *testing.B) {
	x := &chatFixture{t: b, f: New(testDim), at: baseTime}
	for i := range 12000 {
		x.room(fmt.Sprintf("chat_%05d", i), fmt.Sprintf("user_%05d", i), ChatPrivate)
	}
	filter := &ChatRoomFilter{IDs: []string{"nobody"}}
	b.ResetTimer()
	for range b.N {
		if len(x.f.ChatRooms(filter)) != 0 {
			b.Fatal("rooms listed")
		}
	}
}
