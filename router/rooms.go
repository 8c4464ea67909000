package router

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/router/relay"
)

// Room and invite limits (operator.md §4, interface §8).
const (
	maxRoomName       = 200
	maxInviteUses     = 1000
	defaultInviteDays = 7
	maxInviteDays     = 365
	invitePrefix      = "mshare_"
	roomIDPrefix      = "room_"
)

type roomJSON struct {
	RoomID     string `json:"room_id"`
	Address    string `json:"address"`
	Name       string `json:"name"`
	OwnerOrgID string `json:"owner_org_id"`
	Status     string `json:"status"`
	CreatedAt  string `json:"created_at"`
}

func renderRoom(r raftfsm.Room) roomJSON {
	return roomJSON{RoomID: r.ID, Address: roomPrefix + r.ID, Name: r.Name, OwnerOrgID: r.Owner,
		Status: roomStatus(r), CreatedAt: formatMicros(r.CreatedAt)}
}

func roomStatus(r raftfsm.Room) string {
	if r.Archived {
		return "archived"
	}
	return "active"
}

// Rooms an org may create in a window: no route deletes one, each is
// kept by every replica of its group, and one key made 10,000 in 26 s.
const (
	maxRoomsPerOrg = 100
	roomWindow     = 15 * time.Minute
	roomLimitKeys  = 100_000
)

// countRoomCreation refuses an org past maxRoomsPerOrg creations in the
// window (429 RATE_LIMITED room_creation_limit, retryable, Retry-After), and
// counts this one, on the node the client reached.
func (s *Server) countRoomCreation(c *call) error {
	if relay.Relayed(c.ctx) {
		return nil
	}
	ok, wait := s.rooms.Take(c.org, maxRoomsPerOrg)
	if ok {
		return nil
	}
	return retryLater("room_creation_limit", "Too many rooms created; try again later", maxRoomsPerOrg, int(wait.Seconds())+1)
}

type createRoomRequest struct {
	Name *string `json:"name"`
}

func (s *Server) createRoom(c *call) error {
	var req createRoomRequest
	if err := decodeBody(c.ctx.PostBody(), &req, true); err != nil {
		return err
	}
	v := &validator{}
	if req.Name == nil {
		v.add("missing", "Field required", "name")
	} else {
		v.strLen(strings.TrimSpace(*req.Name), 1, maxRoomName, "name")
	}
	if err := v.err(); err != nil {
		return err
	}
	if err := s.countRoomCreation(c); err != nil {
		return err
	}
	id := roomIDPrefix + ulid.Make().String()
	res, err := s.roomCmd(c, &raftfsm.RoomCmd{Op: raftfsm.RoomCreate, RoomID: id,
		Name: strings.TrimSpace(*req.Name), Org: c.org})
	if err != nil {
		return err
	}
	return s.ok(c, renderRoom(res.Room))
}

// roomCmd proposes a room command in the room's group and maps its error.
func (s *Server) roomCmd(c *call, cmd *raftfsm.RoomCmd) (*raftfsm.RoomResult, error) {
	cmd.At = time.Now().UnixMicro()
	out, err := s.backend.Propose(c.std, cmd.RoomID, cmd.Encode())
	if err != nil {
		return nil, roomsUnavailable(err)
	}
	res, ok := out.(*raftfsm.RoomResult)
	if !ok {
		return nil, fmt.Errorf("unexpected room result %T", out)
	}
	if res.Err != nil {
		switch {
		case errors.Is(res.Err, raftfsm.ErrNotFound):
			return nil, notFound(res.Err.Message)
		case errors.Is(res.Err, raftfsm.ErrForbidden):
			return nil, forbidden(res.Err.Message)
		case errors.Is(res.Err, raftfsm.ErrConflict):
			return nil, conflict(res.Err.Message)
		}
		return nil, internalError()
	}
	return res, nil
}

type roomListItemJSON struct {
	RoomID    string  `json:"room_id"`
	Address   string  `json:"address"`
	Name      string  `json:"name"`
	Role      string  `json:"role"`
	Scope     string  `json:"scope"`
	Status    string  `json:"status"`
	ExpiresAt *string `json:"expires_at"`
}

// listRooms gathers the caller's rooms from every group.
func (s *Server) listRooms(c *call) error {
	now := time.Now().UnixMicro()
	views, err := s.backend.RoomsOf(c.std, c.org, now)
	if err != nil {
		return unavailable(msgRoomsUnavail)
	}
	sortRoomViews(views)
	out := make([]roomListItemJSON, len(views))
	for i, v := range views {
		role := "member"
		if v.Room.Owner == c.org {
			role = "owner"
		}
		out[i] = roomListItemJSON{RoomID: v.Room.ID, Address: roomPrefix + v.Room.ID, Name: v.Room.Name,
			Role: role, Scope: v.Member.Scope, Status: roomStatus(v.Room), ExpiresAt: optMicros(v.Member.ExpiresAt)}
	}
	return s.ok(c, map[string]any{"rooms": out})
}

// sortRoomViews orders the rooms gathered from every group by creation,
// then ID; stable, so equal views keep the order they were gathered in.
func sortRoomViews(v []raftfsm.RoomView) {
	slices.SortStableFunc(v, func(x, y raftfsm.RoomView) int {
		if c := cmp.Compare(x.Room.CreatedAt, y.Room.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(x.Room.ID, y.Room.ID)
	})
}

// ownedRoom loads the room of the path for an owner-only route.
func (s *Server) ownedRoom(c *call) (raftfsm.RoomView, error) {
	id := c.param("room_id")
	if !strings.HasPrefix(id, roomIDPrefix) || checkRoomID(id) != nil {
		return raftfsm.RoomView{}, notFound(msgRoomNotFound)
	}
	v, err := s.roomView(c, id)
	if err != nil {
		return v, err
	}
	if v.Room.Owner != c.org {
		return v, forbidden("Only the room owner can do this")
	}
	return v, nil
}

func randomBase62(n int) (string, error) {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		k, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", fmt.Errorf("cannot draw invite code: %w", err)
		}
		b[i] = alphabet[k.Int64()]
	}
	return string(b), nil
}

// Invite codes carry the room's ULID so a join is routed to the room's
// group with no global index: mshare_<ulid>_<22 random base62>.
func newInviteCode(roomID string) (string, error) {
	r, err := randomBase62(22)
	if err != nil {
		return "", err
	}
	return invitePrefix + strings.TrimPrefix(roomID, roomIDPrefix) + "_" + r, nil
}

func roomOfCode(code string) (string, bool) {
	rest, ok := strings.CutPrefix(code, invitePrefix)
	if !ok {
		return "", false
	}
	id, _, ok := strings.Cut(rest, "_")
	if !ok || len(id) != 26 {
		return "", false
	}
	if _, err := ulid.ParseStrict(id); err != nil {
		return "", false
	}
	return roomIDPrefix + id, true
}
