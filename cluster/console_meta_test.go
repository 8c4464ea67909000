package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"
)

// consoleFixture is a meta state with one org ("org_a") the console
// commands run against.
type consoleFixture struct {
	t   *testing.T
	m   *Meta
	now time.Time
}

func newConsoleFixture(t *testing.T) *consoleFixture {
	f := &consoleFixture{t: t, m: NewMeta(), now: t0}
	f.mustApply(EncodeCreateOrg(CreateOrg{OrgID: "org_a", Name: "A", CreatedAt: t0}))
	return f
}

func (f *consoleFixture) apply(cmd []byte) any {
	return f.m.Apply(f.m.AppliedIndex()+1, cmd)
}

func (f *consoleFixture) mustApply(cmd []byte) any {
	f.t.Helper()
	out := f.apply(cmd)
	if err, ok := out.(error); ok {
		f.t.Fatalf("apply: %v", err)
	}
	return out
}

func consoleUser(id, email, org, role string) ConsoleUser {
	return ConsoleUser{ID: id, Email: email, PasswordHash: "$argon2id$x", CreatedAt: t0,
		Orgs: []ConsoleMembership{{OrgID: org, Role: role}}}
}

func (f *consoleFixture) session(hash, user, org string) ConsoleSession {
	return ConsoleSession{Hash: hash, UserID: user, OrgID: org, CreatedAt: f.now, ExpiresAt: f.now.Add(time.Hour)}
}

func wantErr(t *testing.T, out any, target error) {
	t.Helper()
	err, ok := out.(error)
	if !ok || !errors.Is(err, target) {
		t.Fatalf("got %v, want %v", out, target)
	}
}

func TestConsoleCreateUser(t *testing.T) {
	f := newConsoleFixture(t)
	u := f.mustApply(EncodeConsoleCreateUser(ConsoleCreateUser{User: consoleUser("usr_1", " Ann@Example.COM ", "org_a", ConsoleRoleOwner), Now: t0})).(ConsoleUser)
	if u.Email != "ann@example.com" {
		t.Fatalf("email not normalized: %q", u.Email)
	}
	tests := []struct {
		name string
		cmd  ConsoleCreateUser
		want error
	}{
		{"email taken", ConsoleCreateUser{User: consoleUser("usr_2", "ANN@example.com", "org_a", ConsoleRoleMember)}, ErrConsoleUserExists},
		{"id taken", ConsoleCreateUser{User: consoleUser("usr_1", "bob@example.com", "org_a", ConsoleRoleMember)}, ErrConsoleUserExists},
		{"unknown org", ConsoleCreateUser{User: consoleUser("usr_3", "c@example.com", "org_x", ConsoleRoleOwner)}, ErrUnknownOrg},
		{"new org exists", ConsoleCreateUser{User: consoleUser("usr_3", "c@example.com", "org_a", ConsoleRoleOwner),
			NewOrg: &Org{ID: "org_a"}}, ErrOrgExists},
		{"new org mismatch", ConsoleCreateUser{User: consoleUser("usr_3", "c@example.com", "org_a", ConsoleRoleOwner),
			NewOrg: &Org{ID: "org_b"}}, ErrInvalidCommand},
		{"bad role", ConsoleCreateUser{User: consoleUser("usr_3", "c@example.com", "org_a", "admin")}, ErrInvalidCommand},
		{"no password", ConsoleCreateUser{User: ConsoleUser{ID: "usr_3", Email: "c@example.com",
			Orgs: []ConsoleMembership{{OrgID: "org_a", Role: ConsoleRoleOwner}}}}, ErrInvalidCommand},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, f.apply(EncodeConsoleCreateUser(tc.cmd)), tc.want)
		})
	}
	t.Run("with a new org", func(t *testing.T) {
		f.mustApply(EncodeConsoleCreateUser(ConsoleCreateUser{User: consoleUser("usr_4", "d@example.com", "org_d", ConsoleRoleOwner),
			NewOrg: &Org{ID: "org_d", Name: "D", CreatedAt: t0}}))
		if o, ok := f.m.Org("org_d"); !ok || o.Name != "D" {
			t.Fatalf("org not created: %+v", o)
		}
		if got, ok := f.m.ConsoleUserByEmail("D@example.com"); !ok || got.ID != "usr_4" || got.Role("org_d") != ConsoleRoleOwner {
			t.Fatalf("by email: %+v %v", got, ok)
		}
	})
}

