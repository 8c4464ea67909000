package router

import (
	"fmt"
	"strings"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

type inviteRequest struct {
	Scope         *string `json:"scope"`
	MaxUses       *int    `json:"max_uses"`
	ExpiresInDays *int    `json:"expires_in_days"`
}

type inviteJSON struct {
	Code         string `json:"code"`
	RoomID       string `json:"room_id"`
	Scope        string `json:"scope"`
	MaxUses      int    `json:"max_uses"`
	Uses         int    `json:"uses"`
	ExpiresAt    string `json:"expires_at"`
	JoinURL      string `json:"join_url"`
	ShareMessage string `json:"share_message"`
}

func (s *Server) consoleURL() string {
	return strings.TrimRight(s.cfg.PublicURL, "/") + "/console"
}

func (s *Server) renderInvite(roomID string, inv *raftfsm.Invite) inviteJSON {
	url := s.consoleURL() + "/join/" + inv.Code
	expires := formatMicros(inv.ExpiresAt)
	msg := fmt.Sprintf("You are invited to a shared hebb memory room (%s access). Join in the browser at %s, "+
		"or redeem the code %s with POST /memory/rooms/join or the memory_join_room tool. The code expires %s.",
		inv.Scope, url, inv.Code, expires)
	return inviteJSON{Code: inv.Code, RoomID: roomID, Scope: inv.Scope, MaxUses: inv.MaxUses, Uses: inv.Uses,
		ExpiresAt: expires, JoinURL: url, ShareMessage: msg}
}

func validScope(v *validator, scope *string, loc ...any) string {
	if scope == nil {
		return raftfsm.ScopeReadWrite
	}
	if *scope != raftfsm.ScopeRead && *scope != raftfsm.ScopeReadWrite {
		v.add("literal_error", "Input should be 'read' or 'read_write'", loc...)
	}
	return *scope
}

func (s *Server) createInvite(c *call) error {
	var req inviteRequest
	if body := c.ctx.PostBody(); len(body) > 0 {
		if err := decodeBody(body, &req, true); err != nil {
			return err
		}
	}
	v := &validator{}
	scope := validScope(v, req.Scope, "scope")
	uses, days := 1, defaultInviteDays
	if req.MaxUses != nil {
		v.intRange(*req.MaxUses, 1, maxInviteUses, "max_uses")
		uses = *req.MaxUses
	}
	if req.ExpiresInDays != nil {
		v.intRange(*req.ExpiresInDays, 1, maxInviteDays, "expires_in_days")
		days = *req.ExpiresInDays
	}
	if err := v.err(); err != nil {
		return err
	}
	room, err := s.ownedRoom(c)
	if err != nil {
		return err
	}
	code, err := newInviteCode(room.Room.ID)
	if err != nil {
		return err
	}
	res, err := s.roomCmd(c, &raftfsm.RoomCmd{Op: raftfsm.RoomInvite, RoomID: room.Room.ID, Code: code,
		Scope: scope, MaxUses: uses, ExpiresAt: time.Now().Add(time.Duration(days) * 24 * time.Hour).UnixMicro()})
	if err != nil {
		return err
	}
	return s.ok(c, s.renderInvite(room.Room.ID, res.Invite))
}

func (s *Server) listInvites(c *call) error {
	room, err := s.ownedRoom(c)
	if err != nil {
		return err
	}
	fsm, err := s.backend.ReadFSM(c.std, room.Room.ID)
	if err != nil {
		return roomsUnavailable(err)
	}
	invites := fsm.Invites(room.Room.ID, time.Now().UnixMicro())
	out := make([]inviteJSON, len(invites))
	for i := range invites {
		out[i] = s.renderInvite(room.Room.ID, &invites[i])
	}
	return s.ok(c, map[string]any{"invites": out})
}

type joinRequest struct {
	Code *string `json:"code"`
}

func (s *Server) joinRoom(c *call) error {
	var req joinRequest
	if err := decodeBody(c.ctx.PostBody(), &req, true); err != nil {
		return err
	}
	if req.Code == nil || strings.TrimSpace(*req.Code) == "" {
		return validationError(fieldErr("missing", "Field required", "code"))
	}
	code := strings.TrimSpace(*req.Code)
	roomID, ok := roomOfCode(code)
	if !ok || !s.inviteMayBeOutstanding(c, roomID, code) {
		return notFound("Invite not found")
	}
	res, err := s.roomCmd(c, &raftfsm.RoomCmd{Op: raftfsm.RoomJoin, RoomID: roomID, Code: code, Org: c.org})
	if err != nil {
		var ae *apiError
		if asAPI(err, &ae) && ae.Status == 404 {
			return notFound("Invite not found")
		}
		return err
	}
	return s.ok(c, joinJSON{RoomID: roomID, Address: roomPrefix + roomID, Scope: res.Member.Scope})
}

// inviteMayBeOutstanding looks the code up in the room's replica first, so
// that guessed and used-up codes are refused without a Raft entry each (any
// account could grow a room group's log at will); apply decides the rest.
// A node without a replica of the room's group, or one that cannot read
// it now, leaves it all to apply.
func (s *Server) inviteMayBeOutstanding(c *call, roomID, code string) bool {
	fsm, err := s.backend.ReadFSM(c.std, roomID)
	if err != nil {
		return true
	}
	return fsm.InviteOutstanding(roomID, code, time.Now().UnixMicro())
}

type joinJSON struct {
	RoomID  string `json:"room_id"`
	Address string `json:"address"`
	Scope   string `json:"scope"`
}

type memberJSON struct {
	OrgID     string  `json:"org_id"`
	Scope     string  `json:"scope"`
	Status    string  `json:"status"`
	ExpiresAt *string `json:"expires_at"`
	JoinedAt  string  `json:"joined_at"`
}

func renderMember(m *raftfsm.Member, now int64) memberJSON {
	return memberJSON{OrgID: m.Org, Scope: m.Scope, Status: m.Status(now), ExpiresAt: optMicros(m.ExpiresAt),
		JoinedAt: formatMicros(m.JoinedAt)}
}

func (s *Server) listMembers(c *call) error {
	room, err := s.ownedRoom(c)
	if err != nil {
		return err
	}
	fsm, err := s.backend.ReadFSM(c.std, room.Room.ID)
	if err != nil {
		return roomsUnavailable(err)
	}
	now := time.Now().UnixMicro()
	members := fsm.Members(room.Room.ID)
	out := make([]memberJSON, len(members))
	for i := range members {
		out[i] = renderMember(&members[i], now)
	}
	return s.ok(c, map[string]any{"members": out})
}

type memberPatch struct {
	Scope     *string   `json:"scope"`
	ExpiresAt nullField `json:"expires_at"`
}

func (s *Server) updateMember(c *call) error {
	var req memberPatch
	if err := decodeBody(c.ctx.PostBody(), &req, true); err != nil {
		return err
	}
	v := &validator{}
	cmd := raftfsm.RoomCmd{Op: raftfsm.RoomUpdateMember}
	if req.Scope != nil {
		cmd.Scope, cmd.SetScope = validScope(v, req.Scope, "scope"), true
	}
	if req.ExpiresAt.Set {
		cmd.SetExpiry = true
		if req.ExpiresAt.Value != nil {
			t, ok := parseInstant(*req.ExpiresAt.Value)
			switch {
			case !ok:
				v.add("datetime_parsing", "Input should be a valid ISO-8601 datetime", "expires_at")
			case !t.After(time.Now()):
				v.add("value_error", "expires_at must be in the future", "expires_at")
			}
			cmd.ExpiresAt = t.UnixMicro()
		}
	}
	if err := v.err(); err != nil {
		return err
	}
	return s.memberChange(c, &cmd)
}

func (s *Server) revokeMember(c *call) error {
	return s.memberChange(c, &raftfsm.RoomCmd{Op: raftfsm.RoomRevoke})
}

func (s *Server) memberChange(c *call, cmd *raftfsm.RoomCmd) error {
	room, err := s.ownedRoom(c)
	if err != nil {
		return err
	}
	cmd.RoomID = room.Room.ID
	cmd.Org = c.param("org_id")
	res, err := s.roomCmd(c, cmd)
	if err != nil {
		return err
	}
	return s.ok(c, renderMember(res.Member, time.Now().UnixMicro()))
}

func (s *Server) archiveRoom(c *call) error {
	if body := c.ctx.PostBody(); len(body) > 0 { // none needed; {} is accepted
		var none struct{}
		if err := decodeBody(body, &none, true); err != nil {
			return err
		}
	}
	room, err := s.ownedRoom(c)
	if err != nil {
		return err
	}
	res, err := s.roomCmd(c, &raftfsm.RoomCmd{Op: raftfsm.RoomArchive, RoomID: room.Room.ID})
	if err != nil {
		return err
	}
	return s.ok(c, renderRoom(res.Room))
}
