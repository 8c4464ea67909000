package client

import (
	"context"
	"net/http"
	"time"
)

// Room scopes and statuses (operator.md §4).
const (
	ScopeRead      = "read"
	ScopeReadWrite = "read_write"

	RoomActive   = "active"
	RoomArchived = "archived"

	MemberActive  = "active"
	MemberExpired = "expired"
	MemberRevoked = "revoked"
)

// RoomAddress is the domain value that addresses a room: "xroom:<room_id>".
func RoomAddress(roomID string) string { return "xroom:" + roomID }

// Room is a room record (create and archive answers).
type Room struct {
	RoomID     string    `json:"room_id"`
	Address    string    `json:"address"`
	Name       string    `json:"name"`
	OwnerOrgID string    `json:"owner_org_id"`
	Status     string    `json:"status"`
	CreatedAt  time.Time `json:"created_at"`
}

// RoomListing is one room the caller belongs to.
type RoomListing struct {
	RoomID    string     `json:"room_id"`
	Address   string     `json:"address"`
	Name      string     `json:"name"`
	Role      string     `json:"role"` // owner or member
	Scope     string     `json:"scope"`
	Status    string     `json:"status"`
	ExpiresAt *time.Time `json:"expires_at"`
}

type createRoomRequest struct {
	Name string `json:"name"`
}

// CreateRoom creates a room owned by the caller.
func (c *Client) CreateRoom(ctx context.Context, name string) (*Room, error) {
	var out Room
	if err := c.post(ctx, "/memory/rooms", createRoomRequest{Name: name}, false, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Rooms lists the rooms the caller owns or has joined.
func (c *Client) Rooms(ctx context.Context) ([]RoomListing, error) {
	var out struct {
		Rooms []RoomListing `json:"rooms"`
	}
	if err := c.get(ctx, "/memory/rooms", &out); err != nil {
		return nil, err
	}
	return out.Rooms, nil
}

// InviteRequest sets an invite's scope (default read_write), redemptions
// (1 to 1000, default 1) and lifetime in days (default 7).
type InviteRequest struct {
	Scope         string `json:"scope,omitempty"`
	MaxUses       int    `json:"max_uses,omitempty"`
	ExpiresInDays int    `json:"expires_in_days,omitempty"`
}

// Invite is a share code of a room.
type Invite struct {
	Code         string    `json:"code"` // mshare_...
	RoomID       string    `json:"room_id"`
	Scope        string    `json:"scope"`
	MaxUses      int       `json:"max_uses"`
	Uses         int       `json:"uses"`
	ExpiresAt    time.Time `json:"expires_at"`
	JoinURL      string    `json:"join_url"`
	ShareMessage string    `json:"share_message"`
}

// CreateInvite mints a share code for a room the caller owns.
func (c *Client) CreateInvite(ctx context.Context, roomID string, req InviteRequest) (*Invite, error) {
	var out Invite
	if err := c.post(ctx, "/memory/rooms/"+seg(roomID)+"/invites", req, false, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Invites lists the outstanding invites of a room the caller owns.
func (c *Client) Invites(ctx context.Context, roomID string) ([]Invite, error) {
	var out struct {
		Invites []Invite `json:"invites"`
	}
	if err := c.get(ctx, "/memory/rooms/"+seg(roomID)+"/invites", &out); err != nil {
		return nil, err
	}
	return out.Invites, nil
}

// Joined is the answer of a redeemed invite.
type Joined struct {
	RoomID  string `json:"room_id"`
	Address string `json:"address"`
	Scope   string `json:"scope"`
}

type joinRequest struct {
	Code string `json:"code"`
}

// JoinRoom redeems an invite code; the caller's account becomes a member.
func (c *Client) JoinRoom(ctx context.Context, code string) (*Joined, error) {
	var out Joined
	if err := c.post(ctx, "/memory/rooms/join", joinRequest{Code: code}, false, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Member is one membership of a room.
type Member struct {
	OrgID     string     `json:"org_id"`
	Scope     string     `json:"scope"`
	Status    string     `json:"status"` // active, expired or revoked
	ExpiresAt *time.Time `json:"expires_at"`
	JoinedAt  time.Time  `json:"joined_at"`
}

// Members lists a room's memberships (owner only).
func (c *Client) Members(ctx context.Context, roomID string) ([]Member, error) {
	var out struct {
		Members []Member `json:"members"`
	}
	if err := c.get(ctx, "/memory/rooms/"+seg(roomID)+"/members", &out); err != nil {
		return nil, err
	}
	return out.Members, nil
}

// MemberUpdate changes a membership: Scope when non-empty; ExpiresAt when
// set, Null[time.Time]() removing the expiry.
type MemberUpdate struct {
	Scope     string              `json:"scope,omitempty"`
	ExpiresAt Nullable[time.Time] `json:"expires_at,omitzero"`
}

// UpdateMember changes a member's scope or expiry (owner only).
func (c *Client) UpdateMember(ctx context.Context, roomID, orgID string, req MemberUpdate) (*Member, error) {
	var out Member
	path := "/memory/rooms/" + seg(roomID) + "/members/" + seg(orgID)
	if err := c.send(ctx, http.MethodPatch, path, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RevokeMember revokes a membership (owner only); the answer has status revoked.
func (c *Client) RevokeMember(ctx context.Context, roomID, orgID string) (*Member, error) {
	var out Member
	path := "/memory/rooms/" + seg(roomID) + "/members/" + seg(orgID)
	if err := c.send(ctx, http.MethodDelete, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ArchiveRoom archives a room (owner only); members' data calls then get 403.
func (c *Client) ArchiveRoom(ctx context.Context, roomID string) (*Room, error) {
	var out Room
	if err := c.send(ctx, http.MethodPost, "/memory/rooms/"+seg(roomID)+"/archive", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