func TestConsoleSessions(t *testing.T) {
	f := newConsoleFixture(t)
	f.mustApply(EncodeConsoleCreateUser(ConsoleCreateUser{User: consoleUser("usr_1", "a@example.com", "org_a", ConsoleRoleOwner)}))
	f.mustApply(EncodeCreateOrg(CreateOrg{OrgID: "org_b", Name: "B", CreatedAt: t0}))
	t.Run("member of another org only", func(t *testing.T) {
		wantErr(t, f.apply(EncodeConsoleSignIn(ConsoleSignIn{Session: f.session("h0", "usr_1", "org_b"), Now: f.now})), ErrUnknownConsoleUser)
		wantErr(t, f.apply(EncodeConsoleSignIn(ConsoleSignIn{Session: f.session("h0", "usr_x", "org_a"), Now: f.now})), ErrUnknownConsoleUser)
	})
	f.mustApply(EncodeConsoleSignIn(ConsoleSignIn{Session: f.session("h1", "usr_1", "org_a"), Now: f.now}))
	t.Run("duplicate hash", func(t *testing.T) {
		wantErr(t, f.apply(EncodeConsoleSignIn(ConsoleSignIn{Session: f.session("h1", "usr_1", "org_a"), Now: f.now})), ErrInvalidCommand)
	})
	t.Run("replace ends the old session", func(t *testing.T) {
		f.mustApply(EncodeConsoleSignIn(ConsoleSignIn{Session: f.session("h2", "usr_1", "org_a"), Replace: "h1", Now: f.now}))
		if _, ok := f.m.ConsoleSession("h1", f.now); ok {
			t.Fatal("replaced session still live")
		}
		if s, ok := f.m.ConsoleSession("h2", f.now); !ok || s.OrgID != "org_a" {
			t.Fatalf("new session: %+v %v", s, ok)
		}
	})
	t.Run("expiry", func(t *testing.T) {
		if _, ok := f.m.ConsoleSession("h2", f.now.Add(time.Hour)); ok {
			t.Fatal("expired session accepted")
		}
	})
	t.Run("removing the membership ends its sessions", func(t *testing.T) {
		f.mustApply(EncodeConsoleSetRole(ConsoleSetRole{UserID: "usr_1", OrgID: "org_b", Role: ConsoleRoleMember}))
		f.mustApply(EncodeConsoleSignIn(ConsoleSignIn{Session: f.session("hb", "usr_1", "org_b"), Now: f.now}))
		f.mustApply(EncodeConsoleSetRole(ConsoleSetRole{UserID: "usr_1", OrgID: "org_b"}))
		if _, ok := f.m.ConsoleSession("hb", f.now); ok {
			t.Fatal("session of a removed membership still live")
		}
		if _, ok := f.m.ConsoleSession("h2", f.now); !ok {
			t.Fatal("session of the other org ended")
		}
	})
	t.Run("sign out", func(t *testing.T) {
		if got := f.mustApply(EncodeConsoleSignOut(ConsoleSignOut{Hash: "h2", Now: f.now})); got != true {
			t.Fatalf("sign out: %v", got)
		}
		if got := f.mustApply(EncodeConsoleSignOut(ConsoleSignOut{Hash: "h2", Now: f.now})); got != false {
			t.Fatalf("second sign out: %v", got)
		}
	})
	t.Run("oldest dropped beyond the cap", func(t *testing.T) {
		for i := range consoleMaxSessions + 1 {
			f.now = f.now.Add(time.Second)
			f.mustApply(EncodeConsoleSignIn(ConsoleSignIn{Session: f.session(fmt.Sprintf("c%03d", i), "usr_1", "org_a"), Now: f.now}))
		}
		if _, ok := f.m.ConsoleSession("c000", f.now); ok {
			t.Fatal("oldest session kept")
		}
		if n := len(f.m.st.console.userSessions["usr_1"]); n != consoleMaxSessions {
			t.Fatalf("%d sessions", n)
		}
	})
}

