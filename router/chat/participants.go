package chat

import (
	"github.com/hebbdb/hebb/raftfsm"
)

func (s *Server) listParticipants(c *call) error {
	_, v, err := s.memberRoom(c, roomParam(c))
	if err != nil {
		return err
	}
	return s.ok(c, map[string]any{"participants": s.users().participants(v.Participants)})
}

type participantBody struct {
	UserID *string `json:"userId"`
}

// addParticipant adds userId (the room owner's call), or the caller itself
// when userId is absent (a public room, or a no-op for a participant).
// 201 when the user joined, 200 when it already was a participant.
func (s *Server) addParticipant(c *call) error {
	var body participantBody
	if err := decodeBody(c.ctx.PostBody(), &body, true); err != nil {
		return err
	}
	target := c.user.ID
	if body.UserID != nil {
		if !validID(userPrefix, *body.UserID) {
			return validationError(fieldErr("value_error", "Input should be a user id (usr_<ulid>)", "body", "userId"))
		}
		u, ok := s.chatUser(c, *body.UserID)
		if !ok {
			return notFound("User not found")
		}
		target = u.ID
	}
	return s.join(c, &raftfsm.ChatCmd{Op: raftfsm.ChatJoin, Room: roomParam(c), User: target})
}

func (s *Server) join(c *call, cmd *raftfsm.ChatCmd) error {
	if !validID(roomPrefix, cmd.Room) {
		return notFound(raftfsm.ChatMsgRoomNotFound)
	}
	cmd.Limit = s.cfg.MaxParticipants
	res, err := s.propose(c, cmd)
	if err != nil {
		return err
	}
	status := 200
	if res.Seq != 0 {
		status = 201
	}
	s.reply(c, status, s.users().participant(*res.Participant))
	return nil
}

// removeParticipant removes a participant: the owner removes anyone, a
// participant removes itself (leaves).
func (s *Server) removeParticipant(c *call) error {
	id, _ := c.ctx.UserValue("participantId").(string)
	return s.leave(c, roomParam(c), id, false)
}

// leave removes the participant shown as id (guests merged into an account
// are shown as the account).
func (s *Server) leave(c *call, room, id string, service bool) error {
	_, v, err := s.readRoom(c, room)
	if err != nil {
		return err
	}
	if !service && participantOf(v, c.ids) == nil {
		return forbidden(raftfsm.ChatMsgNotParticipant)
	}
	r := s.users()
	key := ""
	for _, p := range v.Participants {
		if p.UserID == id || r.canonical(p.UserID) == id {
			key = p.UserID
		}
	}
	if key == "" {
		return notFound(raftfsm.ChatMsgNoParticipant)
	}
	if _, err := s.propose(c, &raftfsm.ChatCmd{Op: raftfsm.ChatLeave, Room: room, User: key, Service: service}); err != nil {
		return err
	}
	return s.ok(c, map[string]any{"success": true})
}
