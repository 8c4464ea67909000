package raftfsm

import (
	"fmt"
	"slices"
	"sort"
)

// Chat rooms of the persistence API (router/chat). A chat room is a tenant
// of its own ("chat_<ulid>"); its whole state is one *chatState on that
// tenant: the room record, the participants, the messages with every
// version, and the event log whose sequence numbers are the realtime
// resume cursor.
//
// Invariants:
//   - seq grows by one per event; the retained events are contiguous
//     (events[i].seq == events[0].seq+i) and end at seq.
//   - Permissions are decided in apply from the command (Actors, Service)
//     and the state only; times ride in the command and never go backwards
//     inside a room (lastAt).
//   - wake is closed and replaced after every applied event. That is a side
//     effect for readers waiting on the room; no snapshot records it.

// ChatOp is the operation of a ChatCmd.
type ChatOp uint8

// Chat operations.
const (
	ChatCreateRoom ChatOp = iota + 1
	ChatUpdateRoom
	ChatDeleteRoom
	ChatJoin
	ChatLeave
	ChatPost
	ChatEdit
	ChatDeleteMessage
)

// Chat event kinds, in the order of their codes.
var chatKinds = []string{"", "message.created", "message.edited", "message.deleted",
	"participant.joined", "participant.left", "room.updated", "room.deleted"}

const (
	evCreated uint8 = iota + 1
	evEdited
	evDeleted
	evJoined
	evLeft
	evRoomUpdated
	evRoomDeleted
)

// Participant roles and room visibilities.
const (
	ChatRoleOwner      = "owner"
	ChatRoleMember     = "member"
	ChatPrivate        = "private"
	ChatPublic         = "public"
	chatEventsRetained = 4096 // events kept per room for resuming
)

// ChatCmd changes a chat room.
type ChatCmd struct {
	Op                                 ChatOp
	Room                               string   // the room (its tenant ID)
	At                                 int64    // unix microseconds
	Actor                              string   // the caller's user ID; on service calls the owner (create) or empty
	Actors                             []string // every identity of the caller: its ID and the guests merged into it
	Service                            bool     // an internal route: participant and owner checks are skipped
	Name                               string
	Desc                               string
	Vis                                string
	Lobby                              bool
	SetName, SetDesc, SetVis, SetLobby bool
	User                               string // join, leave: the participant; service post: the author
	Limit                              int    // join: most participants; edit: most versions of a message
	Message                            string // post: the new message's ID; edit, delete: the message
	Content                            string
}

// ChatRoom is a chat room record.
type ChatRoom struct {
	ID, Name, Description, Owner, Visibility string
	Lobby                                    bool
	CreatedAt, UpdatedAt                     int64
}

// ChatParticipant is one user's place in a room.
type ChatParticipant struct {
	UserID   string
	Role     string
	JoinedAt int64
}

// ChatVersion is one version of a message's content.
type ChatVersion struct {
	Content string
	At      int64
}

// ChatMessage is a message; Versions is oldest first, the last one current,
// and empty once the message is deleted.
type ChatMessage struct {
	ID        string
	Author    string
	Seq       uint64 // the event that created it: its cursor
	CreatedAt int64
	Versions  []ChatVersion
	DeletedAt int64
}

// ChatResult is the apply result of a ChatCmd.
type ChatResult struct {
	Room        *ChatRoom
	Participant *ChatParticipant
	Message     *ChatMessage
	Seq         uint64 // the event appended; 0 when nothing changed
	Err         *ApplyError
}

type chatEvent struct {
	seq     uint64
	kind    uint8
	at      int64
	msg     string // message events
	version int    // edited: the version it wrote
	user    string // participant events
	role    string // joined
}

type chatState struct {
	room         ChatRoom
	deleted      bool
	participants map[string]*ChatParticipant
	messages     []*ChatMessage // creation order, so ascending Seq
	byID         map[string]*ChatMessage
	events       []chatEvent
	seq          uint64
	lastAt       int64
	wake         chan struct{}
}

