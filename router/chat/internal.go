package chat

import (
	"crypto/sha256"
	"crypto/subtle"

	frouter "github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/raftfsm"
)

// Internal routes: for a trusted service (a realtime server, a bot, the
// lobby), authenticated by the service token (--chat-service-token) in
// X-Service-Token or Authorization: Bearer. They skip participant checks.
func (s *Server) internalRoutes(r *frouter.Router) {
	r.POST("/internal/messages", s.internal(s.internalPost))
	r.GET("/internal/rooms/{roomId}", s.internal(s.hosted(s.internalRoom)))
	r.GET("/internal/rooms/{roomId}/messages", s.internal(s.hosted(s.internalMessages)))
	r.GET("/internal/users/{userId}", s.internal(s.internalUser))
	r.GET("/internal/lobby/rooms", s.internal(s.lobbyRooms))
	r.POST("/internal/lobby/rooms", s.internal(s.createLobbyRoom))
	r.PATCH("/internal/lobby/rooms/{roomId}", s.internal(s.hosted(s.updateLobbyRoom)))
	r.DELETE("/internal/lobby/rooms/{roomId}", s.internal(s.hosted(s.deleteLobbyRoom)))
}

func (s *Server) internal(h func(*call) error) fasthttp.RequestHandler {
	return s.public(func(c *call) error {
		if err := s.checkService(c); err != nil {
			return err
		}
		return h(c)
	})
}

// checkService compares the presented token with the configured one in
// constant time (over their SHA-256, so the length leaks nothing either).
func (s *Server) checkService(c *call) error {
	if s.cfg.ServiceToken == "" {
		return notFound("Not found").with("reason", "internal_disabled")
	}
	tok := string(c.ctx.Request.Header.Peek("X-Service-Token"))
	if tok == "" {
		tok, _ = cutBearer(string(c.ctx.Request.Header.Peek("Authorization")))
	}
	if tok == "" {
		return unauthorized("missing_service_token", "Service token required")
	}
	got, want := sha256.Sum256([]byte(tok)), sha256.Sum256([]byte(s.cfg.ServiceToken))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return unauthorized("invalid_service_token", "Service token rejected")
	}
	return nil
}

type internalMessageBody struct {
	RoomID  *string `json:"roomId"`
	UserID  *string `json:"userId"`
	Content *string `json:"content"`
}

// internalPost posts a message as a participant (userId) or, without
// userId, as the system.
func (s *Server) internalPost(c *call) error {
	var body internalMessageBody
	if err := decodeBody(c.ctx.PostBody(), &body, false); err != nil {
		return err
	}
	var v validator
	v.required("roomId", body.RoomID != nil)
	if v.required("content", body.Content != nil) {
		v.text("content", *body.Content, 1, maxMessageChars)
	}
	if body.UserID != nil && !validID(userPrefix, *body.UserID) {
		v.add("value_error", "Input should be a user id (usr_<ulid>)", "body", "userId")
	}
	if err := v.err(); err != nil {
		return err
	}
	if !validID(roomPrefix, *body.RoomID) {
		return notFound(raftfsm.ChatMsgRoomNotFound)
	}
	author := systemAuthor
	if body.UserID != nil {
		u, ok := s.chatUser(c, *body.UserID)
		if !ok {
			return notFound("User not found")
		}
		author = u.ID
	}
	res, err := s.propose(c, &raftfsm.ChatCmd{Op: raftfsm.ChatPost, Service: true, Room: *body.RoomID, User: author,
		Message: newID(messagePrefix), Content: *body.Content})
	if err != nil {
		return err
	}
	return s.created(c, s.users().message(*body.RoomID, *res.Message))
}

func (s *Server) internalRoom(c *call) error {
	_, v, err := s.readRoom(c, roomParam(c))
	if err != nil {
		return err
	}
	return s.ok(c, s.users().room(v, true))
}

func (s *Server) internalMessages(c *call) error {
	return s.messagePage(c, roomParam(c), false)
}

func (s *Server) internalUser(c *call) error {
	id, _ := c.ctx.UserValue("userId").(string)
	if !validID(userPrefix, id) {
		return notFound("User not found")
	}
	u, ok := s.chatUser(c, id)
	if !ok {
		return notFound("User not found")
	}
	return s.ok(c, userView(u, true))
}

func (s *Server) lobbyRooms(c *call) error {
	views, err := s.scan(c, raftfsm.ChatRoomFilter{Lobby: true})
	if err != nil {
		return err
	}
	return s.roomList(c, views)
}

// createLobbyRoom creates a room listed in the lobby: public unless told
// otherwise, owned by ownerId or by nobody.
func (s *Server) createLobbyRoom(c *call) error {
	var body roomBody
	if err := decodeBody(c.ctx.PostBody(), &body, false); err != nil {
		return err
	}
	if err := body.check(true, true); err != nil {
		return err
	}
	id, fw, here := s.newRoomID(c)
	if !here {
		return s.forward(c, fw, id)
	}
	cmd := body.cmd(raftfsm.ChatCreateRoom, id)
	cmd.Service = true
	if !cmd.SetVis {
		cmd.Vis = raftfsm.ChatPublic
	}
	if !cmd.SetLobby {
		cmd.Lobby = true
	}
	if body.OwnerID != nil {
		u, ok := s.chatUser(c, *body.OwnerID)
		if !ok {
			return notFound("User not found")
		}
		cmd.Actor = u.ID
	}
	if _, err := s.propose(c, cmd); err != nil {
		return err
	}
	return s.roomReply(c, cmd.Room, 201)
}

func (s *Server) updateLobbyRoom(c *call) error {
	id := roomParam(c)
	var body roomBody
	if err := decodeBody(c.ctx.PostBody(), &body, false); err != nil {
		return err
	}
	if err := body.check(false, true); err != nil {
		return err
	}
	if _, _, err := s.readRoom(c, id); err != nil {
		return err
	}
	cmd := body.cmd(raftfsm.ChatUpdateRoom, id)
	cmd.Service = true
	if _, err := s.propose(c, cmd); err != nil {
		return err
	}
	return s.roomReply(c, id, 200)
}

func (s *Server) deleteLobbyRoom(c *call) error {
	id := roomParam(c)
	if _, _, err := s.readRoom(c, id); err != nil {
		return err
	}
	if _, err := s.propose(c, &raftfsm.ChatCmd{Op: raftfsm.ChatDeleteRoom, Room: id, Service: true}); err != nil {
		return err
	}
	return s.ok(c, map[string]any{"success": true})
}
