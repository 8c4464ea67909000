package raftfsm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
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

// TestRoomRulesReplay: a change of an expired member is refused when
// proposed under RoomRules 1, and replays as it was applied first when it
// was written before them (no rules byte): a log tail replayed by a newer
// binary must not undo what the older one answered.
func TestRoomRulesReplay(t *testing.T) {
	const room, owner, bob = "room_1", "org_owner", "org_bob"
	revive := &RoomCmd{Op: RoomUpdateMember, RoomID: room, Org: bob, SetExpiry: true, At: 60}
	current := revive.Encode()
	old := current[:len(current)-1] // as a binary before the field encoded it
	if c := decodeCommand(old).(*RoomCmd); c.Rules != 0 || c.Org != bob || !c.SetExpiry {
		t.Fatalf("old command decoded as %+v", c)
	}
	for _, tc := range []struct {
		cmd    []byte
		active bool
	}{{current, false}, {old, true}} {
		f := New(testDim)
		apply := func(c RoomCmd) *RoomResult { return f.Apply(1, c.Encode()).(*RoomResult) }
		apply(RoomCmd{Op: RoomCreate, RoomID: room, Org: owner, Name: "r", At: 10})
		apply(RoomCmd{Op: RoomInvite, RoomID: room, Code: "c", Scope: ScopeRead, MaxUses: 1, ExpiresAt: 1e9, At: 20})
		apply(RoomCmd{Op: RoomJoin, RoomID: room, Code: "c", Org: bob, At: 30})
		apply(RoomCmd{Op: RoomUpdateMember, RoomID: room, Org: bob, SetExpiry: true, ExpiresAt: 50, At: 40})
		res := f.Apply(2, tc.cmd).(*RoomResult)
		v, _ := f.Room(room, bob)
		if got := v.Member.Active(70); got != tc.active || (res.Err == nil) != tc.active {
			t.Errorf("rules byte %v: active %v (err %v), want %v", len(tc.cmd) == len(current), got, res.Err, tc.active)
		}
	}
}

// TestRoomInvitesPruned: codes used up or expired leave the room's state
// as minting goes on (they were kept for ever), outstanding ones stay and
// still join, pruned ones are refused as unknown, and a replica restored
// from a snapshot between mints keeps hashing as the original.
func TestRoomInvitesPruned(t *testing.T) {
	f := New(testDim)
	var g *FSM
	apply := func(c RoomCmd) *RoomResult {
		t.Helper()
		res := f.Apply(1, c.Encode()).(*RoomResult)
		if g != nil {
			g.Apply(1, c.Encode())
		}
		return res
	}
	const room, owner = "room_1", "org_owner"
	apply(RoomCmd{Op: RoomCreate, RoomID: room, Org: owner, Name: "r", At: 10})
	at := int64(100)
	mint := func(code string, uses int, expires int64) {
		t.Helper()
		at++
		if res := apply(RoomCmd{Op: RoomInvite, RoomID: room, Code: code, Scope: ScopeRead, MaxUses: uses, ExpiresAt: expires, At: at}); res.Err != nil {
			t.Fatalf("mint %s: %v", code, res.Err)
		}
	}
	join := func(code, org string) *RoomResult {
		at++
		return apply(RoomCmd{Op: RoomJoin, RoomID: room, Code: code, Org: org, At: at})
	}
	// 20 codes used up, 20 that expire at 500, 5 outstanding for good.
	for i := range 20 {
		mint(fmt.Sprintf("used%d", i), 1, 1e9)
		if res := join(fmt.Sprintf("used%d", i), fmt.Sprintf("org_u%d", i)); res.Err != nil {
			t.Fatalf("join: %v", res.Err)
		}
		mint(fmt.Sprintf("soon%d", i), 1, 500)
	}
	for i := range 5 {
		mint(fmt.Sprintf("keep%d", i), 1, 1e9)
	}
	g = restored(t, snapshotBytes(t, f), f.Dim())
	at = 1000 // the "soon" codes have expired
	invites := f.tenants[room].room.invites
	more := 0
	for prev := len(invites); len(invites) >= prev; more++ {
		if more > pruneInvitesFrom {
			t.Fatalf("%d invites after %d more mints: never pruned", len(invites), more)
		}
		prev = len(invites) + 1
		mint(fmt.Sprintf("more%d", more), 1, 1e9)
	}
	// Pruned at the 64th: 45 + 19 minted, 40 of them no longer outstanding.
	for code, inv := range invites {
		if !inv.outstanding(at) {
			t.Errorf("invite %s kept: %+v", code, inv)
		}
	}
	if _, ok := invites["keep0"]; !ok || more != 19 || len(invites) != 5+more {
		t.Fatalf("%d invites kept after %d more mints (keep0 among them: %v), want the %d outstanding", len(invites), more, ok, 5+more)
	}
	if f.StateHash() != g.StateHash() {
		t.Fatal("the restored replica hashes differently after pruning")
	}
	if res := join("used3", "org_x"); !errors.Is(res.Err, ErrNotFound) {
		t.Fatalf("join with a pruned code: %+v", res)
	}
	if res := join("keep4", "org_y"); res.Err != nil {
		t.Fatalf("join with an outstanding code: %v", res.Err)
	}
}