func newChatState() *chatState {
	return &chatState{participants: map[string]*ChatParticipant{}, byID: map[string]*ChatMessage{},
		wake: make(chan struct{})}
}

// Encode returns the command bytes of c.
func (c *ChatCmd) Encode() []byte {
	e := enc{}
	e.u8(cmdChat)
	e.u8(uint8(c.Op))
	e.str(c.Room)
	e.varint(c.At)
	e.str(c.Actor)
	e.strs(c.Actors)
	e.bool(c.Service)
	e.str(c.Name)
	e.str(c.Desc)
	e.str(c.Vis)
	e.bool(c.Lobby)
	e.u8(flags(c.SetName, c.SetDesc, c.SetVis, c.SetLobby))
	e.str(c.User)
	e.varint(int64(c.Limit))
	e.str(c.Message)
	e.str(c.Content)
	return e.b
}

func flags(bits ...bool) uint8 {
	var f uint8
	for i, b := range bits {
		if b {
			f |= 1 << i
		}
	}
	return f
}

func decodeChat(d *dec) *ChatCmd {
	c := &ChatCmd{Op: ChatOp(d.u8()), Room: d.str(), At: d.varint(), Actor: d.str(), Actors: d.strs(),
		Service: d.bool(), Name: d.str(), Desc: d.str(), Vis: d.str(), Lobby: d.bool()}
	f := d.u8()
	c.SetName, c.SetDesc, c.SetVis, c.SetLobby = f&1 != 0, f&2 != 0, f&4 != 0, f&8 != 0
	c.User, c.Limit, c.Message, c.Content = d.str(), int(d.varint()), d.str(), d.str()
	return c
}

func chatErr(kind error, msg string) *ChatResult {
	return &ChatResult{Err: &ApplyError{Kind: kind, Message: msg}}
}

// Messages of the expected failures; router/chat maps them by Kind.
const (
	ChatMsgRoomNotFound    = "Room not found"
	ChatMsgNotParticipant  = "Not a participant of this room"
	ChatMsgOwnerOnly       = "Only the room owner can do this"
	ChatMsgAuthorOnly      = "Only the author can change this message"
	ChatMsgMessageNotFound = "Message not found"
	ChatMsgRoomFull        = "Room is full"
	ChatMsgEditLimit       = "Message has reached the edit limit"
	ChatMsgOwnerStays      = "The room owner cannot leave; delete the room instead"
	ChatMsgNoParticipant   = "Participant not found"
	ChatMsgExists          = "Already exists"
)

func (f *FSM) applyChat(c *ChatCmd) *ChatResult {
	if c.Op == ChatCreateRoom {
		t := f.tenantFor(c.Room)
		if t.chat != nil {
			return chatErr(ErrConflict, ChatMsgExists)
		}
		s := newChatState()
		s.room = ChatRoom{ID: c.Room, Name: c.Name, Description: c.Desc, Owner: c.Actor, Visibility: c.Vis,
			Lobby: c.Lobby, CreatedAt: c.At, UpdatedAt: c.At}
		s.lastAt = c.At
		t.chat = s
		res := &ChatResult{Room: s.roomCopy()}
		if c.Actor != "" {
			p := &ChatParticipant{UserID: c.Actor, Role: ChatRoleOwner, JoinedAt: c.At}
			s.participants[p.UserID] = p
			res.Participant, res.Seq = p.copy(), s.emit(chatEvent{kind: evJoined, at: c.At, user: p.UserID, role: p.Role})
		}
		return res
	}
	t := f.tenants[c.Room]
	if t == nil || t.chat == nil || t.chat.deleted {
		return chatErr(ErrNotFound, ChatMsgRoomNotFound)
	}
	s := t.chat
	if c.At < s.lastAt {
		c.At = s.lastAt
	}
	s.lastAt = c.At
	switch c.Op {
	case ChatUpdateRoom, ChatDeleteRoom:
		return s.changeRoom(c)
	case ChatJoin:
		return s.join(c)
	case ChatLeave:
		return s.leave(c)
	case ChatPost:
		return s.post(c)
	case ChatEdit, ChatDeleteMessage:
		return s.changeMessage(c)
	}
	panic(fmt.Sprintf("raftfsm: unknown chat op %d", c.Op))
}

