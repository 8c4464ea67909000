package chat

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/router/ratelimit"
	"github.com/hebbdb/hebb/router/relay"
)

// readRoom reads a live room after a read barrier; an unknown (or
// malformed) ID is 404.
func (s *Server) readRoom(c *call, id string) (*raftfsm.FSM, raftfsm.ChatRoomView, error) {
	if !validID(roomPrefix, id) {
		return nil, raftfsm.ChatRoomView{}, notFound(raftfsm.ChatMsgRoomNotFound)
	}
	fsm, err := s.b.ReadFSM(c.std, id)
	if err != nil {
		return nil, raftfsm.ChatRoomView{}, err
	}
	v, ok := fsm.ChatRoom(id)
	if !ok {
		return nil, raftfsm.ChatRoomView{}, notFound(raftfsm.ChatMsgRoomNotFound)
	}
	return fsm, v, nil
}

// memberRoom is readRoom for a participant: anyone else gets 403.
func (s *Server) memberRoom(c *call, id string) (*raftfsm.FSM, raftfsm.ChatRoomView, error) {
	fsm, v, err := s.readRoom(c, id)
	if err == nil && participantOf(v, c.ids) == nil {
		err = forbidden(raftfsm.ChatMsgNotParticipant)
	}
	return fsm, v, err
}

// participantOf returns the participant record of any of ids.
func participantOf(v raftfsm.ChatRoomView, ids []string) *raftfsm.ChatParticipant {
	for i := range v.Participants {
		if slices.Contains(ids, v.Participants[i].UserID) {
			return &v.Participants[i]
		}
	}
	return nil
}

// propose runs a chat command as the caller (or, Service set, as the
// service) and maps an expected failure to the envelope.
func (s *Server) propose(c *call, cmd *raftfsm.ChatCmd) (*raftfsm.ChatResult, error) {
	cmd.At = c.now.UnixMicro()
	if !cmd.Service {
		cmd.Actor, cmd.Actors = c.user.ID, c.ids
	}
	res, err := s.b.Propose(c.std, cmd.Room, cmd.Encode())
	if err != nil {
		return nil, err
	}
	r, ok := res.(*raftfsm.ChatResult)
	if !ok {
		return nil, fmt.Errorf("cannot apply chat op %d: unexpected result %T", cmd.Op, res)
	}
	if r.Err != nil {
		return nil, applyError(r.Err)
	}
	return r, nil
}

// scan gathers the live rooms of every group that filter selects.
func (s *Server) scan(c *call, filter raftfsm.ChatRoomFilter) ([]raftfsm.ChatRoomView, error) {
	out, err := s.b.ChatRoomsOf(c.std, filter)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b raftfsm.ChatRoomView) int {
		if a.Room.CreatedAt != b.Room.CreatedAt {
			return int(min(max(a.Room.CreatedAt-b.Room.CreatedAt, -1), 1))
		}
		return strings.Compare(a.Room.ID, b.Room.ID)
	})
	return out, nil
}

func (s *Server) roomList(c *call, views []raftfsm.ChatRoomView) error {
	r := s.users()
	out := make([]*roomJSON, 0, len(views))
	for _, v := range views {
		out = append(out, r.room(v, false))
	}
	return s.ok(c, map[string]any{"rooms": out})
}

// listRooms lists the rooms the caller participates in, or with
// ?lobby=true the rooms listed in the lobby.
func (s *Server) listRooms(c *call) error {
	lobby := string(c.ctx.QueryArgs().Peek("lobby"))
	if lobby != "" && lobby != "true" && lobby != "false" {
		return validationError(fieldErr("bool_parsing", "Input should be true or false", "query", "lobby"))
	}
	views, err := s.scan(c, raftfsm.ChatRoomFilter{IDs: c.ids, Lobby: lobby == "true"})
	if err != nil {
		return err
	}
	return s.roomList(c, views)
}

type roomBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Visibility  *string `json:"visibility"`
	Lobby       *bool   `json:"lobby"`
	OwnerID     *string `json:"ownerId"`
}

