package raftfsm

import (
	"slices"
	"sort"
)

// Reads of the chat rooms (chat.go) and their snapshot encoding.

// ChatRoomView is a live room as the routes need it.
type ChatRoomView struct {
	Room         ChatRoom
	Participants []ChatParticipant // by join time
	Head         uint64            // the last event: where a realtime stream starts
}

func (s *chatState) view() ChatRoomView {
	return ChatRoomView{Room: s.room, Participants: s.sortedParticipants(), Head: s.seq}
}

// ChatRoomFilter selects the chat rooms a listing shows: with Lobby those
// listed in the lobby, otherwise those with one of IDs as a participant.
type ChatRoomFilter struct {
	IDs   []string
	Lobby bool
}

// match reports whether the filter selects s, from the room's record and
// participant map: a listing built and sorted every room's participants
// before it filtered (15 ms for a user of no room among 12,000).
func (f *ChatRoomFilter) match(s *chatState) bool {
	if f.Lobby {
		return s.room.Lobby
	}
	for _, id := range f.IDs {
		if s.participants[id] != nil {
			return true
		}
	}
	return false
}

// ChatRoom returns a live (not deleted) chat room.
func (f *FSM) ChatRoom(room string) (ChatRoomView, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[room]
	if t == nil || t.chat == nil || t.chat.deleted {
		return ChatRoomView{}, false
	}
	return t.chat.view(), true
}