// emit appends an event and wakes the readers waiting on the room.
func (s *chatState) emit(ev chatEvent) uint64 {
	s.seq++
	ev.seq = s.seq
	s.events = append(s.events, ev)
	if n := len(s.events); n > chatEventsRetained+chatEventsRetained/4 {
		s.events = slices.Clone(s.events[n-chatEventsRetained:])
	}
	close(s.wake)
	s.wake = make(chan struct{})
	return s.seq
}

// participant returns the participant record of any of ids.
func (s *chatState) participant(ids []string) *ChatParticipant {
	for _, id := range ids {
		if p := s.participants[id]; p != nil {
			return p
		}
	}
	return nil
}

// check refuses a non-participant, then (ownerOnly) a non-owner.
func (s *chatState) check(c *ChatCmd, ownerOnly bool) *ChatResult {
	if c.Service {
		return nil
	}
	p := s.participant(c.Actors)
	if p == nil {
		return chatErr(ErrForbidden, ChatMsgNotParticipant)
	}
	if ownerOnly && p.Role != ChatRoleOwner {
		return chatErr(ErrForbidden, ChatMsgOwnerOnly)
	}
	return nil
}

func (s *chatState) changeRoom(c *ChatCmd) *ChatResult {
	if r := s.check(c, true); r != nil {
		return r
	}
	if c.Op == ChatDeleteRoom {
		s.deleted = true
		s.participants, s.byID, s.messages, s.events = map[string]*ChatParticipant{}, map[string]*ChatMessage{}, nil, nil
		return &ChatResult{Room: s.roomCopy(), Seq: s.emit(chatEvent{kind: evRoomDeleted, at: c.At})}
	}
	if c.SetName {
		s.room.Name = c.Name
	}
	if c.SetDesc {
		s.room.Description = c.Desc
	}
	if c.SetVis {
		s.room.Visibility = c.Vis
	}
	if c.SetLobby {
		s.room.Lobby = c.Lobby
	}
	s.room.UpdatedAt = c.At
	return &ChatResult{Room: s.roomCopy(), Seq: s.emit(chatEvent{kind: evRoomUpdated, at: c.At})}
}

// join adds c.User. The owner (or a service) adds anyone; anyone adds
// themselves to a public room; an existing participant is returned as is.
func (s *chatState) join(c *ChatCmd) *ChatResult {
	self := slices.Contains(c.Actors, c.User)
	ids := []string{c.User}
	if self {
		ids = c.Actors
	}
	if p := s.participant(ids); p != nil {
		if r := s.check(c, false); r != nil {
			return r
		}
		return &ChatResult{Room: s.roomCopy(), Participant: p.copy()}
	}
	if !(self && s.room.Visibility == ChatPublic) {
		if r := s.check(c, true); r != nil {
			return r
		}
	}
	if c.Limit > 0 && len(s.participants) >= c.Limit {
		return chatErr(ErrConflict, ChatMsgRoomFull)
	}
	p := &ChatParticipant{UserID: c.User, Role: ChatRoleMember, JoinedAt: c.At}
	s.participants[p.UserID] = p
	seq := s.emit(chatEvent{kind: evJoined, at: c.At, user: p.UserID, role: p.Role})
	return &ChatResult{Room: s.roomCopy(), Participant: p.copy(), Seq: seq}
}