func TestConsoleTouchKeys(t *testing.T) {
	f := newConsoleFixture(t)
	_, k := testKey(t, 1, "org_a")
	f.mustApply(EncodeCreateKey(CreateKey{NewKey: k}))
	later := t0.Add(time.Hour)
	f.mustApply(EncodeConsoleTouchKeys(ConsoleTouchKeys{Uses: []ConsoleKeyUse{{KeyID: k.KeyID, At: later}, {KeyID: "key_unknown", At: later}}}))
	f.mustApply(EncodeConsoleTouchKeys(ConsoleTouchKeys{Uses: []ConsoleKeyUse{{KeyID: k.KeyID, At: t0}}}))
	if got, ok := f.m.ConsoleKeyLastUsed(k.KeyID); !ok || !got.Equal(later) {
		t.Fatalf("last used %v %v, want %v", got, ok, later)
	}
	if _, ok := f.m.ConsoleKeyLastUsed("key_unknown"); ok {
		t.Fatal("unknown key recorded")
	}
}

func TestConsoleInvites(t *testing.T) {
	f := newConsoleFixture(t)
	f.mustApply(EncodeConsoleCreateUser(ConsoleCreateUser{User: consoleUser("usr_1", "a@example.com", "org_a", ConsoleRoleOwner)}))
	f.mustApply(EncodeCreateOrg(CreateOrg{OrgID: "org_b", Name: "B", CreatedAt: t0}))
	f.mustApply(EncodeConsoleCreateUser(ConsoleCreateUser{User: consoleUser("usr_2", "b@example.com", "org_b", ConsoleRoleOwner)}))
	f.mustApply(EncodeConsoleCreateUser(ConsoleCreateUser{User: consoleUser("usr_3", "c@example.com", "org_b", ConsoleRoleMember)}))
	inv := ConsoleInvite{ID: "inv_1", Hash: "ih1", Email: "B@example.com", RoomID: "room_1", Scope: "read", OrgID: "org_a",
		InvitedBy: "usr_1", CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour)}
	f.mustApply(EncodeConsoleInviteCreate(ConsoleInviteCreate{Invite: inv, Now: t0}))
	wantErr(t, f.apply(EncodeConsoleInviteCreate(ConsoleInviteCreate{Invite: inv, Now: t0})), ErrInvalidCommand)
	if got := f.m.ConsoleRoomInvites("room_1", t0); len(got) != 1 || got[0].Email != "b@example.com" {
		t.Fatalf("pending: %+v", got)
	}
	t.Run("cancel by another org refused", func(t *testing.T) {
		wantErr(t, f.apply(EncodeConsoleCancelInvite(ConsoleCancelInvite{ID: "inv_1", OrgID: "org_b", Now: t0})), ErrConsoleInvite)
	})
	t.Run("accept once", func(t *testing.T) {
		got := f.mustApply(EncodeConsoleAcceptInvite(ConsoleAcceptInvite{Hash: "ih1", UserID: "usr_2", Now: t0})).(ConsoleInvite)
		if got.AcceptedBy != "usr_2" {
			t.Fatalf("accepted by %q", got.AcceptedBy)
		}
		f.mustApply(EncodeConsoleAcceptInvite(ConsoleAcceptInvite{Hash: "ih1", UserID: "usr_2", Now: t0}))
		wantErr(t, f.apply(EncodeConsoleAcceptInvite(ConsoleAcceptInvite{Hash: "ih1", UserID: "usr_3", Now: t0})), ErrConsoleInvite)
		if got := f.m.ConsoleRoomInvites("room_1", t0); len(got) != 0 {
			t.Fatalf("accepted invitation still pending: %+v", got)
		}
	})
	t.Run("expired or cancelled", func(t *testing.T) {
		inv2 := inv
		inv2.ID, inv2.Hash = "inv_2", "ih2"
		f.mustApply(EncodeConsoleInviteCreate(ConsoleInviteCreate{Invite: inv2, Now: t0}))
		wantErr(t, f.apply(EncodeConsoleAcceptInvite(ConsoleAcceptInvite{Hash: "ih2", UserID: "usr_2", Now: t0.Add(25 * time.Hour)})), ErrConsoleInvite)
		inv3 := inv
		inv3.ID, inv3.Hash = "inv_3", "ih3"
		f.mustApply(EncodeConsoleInviteCreate(ConsoleInviteCreate{Invite: inv3, Now: t0}))
		f.mustApply(EncodeConsoleCancelInvite(ConsoleCancelInvite{ID: "inv_3", OrgID: "org_a", Now: t0}))
		wantErr(t, f.apply(EncodeConsoleAcceptInvite(ConsoleAcceptInvite{Hash: "ih3", UserID: "usr_2", Now: t0})), ErrConsoleInvite)
		wantErr(t, f.apply(EncodeConsoleAcceptInvite(ConsoleAcceptInvite{Hash: "nope", UserID: "usr_2", Now: t0})), ErrConsoleInvite)
	})
	t.Run("swept long after expiry", func(t *testing.T) {
		late := t0.Add(24*time.Hour + consoleInviteKeep + time.Hour)
		f.mustApply(EncodeConsoleSignOut(ConsoleSignOut{Hash: "none", Now: late}))
		if _, ok := f.m.ConsoleInviteByHash("ih1"); ok {
			t.Fatal("old invitation kept")
		}
	})
}

