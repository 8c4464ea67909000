package chat

import (
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/raftfsm"
)

// JSON shapes of the persistence API (camelCase, timestamps RFC 3339 UTC
// with microseconds, like the memory service).

func stamp(us int64) string { return time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.000000Z") }

func nullStamp(us int64) *string {
	if us == 0 {
		return nil
	}
	s := stamp(us)
	return &s
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type userJSON struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	Image         *string `json:"image"`
	IsAnonymous   bool    `json:"isAnonymous"`
	CreatedAt     string  `json:"createdAt"`
	Email         *string `json:"email,omitempty"`         // the caller's own record, and internal routes
	EmailVerified *bool   `json:"emailVerified,omitempty"` // idem
}

// userView renders a user; full adds the e-mail (the user's own record).
func userView(u cluster.ChatUser, full bool) *userJSON {
	out := &userJSON{ID: u.ID, Name: u.Name, Image: nullString(u.Image), IsAnonymous: u.Anonymous,
		CreatedAt: stamp(u.CreatedAt.UnixMicro())}
	if full {
		out.Email, out.EmailVerified = nullString(u.Email), &u.EmailVerified
	}
	return out
}

type sessionJSON struct {
	ID        string  `json:"id"`
	UserID    string  `json:"userId"`
	UserAgent *string `json:"userAgent"`
	CreatedAt string  `json:"createdAt"`
	ExpiresAt string  `json:"expiresAt"`
	Current   bool    `json:"current"`
}

func sessionView(s cluster.ChatSession, current string) sessionJSON {
	return sessionJSON{ID: s.ID, UserID: s.UserID, UserAgent: nullString(s.UserAgent),
		CreatedAt: stamp(s.CreatedAt.UnixMicro()), ExpiresAt: stamp(s.ExpiresAt.UnixMicro()), Current: s.ID == current}
}

// users resolves user IDs (guests merged into an account resolve to it),
// once per ID per response.
type users struct {
	meta *cluster.Meta
	seen map[string]*cluster.ChatUser
}

func (s *Server) users() *users {
	return &users{meta: s.b.Meta(), seen: map[string]*cluster.ChatUser{}}
}

func (r *users) get(id string) *cluster.ChatUser {
	if u, ok := r.seen[id]; ok {
		return u
	}
	var out *cluster.ChatUser
	if u, ok := r.meta.ChatUser(id); ok {
		out = &u
	}
	r.seen[id] = out
	return out
}

// canonical is the ID a user is shown under.
func (r *users) canonical(id string) string {
	if u := r.get(id); u != nil {
		return u.ID
	}
	return id
}

func (r *users) view(id string) *userJSON {
	if u := r.get(id); u != nil {
		return userView(*u, false)
	}
	return nil
}

type roomJSON struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	Description      string            `json:"description"`
	Visibility       string            `json:"visibility"`
	Lobby            bool              `json:"lobby"`
	OwnerID          *string           `json:"ownerId"`
	CreatedAt        string            `json:"createdAt"`
	UpdatedAt        string            `json:"updatedAt"`
	ParticipantCount int               `json:"participantCount"`
	Cursor           uint64            `json:"cursor"`
	Participants     []participantJSON `json:"participants,omitempty"`
}

func (r *users) room(v raftfsm.ChatRoomView, withParticipants bool) *roomJSON {
	ps := r.distinct(v.Participants)
	out := &roomJSON{ID: v.Room.ID, Name: v.Room.Name, Description: v.Room.Description, Visibility: v.Room.Visibility,
		Lobby: v.Room.Lobby, CreatedAt: stamp(v.Room.CreatedAt), UpdatedAt: stamp(v.Room.UpdatedAt),
		ParticipantCount: len(ps), Cursor: v.Head}
	if v.Room.Owner != "" {
		owner := r.canonical(v.Room.Owner)
		out.OwnerID = &owner
	}
	if withParticipants {
		out.Participants = r.rendered(ps)
	}
	return out
}

