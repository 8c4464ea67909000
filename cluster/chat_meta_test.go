package cluster

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

// chatFixture is a meta state the chat commands run against.
type chatMetaFixture struct {
	t   *testing.T
	m   *Meta
	now time.Time
	n   int
}

func newChatMetaFixture(t *testing.T) *chatMetaFixture {
	return &chatMetaFixture{t: t, m: NewMeta(), now: t0}
}

func (f *chatMetaFixture) apply(cmd []byte) any {
	return f.m.Apply(f.m.AppliedIndex()+1, cmd)
}

func (f *chatMetaFixture) session() ChatSession {
	f.n++
	return ChatSession{ID: fmt.Sprintf("ses_%03d", f.n), Hash: fmt.Sprintf("hash_%03d", f.n),
		CreatedAt: f.now, ExpiresAt: f.now.Add(time.Hour)}
}

func (f *chatMetaFixture) signIn(user ChatUser, upgrade string) ChatSignedIn {
	f.t.Helper()
	res := f.apply(EncodeChatSignIn(ChatSignIn{User: user, Upgrade: upgrade, Session: f.session(), Now: f.now}))
	out, ok := res.(ChatSignedIn)
	if !ok {
		f.t.Fatalf("sign in %s: %v", user.ID, res)
	}
	return out
}

func guest(id string) ChatUser {
	return ChatUser{ID: id, Name: "Guest " + id, Anonymous: true, CreatedAt: t0}
}

func account(id, sub string) ChatUser {
	return ChatUser{ID: id, Name: "Name of " + sub, Email: sub + "@example.com", Issuer: "https://idp", Subject: sub, CreatedAt: t0}
}

func TestChatKeyFirstWins(t *testing.T) {
	f := newChatMetaFixture(t)
	if err, ok := f.apply(EncodeChatSetKey(ChatSetKey{Key: ChatKey{Secret: []byte("short")}})).(error); !ok || !errors.Is(err, ErrInvalidCommand) {
		t.Fatalf("short key: %v", err)
	}
	first := bytes.Repeat([]byte{1}, 32)
	f.apply(EncodeChatSetKey(ChatSetKey{Key: ChatKey{Secret: first, CreatedAt: t0}}))
	got := f.apply(EncodeChatSetKey(ChatSetKey{Key: ChatKey{Secret: bytes.Repeat([]byte{2}, 32)}})).(ChatKey)
	if k, ok := f.m.ChatKey(); !ok || !bytes.Equal(k.Secret, first) || !bytes.Equal(got.Secret, first) {
		t.Fatalf("key %v", k)
	}
}

