package router

import (
	"strings"
	"time"
	"unicode"

	"github.com/hebbdb/hebb/raftfsm"
)

// Room addresses (interface §7.3).
const roomPrefix = "xroom:"

const (
	nonCanonicalRoomMsg = "Non-canonical room address; use 'xroom:<room_id>' (no leading space, lowercase prefix)"
	malformedRoomIDMsg  = "Malformed room id: "
)

// isRoomMessage reports a §7.3 message that a 400 carries as its message.
func isRoomMessage(msg string) bool {
	return msg == nonCanonicalRoomMsg || msg == roomOnV2Msg || msg == roomDeleteMsg ||
		strings.HasPrefix(msg, malformedRoomIDMsg)
}

type domainKind int

const (
	domainPrivate domainKind = iota
	domainRoom
)

// classifyDomain tells a private domain from a room address. A near-miss of
// the canonical prefix (other case, leading space) is a 400; anything else
// not starting with xroom: is an ordinary private domain.
func classifyDomain(d string) (domainKind, string, *apiError) {
	if strings.HasPrefix(d, roomPrefix) {
		id := d[len(roomPrefix):]
		if err := checkRoomID(id); err != nil {
			return domainRoom, id, err
		}
		return domainRoom, id, nil
	}
	if nearRoomPrefix(d) {
		return domainRoom, "", validationError(fieldErr("value_error", nonCanonicalRoomMsg, "domain"))
	}
	return domainPrivate, d, nil
}

// nearRoomPrefix reports whether d begins with a near miss of the room
// prefix (§7.3): after any leading white space or invisible format
// characters (a pasted no-break space, a zero-width space, a byte order
// mark), the prefix in any case, its letters possibly full-width (ｘroom:).
// Such a domain was meant for a room and would otherwise be stored as a
// private one without a word.
func nearRoomPrefix(d string) bool {
	d = strings.TrimLeftFunc(d, func(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) })
	var head []rune
	for _, r := range d {
		if len(head) == len(roomPrefix) {
			break
		}
		if r >= 0xFF01 && r <= 0xFF5E { // full-width forms of ASCII ! to ~
			r -= 0xFEE0
		}
		head = append(head, r)
	}
	return strings.EqualFold(string(head), roomPrefix)
}

var reservedRoomIDs = map[string]bool{"": true, "room_": true, "system": true, "admin": true}

func checkRoomID(id string) *apiError {
	for _, r := range id {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return validationError(fieldErr("value_error", malformedRoomIDMsg+id, "domain"))
		}
	}
	if reservedRoomIDs[id] {
		return forbidden("Invalid room address")
	}
	return nil
}

// Room access messages (interface §7.3).
const (
	msgRoomNotFound = "Room not found"
	msgNotMember    = "Not an active member of this room"
	msgArchived     = "Room is archived"
	msgReadOnly     = "Read-only membership cannot write to this room"
	msgRoomsUnavail = "Service unavailable: rooms require the DB backend"
)

// roomTenant resolves a room address for a data-path call to the room's
// tenant after the membership check, made in the room's group against the
// caller's org: 404 no such room, 403 not an active member, then 403
// archived (membership is checked first), then scope when write is set.
func (s *Server) roomTenant(c *call, id string, write bool) (string, error) {
	if err := checkRoomID(id); err != nil {
		return "", err
	}
	v, err := s.roomView(c, id)
	if err != nil {
		return "", err
	}
	if v.Member == nil || !v.Member.Active(time.Now().UnixMicro()) {
		return "", forbidden(msgNotMember)
	}
	if v.Room.Archived {
		return "", forbidden(msgArchived)
	}
	if write && v.Member.Scope != raftfsm.ScopeReadWrite {
		return "", forbidden(msgReadOnly)
	}
	if c.rooms == nil {
		c.rooms = make(map[string]raftfsm.RoomView)
	}
	c.rooms[id] = v
	return id, nil
}

// roomsUnavailable maps a failure to reach a room's group to the
// interface's 503, except a *cluster.NotHostedError: plain then forwards
// the whole request to a node holding the room's group (a room is a tenant
// of its own, often in another group than the caller's org).
func roomsUnavailable(err error) error {
	if _, ok := notHosted(err); ok {
		return err
	}
	return unavailable(msgRoomsUnavail)
}

// roomView reads a room and the caller's membership from the room's group.
func (s *Server) roomView(c *call, id string) (raftfsm.RoomView, error) {
	fsm, err := s.backend.ReadFSM(c.std, id)
	if err != nil {
		return raftfsm.RoomView{}, roomsUnavailable(err)
	}
	v, found := fsm.Room(id, c.org)
	if !found {
		return raftfsm.RoomView{}, notFound(msgRoomNotFound)
	}
	return v, nil
}

// privateDomain validates a domain that must not be a room (query,
// read-batch, write-batch, delete domain): room addresses get msg.
func privateDomain(d string, roomMsg string, loc ...any) *apiError {
	kind, _, err := classifyDomain(d)
	if err != nil && kind != domainRoom {
		return err
	}
	if kind == domainRoom {
		return validationError(fieldErr("value_error", roomMsg, loc...))
	}
	return nil
}
