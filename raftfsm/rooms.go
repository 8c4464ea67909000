package raftfsm

import (
	"fmt"
	"sort"
)

// RoomOp is the operation of a RoomCmd.
type RoomOp uint8

// Room operations. Who may run each (owner-only routes) is the router's
// check; apply checks what only the state can tell.
const (
	RoomCreate RoomOp = iota + 1
	RoomInvite
	RoomJoin
	RoomUpdateMember
	RoomRevoke
	RoomArchive
)

// Membership scopes (interface §2.10).
const (
	ScopeRead      = "read"
	ScopeReadWrite = "read_write"
)

// RoomCmd changes a room. The room is a tenant of its own: its record,
// members, invites and atoms live in the room's group.
type RoomCmd struct {
	Op        RoomOp
	RoomID    string
	At        int64  // unix microseconds: now, for expiry decisions
	Name      string // create
	Org       string // create: owner; join, update, revoke: the member
	Code      string // invite, join
	Scope     string // invite; update when SetScope
	MaxUses   int    // invite
	ExpiresAt int64  // invite expiry; update: member expiry when SetExpiry (0 = none)
	SetScope  bool
	SetExpiry bool
	// Rules is the version of the room rules the command was proposed
	// under (RoomRules when this binary encoded it; 0 for a command in a
	// log written before the field). Apply follows a rule only for
	// commands proposed under it, so a log tail replayed by a newer binary
	// resolves as it did when it was applied first.
	Rules uint8
}

// RoomRules is the version of the room rules this binary proposes under:
//
//	1: only an active membership changes scope or expiry (2026-12-07).
//
// A rule that changes what apply decides for the same command takes the
// next version and is followed for commands of that version on.
const RoomRules = 1

// Room is a room record.
type Room struct {
	ID        string
	Name      string
	Owner     string
	Archived  bool
	CreatedAt int64
	members   map[string]*Member
	invites   map[string]*Invite
}

// Member is one org's membership of a room.
type Member struct {
	Org       string
	Scope     string
	Revoked   bool
	ExpiresAt int64 // 0: no expiry
	JoinedAt  int64
	// RevokedAt is when the owner revoked the membership (0 while never
	// revoked): a code minted before it does not restore access.
	RevokedAt int64
}

// endedAt is when an inactive membership ended: its revocation, else its
// expiry. A revocation recorded before RevokedAt was (a snapshot of an
// older version) ended no earlier than the join.
func (m *Member) endedAt() int64 {
	if m.Revoked {
		return max(m.RevokedAt, m.JoinedAt)
	}
	return m.ExpiresAt
}

// Active reports whether the membership grants access at now.
func (m *Member) Active(now int64) bool {
	return !m.Revoked && (m.ExpiresAt == 0 || now < m.ExpiresAt)
}

// Status is active, expired or revoked at now.
func (m *Member) Status(now int64) string {
	switch {
	case m.Revoked:
		return "revoked"
	case !m.Active(now):
		return "expired"
	}
	return "active"
}

// Invite is a share code.
type Invite struct {
	Code      string
	Scope     string
	MaxUses   int
	Uses      int
	ExpiresAt int64
	CreatedAt int64
}

func (i *Invite) outstanding(now int64) bool { return i.Uses < i.MaxUses && now < i.ExpiresAt }

// RoomResult is the apply result of a RoomCmd.
type RoomResult struct {
	Room   Room
	Member *Member
	Invite *Invite
	Err    *ApplyError
}

// Encode returns the command bytes of c.
func (c *RoomCmd) Encode() []byte {
	e := enc{}
	e.u8(cmdRoom)
	e.u8(uint8(c.Op))
	e.str(c.RoomID)
	e.varint(c.At)
	e.str(c.Name)
	e.str(c.Org)
	e.str(c.Code)
	e.str(c.Scope)
	e.varint(int64(c.MaxUses))
	e.varint(c.ExpiresAt)
	e.bool(c.SetScope)
	e.bool(c.SetExpiry)
	e.u8(RoomRules) // trailing: a binary that predates it ignores it
	return e.b
}

func decodeRoom(d *dec) *RoomCmd {
	c := &RoomCmd{Op: RoomOp(d.u8()), RoomID: d.str(), At: d.varint(), Name: d.str(), Org: d.str(),
		Code: d.str(), Scope: d.str(), MaxUses: int(d.varint()), ExpiresAt: d.varint(),
		SetScope: d.bool(), SetExpiry: d.bool()}
	if len(d.b) > 0 { // written from RoomRules 1 on
		c.Rules = d.u8()
	}
	return c
}

func roomErr(kind error, msg string) *RoomResult {
	return &RoomResult{Err: &ApplyError{Kind: kind, Message: msg}}
}