// ChatRooms returns the live chat rooms of this group that filter selects,
// ordered by creation.
func (f *FSM) ChatRooms(filter *ChatRoomFilter) []ChatRoomView {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []ChatRoomView
	for _, t := range f.tenants {
		if t.chat != nil && !t.chat.deleted && filter.match(t.chat) {
			out = append(out, t.chat.view())
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

// ChatPage selects messages by their Seq: Forward gives the ones after
// After, oldest first; otherwise the newest ones before Before (0: the end).
type ChatPage struct {
	Before, After uint64
	Forward       bool
	Limit         int
}

// ChatMessages returns a page of a live room's messages (deleted ones as
// tombstones) and whether more follow in the same direction.
func (f *FSM) ChatMessages(room string, p ChatPage) (msgs []ChatMessage, more, ok bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[room]
	if t == nil || t.chat == nil || t.chat.deleted {
		return nil, false, false
	}
	all := t.chat.messages
	msgs = []ChatMessage{}
	if p.Forward {
		i := sort.Search(len(all), func(i int) bool { return all[i].Seq > p.After })
		for ; i < len(all) && len(msgs) < p.Limit; i++ {
			msgs = append(msgs, *all[i].copy())
		}
		return msgs, i < len(all), true
	}
	hi := len(all)
	if p.Before > 0 {
		hi = sort.Search(len(all), func(i int) bool { return all[i].Seq >= p.Before })
	}
	for hi > 0 && len(msgs) < p.Limit {
		hi--
		msgs = append(msgs, *all[hi].copy())
	}
	return msgs, hi > 0, true
}

// ChatMessage returns one message of a live room, a deleted one included.
func (f *FSM) ChatMessage(room, id string) (ChatMessage, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[room]
	if t == nil || t.chat == nil || t.chat.deleted || t.chat.byID[id] == nil {
		return ChatMessage{}, false
	}
	return *t.chat.byID[id].copy(), true
}

// ChatEvent is one event of a room's log.
type ChatEvent struct {
	Seq         uint64
	Kind        string
	At          int64
	Message     *ChatMessage     // message events: the message as this event left it
	Participant *ChatParticipant // participant events
	Room        *ChatRoom        // room events: the room as it is now
	Members     int              // room events: how many participants it has now
}

// ChatFeed is what a realtime reader gets from ChatEvents.
type ChatFeed struct {
	Events []ChatEvent
	Head   uint64
	Missed bool            // events after the cursor are no longer kept: resync from Head
	Gone   bool            // the room is deleted or unknown
	Wake   <-chan struct{} // closed by the next event (nil when the room is unknown)
}

// ChatEvents returns up to limit events after the cursor, in commit order,
// and a channel that the next event closes.
func (f *FSM) ChatEvents(room string, after uint64, limit int) ChatFeed {
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := f.tenants[room]
	if t == nil || t.chat == nil {
		return ChatFeed{Gone: true}
	}
	s := t.chat
	feed := ChatFeed{Head: s.seq, Gone: s.deleted, Wake: s.wake}
	if after >= s.seq || len(s.events) == 0 {
		return feed
	}
	first := s.events[0].seq
	if after+1 < first {
		if !s.deleted {
			feed.Missed = true
			return feed
		}
		after = first - 1
	}
	for i := int(after + 1 - first); i < len(s.events) && len(feed.Events) < limit; i++ {
		feed.Events = append(feed.Events, s.render(s.events[i]))
	}
	return feed
}

func (s *chatState) render(ev chatEvent) ChatEvent {
	out := ChatEvent{Seq: ev.seq, Kind: chatKinds[ev.kind], At: ev.at}
	switch ev.kind {
	case evCreated, evEdited, evDeleted:
		m := ChatMessage{ID: ev.msg}
		if x := s.byID[ev.msg]; x != nil {
			m = *x
			m.Versions = nil
			if x.DeletedAt == 0 && ev.version < len(x.Versions) {
				m.Versions = slices.Clone(x.Versions[:ev.version+1])
			}
		}
		out.Message = &m
	case evJoined, evLeft:
		out.Participant = &ChatParticipant{UserID: ev.user, Role: ev.role}
		if ev.kind == evJoined {
			out.Participant.JoinedAt = ev.at
		}
	default:
		out.Room, out.Members = s.roomCopy(), len(s.participants)
	}
	return out
}

func (e *enc) chat(s *chatState) {
	if s == nil {
		e.u8(0)
		return
	}
	e.u8(1)
	r := &s.room
	e.strs([]string{r.ID, r.Name, r.Description, r.Owner, r.Visibility})
	e.bool(r.Lobby)
	e.varint(r.CreatedAt)
	e.varint(r.UpdatedAt)
	e.bool(s.deleted)
	e.uvarint(s.seq)
	e.varint(s.lastAt)
	ps := s.sortedParticipants()
	e.uvarint(uint64(len(ps)))
	for _, p := range ps {
		e.str(p.UserID)
		e.str(p.Role)
		e.varint(p.JoinedAt)
	}
	e.uvarint(uint64(len(s.messages)))
	for _, m := range s.messages {
		e.str(m.ID)
		e.str(m.Author)
		e.uvarint(m.Seq)
		e.varint(m.CreatedAt)
		e.varint(m.DeletedAt)
		e.uvarint(uint64(len(m.Versions)))
		for _, v := range m.Versions {
			e.str(v.Content)
			e.varint(v.At)
		}
	}
	e.uvarint(uint64(len(s.events)))
	for _, ev := range s.events {
		e.uvarint(ev.seq)
		e.u8(ev.kind)
		e.varint(ev.at)
		e.str(ev.msg)
		e.varint(int64(ev.version))
		e.str(ev.user)
		e.str(ev.role)
	}
}

func (d *dec) chat() *chatState {
	if d.u8() == 0 {
		return nil
	}
	s := newChatState()
	if f := d.strs(); len(f) == 5 {
		s.room = ChatRoom{ID: f[0], Name: f[1], Description: f[2], Owner: f[3], Visibility: f[4]}
	} else {
		d.fail("chat room")
	}
	s.room.Lobby, s.room.CreatedAt, s.room.UpdatedAt = d.bool(), d.varint(), d.varint()
	s.deleted, s.seq, s.lastAt = d.bool(), d.uvarint(), d.varint()
	for n := d.count(3); n > 0 && d.err == nil; n-- {
		p := &ChatParticipant{UserID: d.str(), Role: d.str(), JoinedAt: d.varint()}
		s.participants[p.UserID] = p
	}
	for n := d.count(6); n > 0 && d.err == nil; n-- {
		m := &ChatMessage{ID: d.str(), Author: d.str(), Seq: d.uvarint(), CreatedAt: d.varint(), DeletedAt: d.varint()}
		for v := d.count(2); v > 0 && d.err == nil; v-- {
			m.Versions = append(m.Versions, ChatVersion{Content: d.str(), At: d.varint()})
		}
		s.messages = append(s.messages, m)
		s.byID[m.ID] = m
	}
	for n := d.count(7); n > 0 && d.err == nil; n-- {
		ev := chatEvent{seq: d.uvarint(), kind: d.u8(), at: d.varint(), msg: d.str(), version: int(d.varint()),
			user: d.str(), role: d.str()}
		if ev.kind == 0 || int(ev.kind) >= len(chatKinds) || ev.version < 0 ||
			len(s.events) > 0 && ev.seq != s.events[len(s.events)-1].seq+1 {
			d.fail("chat event")
		}
		s.events = append(s.events, ev)
	}
	if n := len(s.events); n > 0 && s.events[n-1].seq != s.seq {
		d.fail("chat event log")
	}
	return s
}