// scanRoomsOf is RoomsOf as it was: a scan of every tenant of the group.
func scanRoomsOf(f *FSM, org string, now int64) []RoomView {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []RoomView
	for _, t := range f.tenants {
		if t.room == nil {
			continue
		}
		if m := t.room.members[org]; m != nil && m.Active(now) {
			out = append(out, RoomView{Room: t.room.copy(), Member: m.copy()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Room.CreatedAt != out[j].Room.CreatedAt {
			return out[i].Room.CreatedAt < out[j].Room.CreatedAt
		}
		return out[i].Room.ID < out[j].Room.ID
	})
	return out
}

// TestRoomsOfMatchesScan applies random room commands (creations with
// equal times, invites, joins and rejoins, revocations, expiries, archives,
// a reset) and wants every org's rooms at several times to be those of a
// scan of every tenant, on the state and on one restored from a snapshot
// taken at a random point and fed the rest of the commands.
func TestRoomsOfMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 4))
	orgs := []string{"org_a", "org_b", "org_c", "org_d", "org_e"}
	f := New(4)
	var g *FSM
	var rooms []string
	check := func(step int) {
		for _, fsm := range []*FSM{f, g} {
			if fsm == nil {
				continue
			}
			for _, org := range append(orgs, "org_none") {
				for _, now := range []int64{0, int64(step) / 2, int64(step), 1 << 40} {
					got, want := fsm.RoomsOf(org, now), scanRoomsOf(fsm, org, now)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("step %d: RoomsOf(%s, %d) = %d rooms, want %d", step, org, now, len(got), len(want))
					}
				}
			}
		}
	}
	for step := range 3000 {
		var c RoomCmd
		at := int64(step / 3) // equal creation times
		room := fmt.Sprintf("room_%03d", rng.IntN(200))
		if len(rooms) > 0 && rng.IntN(4) != 0 {
			room = rooms[rng.IntN(len(rooms))]
		}
		org := orgs[rng.IntN(len(orgs))]
		code := fmt.Sprintf("code%d", rng.IntN(5))
		switch op := RoomOp(1 + rng.IntN(6)); op {
		case RoomCreate:
			c = RoomCmd{Op: op, RoomID: room, Name: room, Org: org}
			rooms = append(rooms, room)
		case RoomInvite:
			c = RoomCmd{Op: op, RoomID: room, Code: code, Scope: ScopeRead, MaxUses: 1 + rng.IntN(3), ExpiresAt: at + int64(rng.IntN(500))}
		case RoomJoin:
			c = RoomCmd{Op: op, RoomID: room, Code: code, Org: org}
		case RoomUpdateMember:
			c = RoomCmd{Op: op, RoomID: room, Org: org, SetExpiry: true, ExpiresAt: at + int64(rng.IntN(500)) - 100}
		case RoomRevoke:
			c = RoomCmd{Op: op, RoomID: room, Org: org}
		case RoomArchive:
			if rng.IntN(4) != 0 {
				continue
			}
			c = RoomCmd{Op: op, RoomID: room}
		}
		c.At = at
		for _, fsm := range []*FSM{f, g} {
			if fsm != nil {
				fsm.Apply(uint64(step), c.Encode())
			}
		}
		if step == 1000 {
			g = restored(t, snapshotBytes(t, f), f.Dim())
		}
		if step == 2000 {
			for _, fsm := range []*FSM{f, g} {
				fsm.Apply(uint64(step), []byte{cmdReset})
			}
			rooms = nil
		}
		if step%97 == 0 {
			check(step)
		}
	}
	check(3000)
	if len(f.RoomsOf("org_a", 0)) == 0 {
		t.Fatal("org_a has no rooms: the test checks nothing")
	}
}