func (f *FSM) applyRoom(c *RoomCmd) *RoomResult {
	if c.Op == RoomCreate {
		t := f.tenantFor(c.RoomID)
		if t.room != nil {
			return roomErr(ErrConflict, "Room already exists")
		}
		t.room = &Room{ID: c.RoomID, Name: c.Name, Owner: c.Org, CreatedAt: c.At,
			members: map[string]*Member{c.Org: {Org: c.Org, Scope: ScopeReadWrite, JoinedAt: c.At}},
			invites: map[string]*Invite{}}
		f.memberOf[c.Org] = append(f.memberOf[c.Org], t)
		return &RoomResult{Room: t.room.copy(), Member: t.room.members[c.Org].copy()}
	}
	t := f.tenants[c.RoomID]
	if t == nil || t.room == nil {
		return roomErr(ErrNotFound, "Room not found")
	}
	r := t.room
	switch c.Op {
	case RoomInvite:
		if r.Archived {
			return roomErr(ErrForbidden, "Room is archived")
		}
		inv := &Invite{Code: c.Code, Scope: c.Scope, MaxUses: c.MaxUses, ExpiresAt: c.ExpiresAt, CreatedAt: c.At}
		r.invites[c.Code] = inv
		r.pruneInvites(c.At)
		return &RoomResult{Room: r.copy(), Invite: inv.copy()}
	case RoomJoin:
		_, was := r.members[c.Org]
		res := r.join(c)
		if _, is := r.members[c.Org]; is && !was {
			f.memberOf[c.Org] = append(f.memberOf[c.Org], t)
		}
		return res
	case RoomUpdateMember, RoomRevoke:
		return r.changeMember(c)
	case RoomArchive:
		r.Archived = true
		return &RoomResult{Room: r.copy()}
	}
	panic(fmt.Sprintf("raftfsm: unknown room op %d", c.Op))
}

// pruneInvitesFrom is the number of invites a room holds before minting
// drops the used-up and expired ones (pruneInvites).
const pruneInvitesFrom = 64

// pruneInvites drops the invites no longer outstanding at now (used up or
// expired: a join refuses them as it refuses a code never minted, and no
// listing shows them) whenever the room's count of invites reaches a power
// of two from pruneInvitesFrom on. A room whose owner mints codes for ever
// then holds at most pruneInvitesFrom invites or twice the most it has had
// outstanding (the threshold doubles only when a prune leaves every invite
// outstanding), at O(1) a mint amortised; before, every code ever minted
// stayed in memory and in every snapshot. It depends on the room's state and the command's time alone,
// so every replica, restored or not, prunes alike.
func (r *Room) pruneInvites(now int64) {
	n := len(r.invites)
	if n < pruneInvitesFrom || n&(n-1) != 0 {
		return
	}
	for code, inv := range r.invites {
		if !inv.outstanding(now) {
			delete(r.invites, code)
		}
	}
}

func (r *Room) join(c *RoomCmd) *RoomResult {
	inv := r.invites[c.Code]
	if inv == nil || !inv.outstanding(c.At) {
		return roomErr(ErrNotFound, "Invite not found")
	}
	if r.Archived {
		return roomErr(ErrForbidden, "Room is archived")
	}
	// The owner and an active member redeem without effect: the code is not
	// used up and the membership keeps the scope and expiry the owner set
	// (interface §3.2: redemption moves only a non-member, or a revoked or
	// expired one, to active; changes to an active member are the owner's).
	m := r.members[c.Org]
	if c.Org == r.Owner || (m != nil && m.Active(c.At)) {
		return &RoomResult{Room: r.copy(), Member: m.copy(), Invite: inv.copy()}
	}
	// A revoked or expired member comes back by a re-invite (§3.2): a code
	// minted after the membership ended. One minted before, perhaps the
	// code they joined with, let them undo the owner's revocation.
	if m != nil && inv.CreatedAt <= m.endedAt() {
		return roomErr(ErrForbidden, "Not an active member of this room")
	}
	inv.Uses++
	m = &Member{Org: c.Org, JoinedAt: c.At, Scope: inv.Scope}
	r.members[c.Org] = m
	return &RoomResult{Room: r.copy(), Member: m.copy(), Invite: inv.copy()}
}

func (r *Room) changeMember(c *RoomCmd) *RoomResult {
	m := r.members[c.Org]
	if m == nil {
		return roomErr(ErrNotFound, "Member not found")
	}
	if c.Org == r.Owner {
		return roomErr(ErrForbidden, "The room owner's membership cannot be changed or revoked")
	}
	if c.Op == RoomRevoke {
		if !m.Revoked {
			m.Revoked, m.RevokedAt = true, c.At
		}
		return &RoomResult{Room: r.copy(), Member: m.copy()}
	}
	if c.Rules >= 1 && !m.Active(c.At) {
		// §3.2 changes the scope or expiry of an active member only; an
		// expired one given no expiry was active again without a re-invite.
		return roomErr(ErrForbidden, "Membership is not active; a new invite restores access")
	}
	if c.SetScope {
		m.Scope = c.Scope
	}
	if c.SetExpiry {
		m.ExpiresAt = c.ExpiresAt
	}
	return &RoomResult{Room: r.copy(), Member: m.copy()}
}

