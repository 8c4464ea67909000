package cluster

import (
	"cmp"
	"encoding/gob"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Console state of the meta group: the people who sign in to the web
// console (router/console), their org memberships, their sessions, the
// e-mail invitations to rooms, and when each API key was last used. It
// lives in the meta group so that any node serves any session.
//
// Invariants:
//   - Raw session and invitation tokens never enter the log: commands carry
//     the hex SHA-256 of each, computed by the router. Passwords arrive
//     hashed (argon2id or bcrypt, as a PHC/modular-crypt string).
//   - An e-mail address names at most one user (compared lowercased).
//   - A session belongs to one user and one org the user is a member of;
//     removing the membership ends the user's sessions in that org.
//   - An invitation is accepted once, by one user; the same user may accept
//     it again (a retry after a failed join), nobody else may.
//   - Every command carries its time (Now); expiry and pruning compare
//     against it only, so replicas stay identical.

// Command types of the console commands (the 40-49 range of meta commands).
const (
	cmdConsoleCreateUser   byte = 40
	cmdConsoleSetRole      byte = 41
	cmdConsoleSignIn       byte = 42
	cmdConsoleSignOut      byte = 43
	cmdConsoleTouchKeys    byte = 44
	cmdConsoleInvite       byte = 45
	cmdConsoleAcceptInvite byte = 46
	cmdConsoleCancelInvite byte = 47
	cmdConsoleSetPassword  byte = 48
)

// Roles of a user in an org.
const (
	ConsoleRoleOwner  = "owner"
	ConsoleRoleMember = "member"
)

// Bounds of the console state.
const (
	consoleMaxSessions = 50                 // per user; a new one beyond drops the oldest
	consoleInviteKeep  = 7 * 24 * time.Hour // an invitation is kept this long past its expiry
	consoleSweepEvery  = time.Minute
	consoleMaxKeyUses  = 1000 // key uses in one ConsoleTouchKeys
)

// Errors of the console commands.
var (
	// ErrConsoleUserExists is returned when creating a user whose ID or
	// e-mail address is taken.
	ErrConsoleUserExists = errors.New("cluster: console user already exists")
	// ErrUnknownConsoleUser is returned for a command naming no user, or a
	// user who is not a member of the org it names.
	ErrUnknownConsoleUser = errors.New("cluster: unknown console user")
	// ErrConsoleInvite is an invitation that cannot be accepted or
	// cancelled: unknown, expired, cancelled, or accepted by someone else.
	ErrConsoleInvite = errors.New("cluster: invitation not valid")
)

func init() {
	decoders[cmdConsoleCreateUser] = decodeWith((*metaState).consoleCreateUser)
	decoders[cmdConsoleSetRole] = decodeWith((*metaState).consoleSetRole)
	decoders[cmdConsoleSignIn] = decodeWith((*metaState).consoleSignIn)
	decoders[cmdConsoleSignOut] = decodeWith((*metaState).consoleSignOut)
	decoders[cmdConsoleTouchKeys] = decodeWith((*metaState).consoleTouchKeys)
	decoders[cmdConsoleInvite] = decodeWith((*metaState).consoleInvite)
	decoders[cmdConsoleAcceptInvite] = decodeWith((*metaState).consoleAcceptInvite)
	decoders[cmdConsoleCancelInvite] = decodeWith((*metaState).consoleCancelInvite)
	decoders[cmdConsoleSetPassword] = decodeWith((*metaState).consoleSetPassword)
	sentinels["console_user_exists"] = ErrConsoleUserExists
	sentinels["unknown_console_user"] = ErrUnknownConsoleUser
	sentinels["console_invite"] = ErrConsoleInvite
	for _, v := range []any{ConsoleUser{}, ConsoleSession{}, ConsoleInvite{}} {
		gob.Register(v)
	}
}

// ConsoleMembership is a user's role in one org.
type ConsoleMembership struct {
	OrgID string `json:"org_id"`
	Role  string `json:"role"`
}

// ConsoleUser is a person who signs in to the console.
type ConsoleUser struct {
	ID           string              `json:"id"`
	Email        string              `json:"email"`         // lowercased
	PasswordHash string              `json:"password_hash"` // argon2id PHC string or bcrypt
	Operator     bool                `json:"operator,omitempty"`
	Orgs         []ConsoleMembership `json:"orgs"` // sorted by OrgID
	CreatedAt    time.Time           `json:"created_at"`
}

// Role returns the user's role in org, "" when not a member.
func (u ConsoleUser) Role(org string) string {
	for _, m := range u.Orgs {
		if m.OrgID == org {
			return m.Role
		}
	}
	return ""
}

// ConsoleSession is a signed-in browser, stored by the hash of its token.
type ConsoleSession struct {
	Hash      string    `json:"hash"`
	UserID    string    `json:"user_id"`
	OrgID     string    `json:"org_id"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// ConsoleInvite is an e-mail invitation to a room, stored by the hash of
// the token its link carries.
type ConsoleInvite struct {
	ID         string    `json:"id"`
	Hash       string    `json:"hash"`
	Email      string    `json:"email"`
	RoomID     string    `json:"room_id"`
	Scope      string    `json:"scope"`
	OrgID      string    `json:"org_id"`     // the inviting org (the room owner)
	InvitedBy  string    `json:"invited_by"` // user ID
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	AcceptedBy string    `json:"accepted_by,omitempty"` // user ID
	AcceptedAt time.Time `json:"accepted_at,omitzero"`
	Cancelled  bool      `json:"cancelled,omitempty"`
}

// Pending reports whether the invitation can still be accepted at now.
func (i ConsoleInvite) Pending(now time.Time) bool {
	return i.AcceptedBy == "" && !i.Cancelled && i.ExpiresAt.After(now)
}

// ConsoleCreateUser creates a user with one membership (User.Orgs), and
// the org itself when NewOrg is set (all or nothing). Result: ConsoleUser,
// or ErrConsoleUserExists, ErrUnknownOrg, ErrOrgExists, ErrInvalidCommand.
type ConsoleCreateUser struct {
	User   ConsoleUser `json:"user"`
	NewOrg *Org        `json:"new_org,omitempty"`
	Now    time.Time   `json:"now"`
}

// ConsoleSetRole gives a user a role in an org; an empty Role removes the
// membership and ends the user's sessions in that org. Result:
// ConsoleUser, or ErrUnknownConsoleUser, ErrUnknownOrg, ErrInvalidCommand.
type ConsoleSetRole struct {
	UserID string    `json:"user_id"`
	OrgID  string    `json:"org_id"`
	Role   string    `json:"role"`
	Now    time.Time `json:"now"`
}

// ConsoleSetPassword replaces a user's password hash and ends every
// session of the user and the OAuth grants they made (whoever knew the old
// password is signed out, and so are the clients they let in). Result:
// ConsoleUser, or ErrUnknownConsoleUser, ErrInvalidCommand.
type ConsoleSetPassword struct {
	UserID       string    `json:"user_id"`
	PasswordHash string    `json:"password_hash"`
	Now          time.Time `json:"now"`
}

// EncodeConsoleSetPassword encodes a ConsoleSetPassword command.
func EncodeConsoleSetPassword(c ConsoleSetPassword) []byte {
	return encodeCommand(cmdConsoleSetPassword, c)
}

// ConsoleSignIn stores a session of a member of Session.OrgID and ends the
// session Replace (the browser's previous one) if any. Result:
// ConsoleSession, or ErrUnknownConsoleUser, ErrInvalidCommand.
type ConsoleSignIn struct {
	Session ConsoleSession `json:"session"`
	Replace string         `json:"replace,omitempty"`
	Now     time.Time      `json:"now"`
}

// ConsoleSignOut ends the session with Hash. Result: true when it existed.
type ConsoleSignOut struct {
	Hash string    `json:"hash"`
	Now  time.Time `json:"now"`
}

// ConsoleKeyUse is one API key's latest use.
type ConsoleKeyUse struct {
	KeyID string    `json:"key_id"`
	At    time.Time `json:"at"`
}

// ConsoleTouchKeys records when keys were last used; an earlier time than
// the recorded one changes nothing. Result: nil.
type ConsoleTouchKeys struct {
	Uses []ConsoleKeyUse `json:"uses"`
	Now  time.Time       `json:"now"`
}

// ConsoleInviteCreate stores an invitation. Result: ConsoleInvite, or
// ErrInvalidCommand.
type ConsoleInviteCreate struct {
	Invite ConsoleInvite `json:"invite"`
	Now    time.Time     `json:"now"`
}

// ConsoleAcceptInvite marks the invitation with Hash accepted by UserID.
// Result: ConsoleInvite, or ErrConsoleInvite.
type ConsoleAcceptInvite struct {
	Hash   string    `json:"hash"`
	UserID string    `json:"user_id"`
	Now    time.Time `json:"now"`
}

// ConsoleCancelInvite cancels a pending invitation of OrgID. Result:
// ConsoleInvite, or ErrConsoleInvite.
type ConsoleCancelInvite struct {
	ID    string    `json:"id"`
	OrgID string    `json:"org_id"`
	Now   time.Time `json:"now"`
}

// EncodeConsoleCreateUser encodes a ConsoleCreateUser command.
func EncodeConsoleCreateUser(c ConsoleCreateUser) []byte {
	return encodeCommand(cmdConsoleCreateUser, c)
}

// EncodeConsoleSetRole encodes a ConsoleSetRole command.
func EncodeConsoleSetRole(c ConsoleSetRole) []byte { return encodeCommand(cmdConsoleSetRole, c) }

// EncodeConsoleSignIn encodes a ConsoleSignIn command.
func EncodeConsoleSignIn(c ConsoleSignIn) []byte { return encodeCommand(cmdConsoleSignIn, c) }

// EncodeConsoleSignOut encodes a ConsoleSignOut command.
func EncodeConsoleSignOut(c ConsoleSignOut) []byte { return encodeCommand(cmdConsoleSignOut, c) }

// EncodeConsoleTouchKeys encodes a ConsoleTouchKeys command.
func EncodeConsoleTouchKeys(c ConsoleTouchKeys) []byte { return encodeCommand(cmdConsoleTouchKeys, c) }

// EncodeConsoleInviteCreate encodes a ConsoleInviteCreate command.
func EncodeConsoleInviteCreate(c ConsoleInviteCreate) []byte {
	return encodeCommand(cmdConsoleInvite, c)
}

// EncodeConsoleAcceptInvite encodes a ConsoleAcceptInvite command.
func EncodeConsoleAcceptInvite(c ConsoleAcceptInvite) []byte {
	return encodeCommand(cmdConsoleAcceptInvite, c)
}

// EncodeConsoleCancelInvite encodes a ConsoleCancelInvite command.
func EncodeConsoleCancelInvite(c ConsoleCancelInvite) []byte {
	return encodeCommand(cmdConsoleCancelInvite, c)
}

// NormalizeEmail is how the console compares e-mail addresses.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// consoleState is the console part of metaState. Nil maps are empty.
type consoleState struct {
	users        map[string]ConsoleUser    // by ID
	byEmail      map[string]string         // email -> user ID
	sessions     map[string]ConsoleSession // by token hash
	userSessions map[string][]string       // user ID -> session hashes, sorted
	keyUsed      map[string]time.Time      // key ID -> last use
	invites      map[string]ConsoleInvite  // by ID
	inviteByHash map[string]string         // token hash -> invite ID
	sweptAt      time.Time
}

func (cs *consoleState) init() {
	if cs.users == nil {
		cs.users = map[string]ConsoleUser{}
		cs.byEmail = map[string]string{}
		cs.sessions = map[string]ConsoleSession{}
		cs.userSessions = map[string][]string{}
		cs.keyUsed = map[string]time.Time{}
		cs.invites = map[string]ConsoleInvite{}
		cs.inviteByHash = map[string]string{}
	}
}

func validRole(r string) bool { return r == ConsoleRoleOwner || r == ConsoleRoleMember }

func (st *metaState) consoleCreateUser(c ConsoleCreateUser) any {
	cs := &st.console
	cs.init()
	u := cloneConsoleUser(c.User)
	u.Email = NormalizeEmail(u.Email)
	if u.ID == "" || u.Email == "" || u.PasswordHash == "" || len(u.Orgs) != 1 || !validRole(u.Orgs[0].Role) {
		return fmt.Errorf("cannot create console user: id, email, password hash and one membership required: %w",
			ErrInvalidCommand)
	}
	if _, ok := cs.users[u.ID]; ok {
		return fmt.Errorf("cannot create console user %s: %w", u.ID, ErrConsoleUserExists)
	}
	if _, ok := cs.byEmail[u.Email]; ok {
		return fmt.Errorf("cannot create console user %s: e-mail taken: %w", u.Email, ErrConsoleUserExists)
	}
	org := u.Orgs[0].OrgID
	switch _, exists := st.orgs[org]; {
	case c.NewOrg != nil && c.NewOrg.ID != org:
		return fmt.Errorf("cannot create console user: new org %q is not its org %q: %w", c.NewOrg.ID, org, ErrInvalidCommand)
	case c.NewOrg != nil && exists:
		return fmt.Errorf("cannot create console user: org %s: %w", org, ErrOrgExists)
	case c.NewOrg == nil && !exists:
		return fmt.Errorf("cannot create console user: org %q: %w", org, ErrUnknownOrg)
	}
	if c.NewOrg != nil {
		st.orgs[org] = Org{ID: org, Name: c.NewOrg.Name, CreatedAt: c.NewOrg.CreatedAt.UTC()}
	}
	u.CreatedAt = u.CreatedAt.UTC()
	cs.users[u.ID] = u
	cs.byEmail[u.Email] = u.ID
	return cloneConsoleUser(u)
}

func (st *metaState) consoleSetRole(c ConsoleSetRole) any {
	cs := &st.console
	cs.init()
	u, ok := cs.users[c.UserID]
	switch {
	case !ok:
		return fmt.Errorf("cannot set role of %q: %w", c.UserID, ErrUnknownConsoleUser)
	case c.Role != "" && !validRole(c.Role):
		return fmt.Errorf("cannot set role %q: %w", c.Role, ErrInvalidCommand)
	}
	if _, ok := st.orgs[c.OrgID]; !ok {
		return fmt.Errorf("cannot set role in org %q: %w", c.OrgID, ErrUnknownOrg)
	}
	u = cloneConsoleUser(u)
	u.Orgs = slices.DeleteFunc(u.Orgs, func(m ConsoleMembership) bool { return m.OrgID == c.OrgID })
	if c.Role != "" {
		u.Orgs = append(u.Orgs, ConsoleMembership{OrgID: c.OrgID, Role: c.Role})
		slices.SortFunc(u.Orgs, func(a, b ConsoleMembership) int { return cmp.Compare(a.OrgID, b.OrgID) })
	} else {
		// What the person signed in for in that org ends with the
		// membership: console sessions, and OAuth grants and codes (their
		// refresh tokens kept minting tokens and id_tokens, and a re-added
		// person's old access tokens came back).
		st.oauth.revokeUserGrants(u.ID, c.OrgID)
		for _, h := range slices.Clone(cs.userSessions[u.ID]) {
			if cs.sessions[h].OrgID == c.OrgID {
				cs.dropSession(h)
			}
		}
	}
	cs.users[u.ID] = u
	return cloneConsoleUser(u)
}

func (st *metaState) consoleSetPassword(c ConsoleSetPassword) any {
	cs := &st.console
	cs.init()
	u, ok := cs.users[c.UserID]
	switch {
	case !ok:
		return fmt.Errorf("cannot set the password of %q: %w", c.UserID, ErrUnknownConsoleUser)
	case c.PasswordHash == "":
		return fmt.Errorf("cannot set an empty password hash: %w", ErrInvalidCommand)
	}
	u = cloneConsoleUser(u)
	u.PasswordHash = c.PasswordHash
	for _, h := range slices.Clone(cs.userSessions[u.ID]) {
		cs.dropSession(h)
	}
	for _, m := range u.Orgs { // and what an AI client was let in with
		st.oauth.revokeUserGrants(u.ID, m.OrgID)
	}
	cs.users[u.ID] = u
	return cloneConsoleUser(u)
}

func (st *metaState) consoleSignIn(c ConsoleSignIn) any {
	cs := &st.console
	cs.init()
	cs.sweep(c.Now)
	s := c.Session
	u, ok := cs.users[s.UserID]
	switch {
	case s.Hash == "" || cs.sessions[s.Hash].Hash != "" || !s.ExpiresAt.After(c.Now):
		return fmt.Errorf("cannot sign in: empty, duplicate or expired session: %w", ErrInvalidCommand)
	case !ok || u.Role(s.OrgID) == "":
		return fmt.Errorf("cannot sign in %q to org %q: %w", s.UserID, s.OrgID, ErrUnknownConsoleUser)
	}
	if c.Replace != "" {
		cs.dropSession(c.Replace)
	}
	s.CreatedAt, s.ExpiresAt = s.CreatedAt.UTC(), s.ExpiresAt.UTC()
	cs.sessions[s.Hash] = s
	cs.userSessions[s.UserID] = insertSorted(cs.userSessions[s.UserID], s.Hash)
	if hs := cs.userSessions[s.UserID]; len(hs) > consoleMaxSessions {
		cs.dropSession(cs.oldestSession(hs))
	}
	return s
}

// oldestSession returns the hash of the earliest created session of hs.
func (cs *consoleState) oldestSession(hs []string) string {
	oldest := hs[0]
	for _, h := range hs[1:] {
		a, b := cs.sessions[h], cs.sessions[oldest]
		if cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.Hash, b.Hash)) < 0 {
			oldest = h
		}
	}
	return oldest
}

func (cs *consoleState) dropSession(hash string) bool {
	s, ok := cs.sessions[hash]
	if !ok {
		return false
	}
	delete(cs.sessions, hash)
	hs := cs.userSessions[s.UserID]
	if i, found := slices.BinarySearch(hs, hash); found {
		hs = slices.Delete(hs, i, i+1)
	}
	if len(hs) == 0 {
		delete(cs.userSessions, s.UserID)
	} else {
		cs.userSessions[s.UserID] = hs
	}
	return true
}

func (st *metaState) consoleSignOut(c ConsoleSignOut) any {
	cs := &st.console
	cs.init()
	cs.sweep(c.Now)
	return cs.dropSession(c.Hash)
}

func (st *metaState) consoleTouchKeys(c ConsoleTouchKeys) any {
	cs := &st.console
	cs.init()
	if len(c.Uses) > consoleMaxKeyUses {
		return fmt.Errorf("cannot record key use: %d keys in one command: %w", len(c.Uses), ErrInvalidCommand)
	}
	for _, u := range c.Uses {
		if _, ok := st.keys[u.KeyID]; !ok {
			continue
		}
		if at := u.At.UTC(); at.After(cs.keyUsed[u.KeyID]) {
			cs.keyUsed[u.KeyID] = at
		}
	}
	return nil
}

func (st *metaState) consoleInvite(c ConsoleInviteCreate) any {
	cs := &st.console
	cs.init()
	cs.sweep(c.Now)
	inv := c.Invite
	inv.Email = NormalizeEmail(inv.Email)
	_, dupID := cs.invites[inv.ID]
	_, dupHash := cs.inviteByHash[inv.Hash]
	if inv.ID == "" || inv.Hash == "" || inv.Email == "" || inv.RoomID == "" || inv.OrgID == "" || dupID || dupHash ||
		!inv.ExpiresAt.After(c.Now) {
		return fmt.Errorf("cannot store invitation: empty, duplicate or expired: %w", ErrInvalidCommand)
	}
	inv.CreatedAt, inv.ExpiresAt = inv.CreatedAt.UTC(), inv.ExpiresAt.UTC()
	inv.AcceptedBy, inv.AcceptedAt, inv.Cancelled = "", time.Time{}, false
	cs.invites[inv.ID] = inv
	cs.inviteByHash[inv.Hash] = inv.ID
	return inv
}

func (st *metaState) consoleAcceptInvite(c ConsoleAcceptInvite) any {
	cs := &st.console
	cs.init()
	cs.sweep(c.Now)
	inv, ok := cs.invites[cs.inviteByHash[c.Hash]]
	switch {
	case !ok || c.Hash == "":
		return fmt.Errorf("cannot accept invitation: %w", ErrConsoleInvite)
	case inv.AcceptedBy == c.UserID && c.UserID != "":
		return inv // a retry by the same person
	case !inv.Pending(c.Now):
		return fmt.Errorf("cannot accept invitation %s: accepted, cancelled or expired: %w", inv.ID, ErrConsoleInvite)
	case cs.users[c.UserID].ID == "":
		return fmt.Errorf("cannot accept invitation %s: user %q: %w", inv.ID, c.UserID, ErrUnknownConsoleUser)
	}
	inv.AcceptedBy, inv.AcceptedAt = c.UserID, c.Now.UTC()
	cs.invites[inv.ID] = inv
	return inv
}

func (st *metaState) consoleCancelInvite(c ConsoleCancelInvite) any {
	cs := &st.console
	cs.init()
	cs.sweep(c.Now)
	inv, ok := cs.invites[c.ID]
	if !ok || inv.OrgID != c.OrgID || !inv.Pending(c.Now) {
		return fmt.Errorf("cannot cancel invitation %q: %w", c.ID, ErrConsoleInvite)
	}
	inv.Cancelled = true
	cs.invites[inv.ID] = inv
	return inv
}

// sweep drops expired sessions and long-expired invitations, at most once
// a minute of command time.
func (cs *consoleState) sweep(now time.Time) {
	if now.Sub(cs.sweptAt) < consoleSweepEvery {
		return
	}
	cs.sweptAt = now.UTC()
	for _, h := range slices.Sorted(maps.Keys(cs.sessions)) {
		if !cs.sessions[h].ExpiresAt.After(now) {
			cs.dropSession(h)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(cs.invites)) {
		if inv := cs.invites[id]; inv.ExpiresAt.Add(consoleInviteKeep).Before(now) {
			delete(cs.invites, id)
			delete(cs.inviteByHash, inv.Hash)
		}
	}
}

// ConsoleUser returns a user by ID.
func (m *Meta) ConsoleUser(id string) (ConsoleUser, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	u, ok := m.st.console.users[id]
	return cloneConsoleUser(u), ok
}

// ConsoleUserByEmail returns the user of an e-mail address.
func (m *Meta) ConsoleUserByEmail(email string) (ConsoleUser, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	u, ok := m.st.console.users[m.st.console.byEmail[NormalizeEmail(email)]]
	return cloneConsoleUser(u), ok
}

// ConsoleOrgUsers returns the users of an org, sorted by e-mail.
func (m *Meta) ConsoleOrgUsers(orgID string) []ConsoleUser {
	m.mu.RLock()
	var out []ConsoleUser
	for _, u := range m.st.console.users {
		if u.Role(orgID) != "" {
			out = append(out, cloneConsoleUser(u))
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b ConsoleUser) int { return cmp.Compare(a.Email, b.Email) })
	return out
}

// ConsoleSession returns the session with a token hash, if live at now and
// its user is still a member of its org.
func (m *Meta) ConsoleSession(hash string, now time.Time) (ConsoleSession, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.st.console.sessions[hash]
	if !ok || !s.ExpiresAt.After(now) || m.st.console.users[s.UserID].Role(s.OrgID) == "" {
		return ConsoleSession{}, false
	}
	return s, true
}

// ConsoleKeyLastUsed returns when an API key was last used, as recorded.
func (m *Meta) ConsoleKeyLastUsed(keyID string) (time.Time, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.st.console.keyUsed[keyID]
	return t, ok
}

// ConsoleInviteByHash returns the invitation whose token has this hash.
func (m *Meta) ConsoleInviteByHash(hash string) (ConsoleInvite, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	inv, ok := m.st.console.invites[m.st.console.inviteByHash[hash]]
	return inv, ok && hash != ""
}

// ConsoleRoomInvites returns the invitations to a room pending at now,
// oldest first.
func (m *Meta) ConsoleRoomInvites(roomID string, now time.Time) []ConsoleInvite {
	m.mu.RLock()
	var out []ConsoleInvite
	for _, inv := range m.st.console.invites {
		if inv.RoomID == roomID && inv.Pending(now) {
			out = append(out, inv)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b ConsoleInvite) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

func cloneConsoleUser(u ConsoleUser) ConsoleUser { u.Orgs = slices.Clone(u.Orgs); return u }

// snapConsoleV1 is the console part of a version 1 snapshot, lists sorted
// by ID (sessions and invitations by their key). It is omitted while the
// console state is empty, so snapshots of deployments without console
// users are unchanged.
type snapConsoleV1 struct {
	Users    []ConsoleUser    `json:"users,omitempty"`
	Sessions []ConsoleSession `json:"sessions,omitempty"`
	KeyUsed  []ConsoleKeyUse  `json:"key_used,omitempty"`
	Invites  []ConsoleInvite  `json:"invites,omitempty"`
	SweptAt  time.Time        `json:"swept_at,omitzero"`
}

func (cs *consoleState) snapshot() *snapConsoleV1 {
	if len(cs.users) == 0 && len(cs.keyUsed) == 0 && len(cs.invites) == 0 && cs.sweptAt.IsZero() {
		return nil
	}
	s := &snapConsoleV1{SweptAt: cs.sweptAt}
	s.Users = sortedValues(cs.users, cloneConsoleUser, func(u ConsoleUser) string { return u.ID })
	s.Sessions = sortedValues(cs.sessions, func(x ConsoleSession) ConsoleSession { return x },
		func(x ConsoleSession) string { return x.Hash })
	s.Invites = sortedValues(cs.invites, func(x ConsoleInvite) ConsoleInvite { return x },
		func(x ConsoleInvite) string { return x.ID })
	for _, id := range slices.Sorted(maps.Keys(cs.keyUsed)) {
		s.KeyUsed = append(s.KeyUsed, ConsoleKeyUse{KeyID: id, At: cs.keyUsed[id]})
	}
	return s
}

// restoreConsoleV1 rebuilds the console state of a snapshot (nil: empty).
func restoreConsoleV1(s *snapConsoleV1) (consoleState, error) {
	var cs consoleState
	if s == nil {
		return cs, nil
	}
	cs.init()
	cs.sweptAt = s.SweptAt
	for _, u := range s.Users {
		if u.ID == "" || cs.users[u.ID].ID != "" || cs.byEmail[u.Email] != "" {
			return cs, fmt.Errorf("%w: console user without id, or duplicate %q", ErrCorruptSnapshot, u.ID)
		}
		cs.users[u.ID] = cloneConsoleUser(u)
		cs.byEmail[u.Email] = u.ID
	}
	for _, x := range s.Sessions {
		if x.Hash == "" || cs.sessions[x.Hash].Hash != "" || cs.users[x.UserID].ID == "" {
			return cs, fmt.Errorf("%w: bad console session", ErrCorruptSnapshot)
		}
		cs.sessions[x.Hash] = x
		cs.userSessions[x.UserID] = insertSorted(cs.userSessions[x.UserID], x.Hash)
	}
	for _, k := range s.KeyUsed {
		cs.keyUsed[k.KeyID] = k.At
	}
	for _, inv := range s.Invites {
		if inv.ID == "" || inv.Hash == "" || cs.invites[inv.ID].ID != "" || cs.inviteByHash[inv.Hash] != "" {
			return cs, fmt.Errorf("%w: bad console invitation %q", ErrCorruptSnapshot, inv.ID)
		}
		cs.invites[inv.ID] = inv
		cs.inviteByHash[inv.Hash] = inv.ID
	}
	return cs, nil
}
