package router

import (
	"strings"
)

// Room addresses (interface §7.3).
const roomPrefix = "xroom:"

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
	trimmed := strings.TrimLeft(d, " \t\r\n")
	if len(trimmed) >= len(roomPrefix) && strings.EqualFold(trimmed[:len(roomPrefix)], roomPrefix) {
		return domainRoom, "", validationError(fieldErr("value_error",
			"Non-canonical room address; use 'xroom:<room_id>' (no leading space, lowercase prefix)", "domain"))
	}
	return domainPrivate, d, nil
}

var reservedRoomIDs = map[string]bool{"": true, "room_": true, "system": true, "admin": true}

func checkRoomID(id string) *apiError {
	for _, r := range id {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return validationError(fieldErr("value_error", "Malformed room id: "+id, "domain"))
		}
	}
	if reservedRoomIDs[id] {
		return forbidden("Invalid room address")
	}
	return nil
}

// roomTenant resolves a room address for a data-path call to the room's
// tenant, after the membership check (write asks for read_write scope).
// Rooms are not stored yet, so every well-formed address names no room.
func (s *Server) roomTenant(c *call, id string, write bool) (string, error) {
	if err := checkRoomID(id); err != nil {
		return "", err
	}
	return "", notFound("Room not found")
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