func TestChatSignIn(t *testing.T) {
	cases := []struct {
		name  string
		setup func(f *chatMetaFixture) ChatSignedIn
		check func(t *testing.T, f *chatMetaFixture, r ChatSignedIn)
	}{
		{"guest", func(f *chatMetaFixture) ChatSignedIn { return f.signIn(guest("usr_g"), "") },
			func(t *testing.T, f *chatMetaFixture, r ChatSignedIn) {
				s, u, ok := f.m.ChatSession(r.Session.Hash, f.now)
				if !ok || !u.Anonymous || s.UserID != "usr_g" {
					t.Fatalf("session %+v user %+v", s, u)
				}
				if _, _, ok := f.m.ChatSession(r.Session.Hash, f.now.Add(2*time.Hour)); ok {
					t.Fatal("expired session resolves")
				}
			}},
		{"account twice is one user", func(f *chatMetaFixture) ChatSignedIn {
			f.signIn(account("usr_a", "alice"), "")
			again := account("usr_other", "alice")
			again.Email = "new@example.com"
			return f.signIn(again, "")
		}, func(t *testing.T, f *chatMetaFixture, r ChatSignedIn) {
			if r.User.ID != "usr_a" || r.User.Email != "new@example.com" || len(f.m.ChatSessions("usr_a", f.now)) != 2 {
				t.Fatalf("second sign-in %+v", r)
			}
		}},
		{"guest upgraded in place", func(f *chatMetaFixture) ChatSignedIn {
			f.signIn(guest("usr_g"), "")
			return f.signIn(account("usr_new", "gina"), "usr_g")
		}, func(t *testing.T, f *chatMetaFixture, r ChatSignedIn) {
			if !r.Upgraded || r.User.ID != "usr_g" || r.User.Anonymous || r.User.Subject != "gina" {
				t.Fatalf("upgrade %+v", r)
			}
			if n := len(f.m.ChatSessions("usr_g", f.now)); n != 1 {
				t.Fatalf("%d sessions: the guest session should be gone", n)
			}
		}},
		{"guest merged into an account", func(f *chatMetaFixture) ChatSignedIn {
			f.signIn(account("usr_a", "alice"), "")
			f.signIn(guest("usr_g"), "")
			return f.signIn(account("usr_x", "alice"), "usr_g")
		}, func(t *testing.T, f *chatMetaFixture, r ChatSignedIn) {
			if !r.Merged || r.User.ID != "usr_a" || !slices.Equal(r.User.Aliases, []string{"usr_g"}) {
				t.Fatalf("merge %+v", r)
			}
			if u, ok := f.m.ChatUser("usr_g"); !ok || u.ID != "usr_a" {
				t.Fatalf("guest resolves to %+v", u)
			}
			if len(f.m.ChatSessions("usr_g", f.now)) != 0 {
				t.Fatal("guest sessions survive the merge")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newChatMetaFixture(t)
			tc.check(t, f, tc.setup(f))
			assertChatSnapshotStable(t, f.m)
		})
	}
}

func TestChatSignInRefusals(t *testing.T) {
	f := newChatMetaFixture(t)
	f.signIn(guest("usr_g"), "")
	s := f.session()
	dup := ChatSignIn{User: guest("usr_g"), Session: s, Now: f.now}
	if err, _ := f.apply(EncodeChatSignIn(dup)).(error); !errors.Is(err, ErrChatUserExists) {
		t.Fatalf("duplicate user: %v", err)
	}
	s.Hash = "hash_001" // taken by the first sign-in
	if err, _ := f.apply(EncodeChatSignIn(ChatSignIn{User: guest("usr_h"), Session: s, Now: f.now})).(error); !errors.Is(err, ErrInvalidCommand) {
		t.Fatalf("duplicate session: %v", err)
	}
	noSub := account("usr_b", "")
	if err, _ := f.apply(EncodeChatSignIn(ChatSignIn{User: noSub, Session: f.session(), Now: f.now})).(error); !errors.Is(err, ErrInvalidCommand) {
		t.Fatalf("account without subject: %v", err)
	}
}

func TestChatSessionsRevokeAndCap(t *testing.T) {
	f := newChatMetaFixture(t)
	first := f.signIn(account("usr_a", "alice"), "")
	for range chatMaxSessions {
		f.now = f.now.Add(time.Second)
		f.signIn(account("usr_a", "alice"), "")
	}
	live := f.m.ChatSessions("usr_a", f.now)
	if len(live) != chatMaxSessions || live[0].ID == first.Session.ID {
		t.Fatalf("%d sessions, oldest %s", len(live), live[0].ID)
	}
	if n := f.apply(EncodeChatRevokeSessions(ChatRevokeSessions{UserID: "usr_a", SessionID: live[3].ID, Now: f.now})); n != 1 {
		t.Fatalf("revoke one: %v", n)
	}
	keep := live[0].ID
	if n := f.apply(EncodeChatRevokeSessions(ChatRevokeSessions{UserID: "usr_a", Except: keep, Now: f.now})); n != chatMaxSessions-2 {
		t.Fatalf("revoke others: %v", n)
	}
	if rest := f.m.ChatSessions("usr_a", f.now); len(rest) != 1 || rest[0].ID != keep {
		t.Fatalf("left %+v", rest)
	}
	f.now = f.now.Add(2 * time.Hour)
	f.signIn(guest("usr_g"), "") // sweeps the expired ones
	if _, _, ok := f.m.ChatSession(live[0].Hash, t0); ok {
		t.Fatal("expired session not swept")
	}
	assertChatSnapshotStable(t, f.m)
}

func TestChatUpdateUser(t *testing.T) {
	f := newChatMetaFixture(t)
	f.signIn(guest("usr_g"), "")
	name := "Gina"
	u, ok := f.apply(EncodeChatUpdateUser(ChatUpdateUser{UserID: "usr_g", Name: &name, Now: f.now})).(ChatUser)
	if !ok || u.Name != "Gina" {
		t.Fatalf("update %+v", u)
	}
	if err, _ := f.apply(EncodeChatUpdateUser(ChatUpdateUser{UserID: "usr_none", Name: &name})).(error); !errors.Is(err, ErrUnknownChatUser) {
		t.Fatalf("unknown user: %v", err)
	}
}

// assertChatSnapshotStable restores a snapshot of m and checks that it
// writes the same bytes and resolves the same sessions.
func assertChatSnapshotStable(t *testing.T, m *Meta) {
	t.Helper()
	first := metaSnapshotBytes(t, m)
	r := NewMeta()
	if err := r.Restore(bytes.NewReader(first)); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if again := metaSnapshotBytes(t, r); !bytes.Equal(first, again) {
		t.Fatalf("snapshot changed across restore:\n%s\n%s", first, again)
	}
}

func metaSnapshotBytes(t *testing.T, m *Meta) []byte {
	t.Helper()
	write, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestChatSnapshotRejectsCorruption(t *testing.T) {
	cases := map[string]string{
		"duplicate user":         `{"version":1,"orgs":[],"keys":[],"chat":{"users":[{"id":"u"},{"id":"u"}]}}`,
		"session of nobody":      `{"version":1,"orgs":[],"keys":[],"chat":{"sessions":[{"id":"s","hash":"h","user_id":"x"}]}}`,
		"session without a hash": `{"version":1,"orgs":[],"keys":[],"chat":{"users":[{"id":"u"}],"sessions":[{"id":"s","user_id":"u"}]}}`,
	}
	for name, snap := range cases {
		t.Run(name, func(t *testing.T) {
			if err := NewMeta().Restore(bytes.NewReader([]byte(snap))); !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// TestChatResultsCrossTheTransport: apply results of chat commands travel
// back from a remote leader inside an rpcResponse (gob).
func TestChatResultsCrossTheTransport(t *testing.T) {
	results := []any{
		ChatSignedIn{User: account("usr_a", "alice"), Session: ChatSession{ID: "ses_1", Hash: "h"}, Merged: true},
		ChatKey{Secret: []byte("0123456789abcdef0123456789abcdef")},
		ChatUser{ID: "usr_a", Aliases: []string{"usr_g"}},
		3,
		&raftfsm.ChatResult{Seq: 7, Message: &raftfsm.ChatMessage{ID: "msg_1", Versions: []raftfsm.ChatVersion{{Content: "hi", At: 1}}}},
		&raftfsm.ChatResult{Err: &raftfsm.ApplyError{Kind: raftfsm.ErrForbidden, Message: raftfsm.ChatMsgNotParticipant}},
	}
	for _, want := range results {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(&rpcResponse{Result: want}); err != nil {
			t.Fatalf("encode %T: %v", want, err)
		}
		var got rpcResponse
		if err := gob.NewDecoder(&buf).Decode(&got); err != nil {
			t.Fatalf("decode %T: %v", want, err)
		}
		if r, ok := got.Result.(*raftfsm.ChatResult); ok && r.Err != nil {
			if !errors.Is(r.Err, raftfsm.ErrForbidden) {
				t.Fatalf("error kind lost: %+v", r.Err)
			}
			continue
		}
		if !reflect.DeepEqual(got.Result, want) {
			t.Fatalf("got %#v, want %#v", got.Result, want)
		}
	}
}