func TestConsoleSnapshotRoundTrip(t *testing.T) {
	f := newConsoleFixture(t)
	_, k := testKey(t, 1, "org_a")
	f.mustApply(EncodeCreateKey(CreateKey{NewKey: k}))
	f.mustApply(EncodeConsoleCreateUser(ConsoleCreateUser{User: consoleUser("usr_1", "a@example.com", "org_a", ConsoleRoleOwner), Now: t0}))
	f.mustApply(EncodeConsoleSignIn(ConsoleSignIn{Session: f.session("h1", "usr_1", "org_a"), Now: t0}))
	f.mustApply(EncodeConsoleTouchKeys(ConsoleTouchKeys{Uses: []ConsoleKeyUse{{KeyID: k.KeyID, At: t0}}}))
	f.mustApply(EncodeConsoleInviteCreate(ConsoleInviteCreate{Invite: ConsoleInvite{ID: "inv_1", Hash: "ih1", Email: "b@example.com",
		RoomID: "room_1", Scope: "read", OrgID: "org_a", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}, Now: t0}))
	snap := snapshotBytes(t, f.m)
	r := restored(t, snap)
	if again := snapshotBytes(t, r); !bytes.Equal(snap, again) {
		t.Fatalf("snapshot changed across restore:\n%s\n%s", snap, again)
	}
	if _, ok := r.ConsoleSession("h1", t0); !ok {
		t.Fatal("session lost")
	}
	if _, ok := r.ConsoleUserByEmail("a@example.com"); !ok {
		t.Fatal("user lost")
	}
	if _, ok := r.ConsoleInviteByHash("ih1"); !ok {
		t.Fatal("invitation lost")
	}
	if _, ok := r.ConsoleKeyLastUsed(k.KeyID); !ok {
		t.Fatal("key use lost")
	}
	t.Run("empty console state is omitted", func(t *testing.T) {
		if bytes.Contains(snapshotBytes(t, NewMeta()), []byte(`"console"`)) {
			t.Fatal("empty console state in snapshot")
		}
	})
}
