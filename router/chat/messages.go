package chat

import (
	"strconv"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

type messageBody struct {
	Content *string `json:"content"`
}

func (b *messageBody) check() error {
	var v validator
	if v.required("content", b.Content != nil) {
		v.text("content", *b.Content, 1, maxMessageChars)
	}
	return v.err()
}

// readPage reads ?limit, ?before and ?after (at most one of the last two);
// none is set when the page is empty whatever the room holds (before=0).
func readPage(c *call) (p raftfsm.ChatPage, none bool, err error) {
	var v validator
	args := c.ctx.QueryArgs()
	p = raftfsm.ChatPage{Limit: defaultPageLimit}
	if raw := args.Peek("limit"); raw != nil {
		n, err := strconv.Atoi(string(raw))
		switch {
		case err != nil:
			v.add("int_parsing", "Input should be an integer from 1 to 100", "query", "limit")
		case n < 1:
			v.add("greater_than_equal", "Input should be greater than or equal to 1", "query", "limit")
		case n > maxPageLimit:
			v.add("less_than_equal", "Input should be less than or equal to 100", "query", "limit")
		}
		p.Limit = n
	}
	var before bool
	p.Before, before = queryUint(args, "before", &v)
	p.After, p.Forward = queryUint(args, "after", &v)
	if p.Forward && args.Has("before") {
		v.add("value_error", "Give either before or after, not both", "query", "after")
	}
	return p, before && p.Before == 0, v.err() // nothing comes before the first message
}

// listMessages pages through a room's messages: newest first (before a
// cursor), or oldest first after a cursor.
func (s *Server) listMessages(c *call) error {
	return s.messagePage(c, roomParam(c), true)
}

func (s *Server) messagePage(c *call, room string, member bool) error {
	page, none, err := readPage(c)
	if err != nil {
		return err
	}
	read := s.readRoom
	if member {
		read = s.memberRoom
	}
	fsm, v, err := read(c, room)
	if err != nil {
		return err
	}
	msgs, more, ok := fsm.ChatMessages(room, page)
	if !ok {
		return notFound(raftfsm.ChatMsgRoomNotFound)
	}
	if none {
		msgs, more = msgs[:0], false
	}
	var next *uint64
	if more && len(msgs) > 0 {
		last := msgs[len(msgs)-1].Seq
		next = &last
	}
	return s.ok(c, map[string]any{"messages": s.users().messages(room, msgs), "hasMore": more,
		"nextCursor": next, "cursor": v.Head})
}

// Messages a user may post in a window: each is kept, in memory too, for
// as long as its room lives, and nothing else bounded a guest's (1,500
// posts in 3.5 s added 74 MB).
const (
	maxMessagesPerUser = 1000
	messageWindow      = 15 * time.Minute
)

func (s *Server) postMessage(c *call) error {
	room := roomParam(c)
	var body messageBody
	if err := decodeBody(c.ctx.PostBody(), &body, false); err != nil {
		return err
	}
	if err := body.check(); err != nil {
		return err
	}
	if !validID(roomPrefix, room) {
		return notFound(raftfsm.ChatMsgRoomNotFound)
	}
	if err := s.countUser(c, s.msgLimits, maxMessagesPerUser, "message_limit", "Too many messages posted; try again later"); err != nil {
		return err
	}
	res, err := s.propose(c, &raftfsm.ChatCmd{Op: raftfsm.ChatPost, Room: room, Message: newID(messagePrefix), Content: *body.Content})
	if err != nil {
		return err
	}
	return s.created(c, s.users().message(room, *res.Message))
}

// messageTarget reads the room and message IDs of a message route.
func messageTarget(c *call) (room, msg string, err error) {
	room = roomParam(c)
	msg, _ = c.ctx.UserValue("messageId").(string)
	if !validID(roomPrefix, room) {
		return "", "", notFound(raftfsm.ChatMsgRoomNotFound)
	}
	if !validID(messagePrefix, msg) {
		return "", "", notFound(raftfsm.ChatMsgMessageNotFound)
	}
	return room, msg, nil
}

// editMessage replaces the content; the earlier versions stay in history.
func (s *Server) editMessage(c *call) error {
	var body messageBody
	if err := decodeBody(c.ctx.PostBody(), &body, false); err != nil {
		return err
	}
	if err := body.check(); err != nil {
		return err
	}
	room, msg, err := messageTarget(c)
	if err != nil {
		return err
	}
	res, err := s.propose(c, &raftfsm.ChatCmd{Op: raftfsm.ChatEdit, Room: room, Message: msg,
		Content: *body.Content, Limit: maxEdits + 1})
	if err != nil {
		return err
	}
	return s.ok(c, s.users().message(room, *res.Message))
}

func (s *Server) deleteMessage(c *call) error {
	room, msg, err := messageTarget(c)
	if err != nil {
		return err
	}
	if _, err := s.propose(c, &raftfsm.ChatCmd{Op: raftfsm.ChatDeleteMessage, Room: room, Message: msg}); err != nil {
		return err
	}
	return s.ok(c, map[string]any{"success": true})
}
