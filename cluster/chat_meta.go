package cluster

import (
	"cmp"
	"encoding/gob"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

// Chat state of the meta group: the users and sessions of the chat-room
// persistence API (router/chat) and the key its realtime tokens are signed
// with. It lives in the meta group so that every node resolves a session
// locally and verifies a token any node issued.
//
// Invariants:
//   - Raw session tokens never enter the log: commands carry the hex
//     SHA-256 of each, computed by the router.
//   - Every command carries its time (Now); expiry and pruning compare
//     against it only, so replicas stay identical.
//   - A guest (anonymous user) that signs in becomes that account: in place
//     when the identity is new, else it is merged into the existing account
//     (MergedInto on the guest, the guest's ID in the account's Aliases), so
//     what the guest wrote stays the account's.

// Command types of the chat commands (the 20-29 range of meta commands).
const (
	cmdChatSetKey         byte = 20
	cmdChatSignIn         byte = 21
	cmdChatRevokeSessions byte = 22
	cmdChatUpdateUser     byte = 23
)

// chatMaxSessions is how many sessions a user keeps; a new one beyond it
// drops the oldest.
const chatMaxSessions = 50

const chatSweepEvery = time.Minute

// Errors of the chat commands.
var (
	// ErrChatUserExists is returned when creating a user whose ID is taken.
	ErrChatUserExists = errors.New("cluster: chat user already exists")
	// ErrUnknownChatUser is returned for a command naming no (live) user.
	ErrUnknownChatUser = errors.New("cluster: unknown chat user")
)

func init() {
	decoders[cmdChatSetKey] = decodeWith((*metaState).chatSetKey)
	decoders[cmdChatSignIn] = decodeWith((*metaState).chatSignIn)
	decoders[cmdChatRevokeSessions] = decodeWith((*metaState).chatRevokeSessions)
	decoders[cmdChatUpdateUser] = decodeWith((*metaState).chatUpdateUser)
	sentinels["chat_user_exists"] = ErrChatUserExists
	sentinels["unknown_chat_user"] = ErrUnknownChatUser
	for _, v := range []any{ChatKey{}, ChatSignedIn{}, ChatUser{}, &raftfsm.ChatResult{}} {
		gob.Register(v)
	}
}

// ChatKey is the secret the chat surface signs its tokens and cookies with.
type ChatKey struct {
	Secret    []byte    `json:"secret"`
	CreatedAt time.Time `json:"created_at"`
}

// ChatUser is a user of the chat surface: a guest (Anonymous) or an account
// signed in through an OpenID Connect provider (Issuer, Subject).
type ChatUser struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Email         string    `json:"email,omitempty"`
	EmailVerified bool      `json:"email_verified,omitempty"`
	Image         string    `json:"image,omitempty"`
	Anonymous     bool      `json:"anonymous,omitempty"`
	Issuer        string    `json:"issuer,omitempty"`
	Subject       string    `json:"subject,omitempty"`
	MergedInto    string    `json:"merged_into,omitempty"` // a guest merged into that account
	Aliases       []string  `json:"aliases,omitempty"`     // the guests merged into this account, sorted
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// ChatSession is a signed-in session, stored by the hash of its token.
type ChatSession struct {
	ID        string    `json:"id"`
	Hash      string    `json:"hash"`
	UserID    string    `json:"user_id"`
	UserAgent string    `json:"user_agent,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// ChatSetKey records the signing key. The first one wins; a later one
// returns the recorded key. Result: ChatKey.
type ChatSetKey struct {
	Key ChatKey `json:"key"`
}

// ChatSignIn creates a session. A guest sign-in (User.Anonymous) creates
// User. Otherwise the account of (User.Issuer, User.Subject) is found, or
// Upgrade's guest becomes it, or User is created; a guest named by Upgrade
// is merged into an account that already exists. Result: ChatSignedIn, or
// ErrChatUserExists, ErrInvalidCommand.
type ChatSignIn struct {
	User    ChatUser    `json:"user"`
	Upgrade string      `json:"upgrade,omitempty"`
	Session ChatSession `json:"session"`
	Now     time.Time   `json:"now"`
}

// ChatSignedIn is the result of a ChatSignIn.
type ChatSignedIn struct {
	User     ChatUser
	Session  ChatSession
	Upgraded bool // the guest became the account
	Merged   bool // the guest was merged into an existing account
}

// ChatRevokeSessions deletes sessions of UserID: the one with SessionID, or
// (SessionID empty) all but Except. Result: the number deleted (int).
type ChatRevokeSessions struct {
	UserID    string    `json:"user_id"`
	SessionID string    `json:"session_id,omitempty"`
	Except    string    `json:"except,omitempty"`
	Now       time.Time `json:"now"`
}

// ChatUpdateUser changes a user's profile; a nil field is left unchanged.
// Result: ChatUser, or ErrUnknownChatUser.
type ChatUpdateUser struct {
	UserID string    `json:"user_id"`
	Name   *string   `json:"name,omitempty"`
	Image  *string   `json:"image,omitempty"`
	Now    time.Time `json:"now"`
}

// EncodeChatSetKey encodes a ChatSetKey command.
func EncodeChatSetKey(c ChatSetKey) []byte { return encodeCommand(cmdChatSetKey, c) }

// EncodeChatSignIn encodes a ChatSignIn command.
func EncodeChatSignIn(c ChatSignIn) []byte { return encodeCommand(cmdChatSignIn, c) }

// EncodeChatRevokeSessions encodes a ChatRevokeSessions command.
func EncodeChatRevokeSessions(c ChatRevokeSessions) []byte {
	return encodeCommand(cmdChatRevokeSessions, c)
}

// EncodeChatUpdateUser encodes a ChatUpdateUser command.
func EncodeChatUpdateUser(c ChatUpdateUser) []byte { return encodeCommand(cmdChatUpdateUser, c) }

// chatMetaState is the chat part of metaState. Nil maps are empty.
type chatMetaState struct {
	key          *ChatKey
	users        map[string]ChatUser
	identities   map[string]string      // issuer NUL subject -> user ID
	sessions     map[string]ChatSession // by token hash
	userSessions map[string][]string    // user ID -> session hashes, sorted
	sweptAt      time.Time
}

func (ch *chatMetaState) init() {
	if ch.users == nil {
		ch.users = map[string]ChatUser{}
		ch.identities = map[string]string{}
		ch.sessions = map[string]ChatSession{}
		ch.userSessions = map[string][]string{}
	}
}

func identityKey(issuer, subject string) string { return issuer + "\x00" + subject }

func (st *metaState) chatSetKey(c ChatSetKey) any {
	if st.chat.key != nil {
		return cloneChatKey(*st.chat.key)
	}
	if len(c.Key.Secret) < 32 {
		return fmt.Errorf("cannot set chat key: at least 32 bytes required: %w", ErrInvalidCommand)
	}
	k := cloneChatKey(c.Key)
	k.CreatedAt = k.CreatedAt.UTC()
	st.chat.key = &k
	return cloneChatKey(k)
}

func (st *metaState) chatSignIn(c ChatSignIn) any {
	ch := &st.chat
	ch.init()
	ch.sweep(c.Now)
	if c.Session.ID == "" || c.Session.Hash == "" || ch.sessions[c.Session.Hash].Hash != "" {
		return fmt.Errorf("cannot sign in: empty or duplicate session: %w", ErrInvalidCommand)
	}
	var res ChatSignedIn
	var err error
	if c.User.Anonymous {
		res.User, err = ch.newUser(c.User)
	} else {
		res, err = ch.signInAccount(c)
	}
	if err != nil {
		return err
	}
	res.User.UpdatedAt = c.Now.UTC()
	ch.users[res.User.ID] = res.User
	s := c.Session
	s.UserID, s.CreatedAt, s.ExpiresAt = res.User.ID, s.CreatedAt.UTC(), s.ExpiresAt.UTC()
	ch.addSession(s)
	res.User, res.Session = cloneChatUser(res.User), s
	return res
}

func (ch *chatMetaState) newUser(u ChatUser) (ChatUser, error) {
	if u.ID == "" {
		return ChatUser{}, fmt.Errorf("cannot create chat user: empty id: %w", ErrInvalidCommand)
	}
	if _, ok := ch.users[u.ID]; ok {
		return ChatUser{}, fmt.Errorf("cannot create chat user %s: %w", u.ID, ErrChatUserExists)
	}
	u.MergedInto, u.Aliases, u.CreatedAt = "", nil, u.CreatedAt.UTC()
	return u, nil
}

func (ch *chatMetaState) signInAccount(c ChatSignIn) (ChatSignedIn, error) {
	in := c.User
	if in.Issuer == "" || in.Subject == "" {
		return ChatSignedIn{}, fmt.Errorf("cannot sign in: issuer and subject required: %w", ErrInvalidCommand)
	}
	key := identityKey(in.Issuer, in.Subject)
	guest, isGuest := ch.users[c.Upgrade]
	isGuest = isGuest && guest.Anonymous && guest.MergedInto == ""
	var res ChatSignedIn
	if id, ok := ch.identities[key]; ok {
		res.User = ch.users[id]
		res.User.Email, res.User.EmailVerified = in.Email, in.EmailVerified
		if res.User.Image == "" {
			res.User.Image = in.Image
		}
		if isGuest {
			guest.MergedInto, guest.UpdatedAt = id, c.Now.UTC()
			ch.users[guest.ID] = guest
			res.User.Aliases = insertSorted(slices.Clone(res.User.Aliases), guest.ID)
			ch.dropSessions(guest.ID)
			res.Merged = true
		}
		return res, nil
	}
	if isGuest {
		u := guest
		u.Anonymous, u.Issuer, u.Subject = false, in.Issuer, in.Subject
		u.Email, u.EmailVerified, u.Image = in.Email, in.EmailVerified, cmp.Or(in.Image, u.Image)
		u.Name = cmp.Or(in.Name, u.Name)
		ch.dropSessions(guest.ID)
		ch.identities[key] = u.ID
		return ChatSignedIn{User: u, Upgraded: true}, nil
	}
	u, err := ch.newUser(in)
	if err != nil {
		return ChatSignedIn{}, err
	}
	ch.identities[key] = u.ID
	return ChatSignedIn{User: u}, nil
}

// addSession stores s and drops the user's oldest sessions beyond the cap.
func (ch *chatMetaState) addSession(s ChatSession) {
	ch.sessions[s.Hash] = s
	ch.userSessions[s.UserID] = insertSorted(ch.userSessions[s.UserID], s.Hash)
	hashes := ch.userSessions[s.UserID]
	for len(hashes) > chatMaxSessions {
		oldest := slices.MinFunc(hashes, func(a, b string) int {
			x, y := ch.sessions[a], ch.sessions[b]
			return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), cmp.Compare(x.ID, y.ID))
		})
		ch.dropSession(oldest)
		hashes = ch.userSessions[s.UserID]
	}
}

func (ch *chatMetaState) dropSession(hash string) {
	s, ok := ch.sessions[hash]
	if !ok {
		return
	}
	delete(ch.sessions, hash)
	rest := slices.DeleteFunc(slices.Clone(ch.userSessions[s.UserID]), func(h string) bool { return h == hash })
	if len(rest) == 0 {
		delete(ch.userSessions, s.UserID)
		return
	}
	ch.userSessions[s.UserID] = rest
}

func (ch *chatMetaState) dropSessions(userID string) {
	for _, h := range slices.Clone(ch.userSessions[userID]) {
		ch.dropSession(h)
	}
}

// sweep deletes expired sessions, at most once per chatSweepEvery of
// command time.
func (ch *chatMetaState) sweep(now time.Time) {
	if now.Before(ch.sweptAt.Add(chatSweepEvery)) {
		return
	}
	ch.sweptAt = now.UTC()
	for _, h := range slices.Sorted(maps.Keys(ch.sessions)) {
		if !ch.sessions[h].ExpiresAt.After(now) {
			ch.dropSession(h)
		}
	}
}

func (st *metaState) chatRevokeSessions(c ChatRevokeSessions) any {
	ch := &st.chat
	ch.init()
	ch.sweep(c.Now)
	n := 0
	for _, h := range slices.Clone(ch.userSessions[c.UserID]) {
		s := ch.sessions[h]
		if (c.SessionID != "" && s.ID != c.SessionID) || (c.Except != "" && s.ID == c.Except) {
			continue
		}
		ch.dropSession(h)
		n++
	}
	return n
}

func (st *metaState) chatUpdateUser(c ChatUpdateUser) any {
	ch := &st.chat
	ch.init()
	u, ok := ch.users[c.UserID]
	if !ok || u.MergedInto != "" {
		return fmt.Errorf("cannot update chat user %q: %w", c.UserID, ErrUnknownChatUser)
	}
	if c.Name != nil {
		u.Name = *c.Name
	}
	if c.Image != nil {
		u.Image = *c.Image
	}
	u.UpdatedAt = c.Now.UTC()
	ch.users[u.ID] = u
	return cloneChatUser(u)
}

// ChatKey returns the signing key; false until one is set.
func (m *Meta) ChatKey() (ChatKey, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.st.chat.key == nil {
		return ChatKey{}, false
	}
	return cloneChatKey(*m.st.chat.key), true
}

// ChatSession resolves the hash of a session token to the session and its
// user: false when unknown or expired at now.
func (m *Meta) ChatSession(hash string, now time.Time) (ChatSession, ChatUser, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.st.chat.sessions[hash]
	if !ok || !s.ExpiresAt.After(now) {
		return ChatSession{}, ChatUser{}, false
	}
	u, ok := m.st.chat.users[s.UserID]
	return s, cloneChatUser(u), ok
}

// ChatUser returns a user; a guest merged into an account resolves to that
// account.
func (m *Meta) ChatUser(id string) (ChatUser, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	u, ok := m.st.chat.users[id]
	if ok && u.MergedInto != "" {
		u, ok = m.st.chat.users[u.MergedInto]
	}
	return cloneChatUser(u), ok
}

// ChatSessionLive reports whether the session of ID sid, of user userID,
// is signed in and not expired at now.
func (m *Meta) ChatSessionLive(userID, sid string, now time.Time) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, h := range m.st.chat.userSessions[userID] {
		if s := m.st.chat.sessions[h]; s.ID == sid && s.ExpiresAt.After(now) {
			return true
		}
	}
	return false
}

// ChatSessions returns the live sessions of a user, oldest first.
func (m *Meta) ChatSessions(userID string, now time.Time) []ChatSession {
	m.mu.RLock()
	out := []ChatSession{}
	for _, h := range m.st.chat.userSessions[userID] {
		if s := m.st.chat.sessions[h]; s.ExpiresAt.After(now) {
			out = append(out, s)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b ChatSession) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

func cloneChatKey(k ChatKey) ChatKey { k.Secret = slices.Clone(k.Secret); return k }

func cloneChatUser(u ChatUser) ChatUser { u.Aliases = slices.Clone(u.Aliases); return u }

// snapChatV1 is the chat part of a version 1 snapshot, lists sorted by ID
// (sessions by hash). It is omitted while the chat state is empty, so
// snapshots of deployments without chat users are unchanged.
type snapChatV1 struct {
	Key      *ChatKey      `json:"key,omitempty"`
	Users    []ChatUser    `json:"users,omitempty"`
	Sessions []ChatSession `json:"sessions,omitempty"`
	SweptAt  time.Time     `json:"swept_at,omitzero"`
}

func (ch *chatMetaState) snapshot() *snapChatV1 {
	if ch.key == nil && len(ch.users) == 0 && len(ch.sessions) == 0 && ch.sweptAt.IsZero() {
		return nil
	}
	s := &snapChatV1{SweptAt: ch.sweptAt}
	if ch.key != nil {
		k := cloneChatKey(*ch.key)
		s.Key = &k
	}
	for _, id := range slices.Sorted(maps.Keys(ch.users)) {
		s.Users = append(s.Users, cloneChatUser(ch.users[id]))
	}
	for _, h := range slices.Sorted(maps.Keys(ch.sessions)) {
		s.Sessions = append(s.Sessions, ch.sessions[h])
	}
	return s
}

// restoreChatV1 rebuilds the chat state of a snapshot (nil: empty).
func restoreChatV1(s *snapChatV1) (chatMetaState, error) {
	var ch chatMetaState
	if s == nil {
		return ch, nil
	}
	ch.init()
	ch.sweptAt = s.SweptAt
	if s.Key != nil {
		k := cloneChatKey(*s.Key)
		ch.key = &k
	}
	for _, u := range s.Users {
		if u.ID == "" || ch.users[u.ID].ID != "" {
			return ch, fmt.Errorf("%w: chat user without id or duplicate %q", ErrCorruptSnapshot, u.ID)
		}
		ch.users[u.ID] = cloneChatUser(u)
		if !u.Anonymous && u.MergedInto == "" && u.Issuer != "" {
			ch.identities[identityKey(u.Issuer, u.Subject)] = u.ID
		}
	}
	for _, x := range s.Sessions {
		if x.Hash == "" || ch.sessions[x.Hash].Hash != "" || ch.users[x.UserID].ID == "" {
			return ch, fmt.Errorf("%w: bad chat session %q", ErrCorruptSnapshot, x.ID)
		}
		ch.sessions[x.Hash] = x
		ch.userSessions[x.UserID] = insertSorted(ch.userSessions[x.UserID], x.Hash)
	}
	return ch, nil
}
