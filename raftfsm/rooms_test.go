package raftfsm

import (
	"errors"
	"testing"
)

// TestRoomRejoinNeedsReinvite: a member revoked (or expired) comes back only
// by a code minted after the membership ended (interface §3.2 "Re-invite");
// the outstanding code it joined with used to undo the revocation. The
// revocation's time survives a snapshot.
func TestRoomRejoinNeedsReinvite(t *testing.T) {
	f := New(testDim)
	apply := func(c RoomCmd) *RoomResult {
		t.Helper()
		return f.Apply(1, c.Encode()).(*RoomResult)
	}
	const room, owner, bob = "room_1", "org_owner", "org_bob"
	apply(RoomCmd{Op: RoomCreate, RoomID: room, Org: owner, Name: "r", At: 10})
	apply(RoomCmd{Op: RoomInvite, RoomID: room, Code: "old", Scope: ScopeReadWrite, MaxUses: 5, ExpiresAt: 1e9, At: 20})
	if res := apply(RoomCmd{Op: RoomJoin, RoomID: room, Code: "old", Org: bob, At: 30}); res.Err != nil {
		t.Fatalf("join: %v", res.Err)
	}
	// Minted after the join, before the revocation: only the revocation's
	// time (not the join's) refuses it after a restore.
	apply(RoomCmd{Op: RoomInvite, RoomID: room, Code: "mid", Scope: ScopeReadWrite, MaxUses: 5, ExpiresAt: 1e9, At: 35})
	apply(RoomCmd{Op: RoomRevoke, RoomID: room, Org: bob, At: 40})
	g := restored(t, snapshotBytes(t, f), f.Dim())
	if f.StateHash() != g.StateHash() {
		t.Fatal("restored state hashes differently")
	}
	for _, fsm := range []*FSM{f, g} {
		for _, code := range []string{"old", "mid"} {
			res := fsm.Apply(2, (&RoomCmd{Op: RoomJoin, RoomID: room, Code: code, Org: bob, At: 50}).Encode()).(*RoomResult)
			if res.Err == nil || !errors.Is(res.Err, ErrForbidden) {
				t.Fatalf("rejoin with code %s, minted before the revocation: %+v", code, res)
			}
		}
	}
	apply(RoomCmd{Op: RoomInvite, RoomID: room, Code: "new", Scope: ScopeRead, MaxUses: 1, ExpiresAt: 1e9, At: 60})
	res := apply(RoomCmd{Op: RoomJoin, RoomID: room, Code: "new", Org: bob, At: 70})
	if res.Err != nil || res.Member == nil || !res.Member.Active(70) || res.Member.Scope != ScopeRead {
		t.Fatalf("rejoin with a re-invite: %+v", res)
	}
	apply(RoomCmd{Op: RoomArchive, RoomID: room, At: 80})
	if res := apply(RoomCmd{Op: RoomInvite, RoomID: room, Code: "late", Scope: ScopeRead, MaxUses: 1, ExpiresAt: 1e9, At: 90}); !errors.Is(res.Err, ErrForbidden) {
		t.Fatalf("invite into an archived room: %+v", res)
	}
}