// leave removes c.User: the owner (or a service) removes anyone, a
// participant removes themselves; the owner stays. One leaving removes
// every record of theirs (a guest merged into an account that was in the
// room too has two), in one event.
func (s *chatState) leave(c *ChatCmd) *ChatResult {
	self := slices.Contains(c.Actors, c.User)
	if r := s.check(c, !self); r != nil {
		return r
	}
	ids := []string{c.User}
	if self {
		ids = c.Actors
	}
	var mine []*ChatParticipant
	for _, id := range ids {
		if p := s.participants[id]; p != nil {
			if p.Role == ChatRoleOwner {
				return chatErr(ErrForbidden, ChatMsgOwnerStays)
			}
			mine = append(mine, p)
		}
	}
	if len(mine) == 0 {
		return chatErr(ErrNotFound, ChatMsgNoParticipant)
	}
	for _, p := range mine {
		delete(s.participants, p.UserID)
	}
	p := mine[0]
	seq := s.emit(chatEvent{kind: evLeft, at: c.At, user: p.UserID, role: p.Role})
	return &ChatResult{Room: s.roomCopy(), Participant: p.copy(), Seq: seq}
}

func (s *chatState) post(c *ChatCmd) *ChatResult {
	author := c.Actor
	if c.Service {
		author = c.User
		if author != "" && s.participants[author] == nil {
			return chatErr(ErrForbidden, ChatMsgNotParticipant)
		}
	} else if r := s.check(c, false); r != nil {
		return r
	}
	if s.byID[c.Message] != nil {
		return chatErr(ErrConflict, ChatMsgExists)
	}
	m := &ChatMessage{ID: c.Message, Author: author, CreatedAt: c.At,
		Versions: []ChatVersion{{Content: c.Content, At: c.At}}}
	m.Seq = s.emit(chatEvent{kind: evCreated, at: c.At, msg: m.ID})
	s.messages = append(s.messages, m)
	s.byID[m.ID] = m
	return &ChatResult{Message: m.copy(), Seq: m.Seq}
}

func (s *chatState) changeMessage(c *ChatCmd) *ChatResult {
	if r := s.check(c, false); r != nil {
		return r
	}
	m := s.byID[c.Message]
	if m == nil || m.DeletedAt != 0 {
		return chatErr(ErrNotFound, ChatMsgMessageNotFound)
	}
	if !c.Service && !slices.Contains(c.Actors, m.Author) {
		return chatErr(ErrForbidden, ChatMsgAuthorOnly)
	}
	if c.Op == ChatDeleteMessage {
		m.DeletedAt, m.Versions = c.At, nil
		return &ChatResult{Message: m.copy(), Seq: s.emit(chatEvent{kind: evDeleted, at: c.At, msg: m.ID})}
	}
	if c.Limit > 0 && len(m.Versions) >= c.Limit {
		return chatErr(ErrConflict, ChatMsgEditLimit)
	}
	m.Versions = append(m.Versions, ChatVersion{Content: c.Content, At: c.At})
	seq := s.emit(chatEvent{kind: evEdited, at: c.At, msg: m.ID, version: len(m.Versions) - 1})
	return &ChatResult{Message: m.copy(), Seq: seq}
}

func (s *chatState) roomCopy() *ChatRoom { r := s.room; return &r }

func (p *ChatParticipant) copy() *ChatParticipant { x := *p; return &x }

func (m *ChatMessage) copy() *ChatMessage {
	x := *m
	x.Versions = slices.Clone(m.Versions)
	return &x
}

// Content is the current content ("" once deleted).
func (m *ChatMessage) Content() string {
	if len(m.Versions) == 0 {
		return ""
	}
	return m.Versions[len(m.Versions)-1].Content
}

// EditedAt is when the current version was written; 0 when never edited.
func (m *ChatMessage) EditedAt() int64 {
	if len(m.Versions) < 2 {
		return 0
	}
	return m.Versions[len(m.Versions)-1].At
}

func (s *chatState) sortedParticipants() []ChatParticipant {
	out := make([]ChatParticipant, 0, len(s.participants))
	for _, p := range s.participants {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].JoinedAt != out[j].JoinedAt {
			return out[i].JoinedAt < out[j].JoinedAt
		}
		return out[i].UserID < out[j].UserID
	})
	return out
}