// distinct folds the records that are one account (a guest merged into
// an account that was in the room too): the owner's record, else the
// first, in the records' order.
func (r *users) distinct(ps []raftfsm.ChatParticipant) []raftfsm.ChatParticipant {
	at := make(map[string]int, len(ps))
	out := make([]raftfsm.ChatParticipant, 0, len(ps))
	for _, p := range ps {
		id := r.canonical(p.UserID)
		i, seen := at[id]
		switch {
		case !seen:
			at[id] = len(out)
			out = append(out, p)
		case p.Role == raftfsm.ChatRoleOwner:
			out[i] = p
		}
	}
	return out
}

type participantJSON struct {
	UserID   string    `json:"userId"`
	Role     string    `json:"role"`
	JoinedAt *string   `json:"joinedAt"`
	User     *userJSON `json:"user"`
}

func (r *users) participant(p raftfsm.ChatParticipant) participantJSON {
	return participantJSON{UserID: r.canonical(p.UserID), Role: p.Role, JoinedAt: nullStamp(p.JoinedAt), User: r.view(p.UserID)}
}

// participants renders a room's participant records, one per account.
func (r *users) participants(ps []raftfsm.ChatParticipant) []participantJSON {
	return r.rendered(r.distinct(ps))
}

// rendered renders records already folded by distinct.
func (r *users) rendered(ps []raftfsm.ChatParticipant) []participantJSON {
	out := make([]participantJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, r.participant(p))
	}
	return out
}

type versionJSON struct {
	Content   string `json:"content"`
	CreatedAt string `json:"createdAt"`
}

type messageJSON struct {
	ID        string        `json:"id"`
	RoomID    string        `json:"roomId"`
	AuthorID  *string       `json:"authorId"` // null: a service message for no user
	Author    *userJSON     `json:"author"`
	Content   string        `json:"content"`
	CreatedAt string        `json:"createdAt"`
	EditedAt  *string       `json:"editedAt"`
	DeletedAt *string       `json:"deletedAt"`
	Deleted   bool          `json:"deleted"`
	Seq       uint64        `json:"seq"`
	History   []versionJSON `json:"history"` // earlier versions, oldest first
}

func (r *users) message(room string, m raftfsm.ChatMessage) *messageJSON {
	out := &messageJSON{ID: m.ID, RoomID: room, Content: m.Content(), CreatedAt: stamp(m.CreatedAt),
		EditedAt: nullStamp(m.EditedAt()), DeletedAt: nullStamp(m.DeletedAt), Deleted: m.DeletedAt != 0, Seq: m.Seq,
		History: []versionJSON{}}
	if m.Author != systemAuthor {
		id := r.canonical(m.Author)
		out.AuthorID, out.Author = &id, r.view(m.Author)
	}
	for i := 0; i+1 < len(m.Versions); i++ {
		out.History = append(out.History, versionJSON{Content: m.Versions[i].Content, CreatedAt: stamp(m.Versions[i].At)})
	}
	return out
}

func (r *users) messages(room string, ms []raftfsm.ChatMessage) []*messageJSON {
	out := make([]*messageJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, r.message(room, m))
	}
	return out
}

// eventJSON is one realtime frame carrying an event of the room's log.
type eventJSON struct {
	Type        string           `json:"type"`
	Seq         uint64           `json:"seq"`
	RoomID      string           `json:"roomId"`
	At          string           `json:"at"`
	Message     *messageJSON     `json:"message,omitempty"`
	Participant *participantJSON `json:"participant,omitempty"`
	Room        *roomJSON        `json:"room,omitempty"`
}

func (r *users) event(room string, ev raftfsm.ChatEvent) eventJSON {
	out := eventJSON{Type: ev.Kind, Seq: ev.Seq, RoomID: room, At: stamp(ev.At)}
	switch {
	case ev.Message != nil:
		out.Message = r.message(room, *ev.Message)
	case ev.Participant != nil:
		p := r.participant(*ev.Participant)
		out.Participant = &p
	case ev.Room != nil:
		out.Room = r.room(raftfsm.ChatRoomView{Room: *ev.Room, Head: ev.Seq}, false)
		out.Room.ParticipantCount = ev.Members
	}
	return out
}