// check validates a room body; create requires a name, update at least one
// field. Lobby and OwnerID are for the internal lobby routes only.
func (b *roomBody) check(create, internal bool) error {
	var v validator
	if b.Name != nil { // stored trimmed, so measured trimmed
		name := strings.TrimSpace(*b.Name)
		b.Name = &name
	}
	if create {
		v.required("name", b.Name != nil)
	} else if b.Name == nil && b.Description == nil && b.Visibility == nil && b.Lobby == nil {
		v.add("missing", "At least one field is required", "body")
	}
	v.optName("name", b.Name, maxRoomName)
	v.optText("description", b.Description, 0, maxDescription)
	v.visibility(b.Visibility)
	if !internal && b.Lobby != nil {
		v.add("extra_forbidden", "Extra inputs are not permitted", "body", "lobby")
	}
	if !internal && b.OwnerID != nil {
		v.add("extra_forbidden", "Extra inputs are not permitted", "body", "ownerId")
	} else if b.OwnerID != nil && (!create || !validID(userPrefix, *b.OwnerID)) {
		v.add("value_error", "Input should be a user id (usr_<ulid>) on creation", "body", "ownerId")
	}
	return v.err()
}

// cmd turns the body into a create or update command.
func (b *roomBody) cmd(op raftfsm.ChatOp, room string) *raftfsm.ChatCmd {
	c := &raftfsm.ChatCmd{Op: op, Room: room}
	if b.Name != nil {
		c.SetName, c.Name = true, strings.TrimSpace(*b.Name)
	}
	if b.Description != nil {
		c.SetDesc, c.Desc = true, *b.Description
	}
	if b.Visibility != nil {
		c.SetVis, c.Vis = true, *b.Visibility
	}
	if b.Lobby != nil {
		c.SetLobby, c.Lobby = true, *b.Lobby
	}
	return c
}

func (s *Server) createRoom(c *call) error {
	var body roomBody
	if err := decodeBody(c.ctx.PostBody(), &body, false); err != nil {
		return err
	}
	if err := body.check(true, false); err != nil {
		return err
	}
	if err := s.countRoomCreation(c); err != nil {
		return err
	}
	id, fw, here := s.newRoomID(c)
	if !here {
		return s.forward(c, fw, id)
	}
	cmd := body.cmd(raftfsm.ChatCreateRoom, id)
	if !cmd.SetVis {
		cmd.Vis = raftfsm.ChatPrivate
	}
	if _, err := s.propose(c, cmd); err != nil {
		return err
	}
	return s.roomReply(c, cmd.Room, 201)
}

// Rooms a user may create in a window: each is a tenant of its own, and
// one guest made 500 in 1.5 s.
const (
	maxRoomsPerUser = 100
	roomWindow      = 15 * time.Minute
)

// countRoomCreation refuses a user past maxRoomsPerUser creations in the
// window, and counts this one.
func (s *Server) countRoomCreation(c *call) error {
	return s.countUser(c, s.roomLimits, maxRoomsPerUser, "room_creation_limit", "Too many rooms created; try again later")
}

// countUser refuses the caller past max requests in lim's window (429 with
// reason), and counts this one, on the node the client reached (a request
// forwarded from there was counted there).
func (s *Server) countUser(c *call, lim *ratelimit.Limiter, max int, reason, msg string) error {
	if relay.Relayed(c.ctx) {
		return nil
	}
	if ok, wait := lim.Take(c.user.ID, max); !ok {
		return rateLimited(c, reason, msg, wait)
	}
	return nil
}

// roomReply answers the room as it is now, participants included.
func (s *Server) roomReply(c *call, id string, status int) error {
	_, v, err := s.readRoom(c, id)
	if err != nil {
		return err
	}
	s.reply(c, status, s.users().room(v, true))
	return nil
}

func (s *Server) getRoom(c *call) error {
	_, v, err := s.memberRoom(c, roomParam(c))
	if err != nil {
		return err
	}
	return s.ok(c, s.users().room(v, true))
}

func (s *Server) updateRoom(c *call) error {
	id := roomParam(c)
	var body roomBody
	if err := decodeBody(c.ctx.PostBody(), &body, false); err != nil {
		return err
	}
	if err := body.check(false, false); err != nil {
		return err
	}
	if _, _, err := s.readRoom(c, id); err != nil {
		return err
	}
	if _, err := s.propose(c, body.cmd(raftfsm.ChatUpdateRoom, id)); err != nil {
		return err
	}
	return s.roomReply(c, id, 200)
}

func (s *Server) deleteRoom(c *call) error {
	id := roomParam(c)
	if _, _, err := s.readRoom(c, id); err != nil {
		return err
	}
	if _, err := s.propose(c, &raftfsm.ChatCmd{Op: raftfsm.ChatDeleteRoom, Room: id}); err != nil {
		return err
	}
	return s.ok(c, map[string]any{"success": true})
}

func roomParam(c *call) string {
	id, _ := c.ctx.UserValue("roomId").(string)
	return id
}