func (r *Room) copy() Room {
	return Room{ID: r.ID, Name: r.Name, Owner: r.Owner, Archived: r.Archived, CreatedAt: r.CreatedAt}
}

func (m *Member) copy() *Member { x := *m; return &x }
func (i *Invite) copy() *Invite { x := *i; return &x }

// RoomView is what a data-path or room route needs to decide access.
type RoomView struct {
	Room   Room
	Member *Member // nil: never a member
}

// Room returns the room and the caller's membership.
func (f *FSM) Room(roomID, org string) (RoomView, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[roomID]
	if t == nil || t.room == nil {
		return RoomView{}, false
	}
	v := RoomView{Room: t.room.copy()}
	if m := t.room.members[org]; m != nil {
		v.Member = m.copy()
	}
	return v, true
}

// InRoom reports whether id names an atom that lives in a room of this
// group that org owns or holds (or held) a membership of. Rooms org was
// never in are not looked at: to an outsider a room atom's ID is as
// unknown as any other.
func (f *FSM) InRoom(org string, id ID) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, t := range f.memberOf[org] {
		if t.atoms[id] != nil {
			return true
		}
	}
	return false
}

// RoomsOf lists the rooms of this group where org is the owner or holds a
// membership that is active at now, sorted by creation.
func (f *FSM) RoomsOf(org string, now int64) []RoomView {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []RoomView
	for _, t := range f.memberOf[org] {
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

// Members lists a room's memberships, owner first, then by join time.
func (f *FSM) Members(roomID string) []Member {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[roomID]
	if t == nil || t.room == nil {
		return nil
	}
	return t.room.sortedMembers()
}

func (r *Room) sortedMembers() []Member {
	out := make([]Member, 0, len(r.members))
	for _, m := range r.members {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Org == r.Owner) != (out[j].Org == r.Owner) {
			return out[i].Org == r.Owner
		}
		if out[i].JoinedAt != out[j].JoinedAt {
			return out[i].JoinedAt < out[j].JoinedAt
		}
		return out[i].Org < out[j].Org
	})
	return out
}

// InviteOutstanding reports whether code is an outstanding invite of the
// room at now: a join with any other code is refused in apply anyway.
func (f *FSM) InviteOutstanding(roomID, code string, now int64) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[roomID]
	if t == nil || t.room == nil {
		return false
	}
	inv := t.room.invites[code]
	return inv != nil && inv.outstanding(now)
}

// Invites lists a room's outstanding invites at now, by creation.
func (f *FSM) Invites(roomID string, now int64) []Invite {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[roomID]
	if t == nil || t.room == nil {
		return nil
	}
	out := []Invite{}
	for _, inv := range t.room.sortedInvites() {
		if inv.outstanding(now) {
			out = append(out, *inv)
		}
	}
	return out
}

func (r *Room) sortedInvites() []*Invite {
	out := make([]*Invite, 0, len(r.invites))
	for _, inv := range r.invites {
		out = append(out, inv)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt < out[j].CreatedAt
		}
		return out[i].Code < out[j].Code
	})
	return out
}

func (e *enc) room(r *Room) {
	if r == nil {
		e.u8(0)
		return
	}
	e.u8(2) // 1: members without RevokedAt
	e.str(r.ID)
	e.str(r.Name)
	e.str(r.Owner)
	e.bool(r.Archived)
	e.varint(r.CreatedAt)
	members := r.sortedMembers()
	e.uvarint(uint64(len(members)))
	for _, m := range members {
		e.str(m.Org)
		e.str(m.Scope)
		e.bool(m.Revoked)
		e.varint(m.ExpiresAt)
		e.varint(m.JoinedAt)
		e.varint(m.RevokedAt)
	}
	invites := r.sortedInvites()
	e.uvarint(uint64(len(invites)))
	for _, i := range invites {
		e.str(i.Code)
		e.str(i.Scope)
		e.varint(int64(i.MaxUses))
		e.varint(int64(i.Uses))
		e.varint(i.ExpiresAt)
		e.varint(i.CreatedAt)
	}
}

func (d *dec) room() *Room {
	format := d.u8()
	if format == 0 {
		return nil
	}
	r := &Room{ID: d.str(), Name: d.str(), Owner: d.str(), Archived: d.bool(), CreatedAt: d.varint(),
		members: map[string]*Member{}, invites: map[string]*Invite{}}
	n := d.count(1)
	for i := 0; i < n && d.err == nil; i++ {
		m := &Member{Org: d.str(), Scope: d.str(), Revoked: d.bool(), ExpiresAt: d.varint(), JoinedAt: d.varint()}
		if format >= 2 {
			m.RevokedAt = d.varint()
		}
		r.members[m.Org] = m
	}
	n = d.count(1)
	for i := 0; i < n && d.err == nil; i++ {
		inv := &Invite{Code: d.str(), Scope: d.str(), MaxUses: int(d.varint()), Uses: int(d.varint()),
			ExpiresAt: d.varint(), CreatedAt: d.varint()}
		r.invites[inv.Code] = inv
	}
	return r
}
