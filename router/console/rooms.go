package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

type roomsData struct {
	Rooms []roomItem
	Owner bool
	Name  string
}

func (c *Console) listRooms(r *http.Request, org string) ([]roomItem, error) {
	var res struct {
		Rooms []roomItem `json:"rooms"`
	}
	err := c.rest(r.Context(), org, http.MethodGet, "/memory/rooms", nil, &res)
	return res.Rooms, err
}

func (c *Console) rooms(w http.ResponseWriter, r *http.Request, v *view) {
	rooms, err := c.listRooms(r, v.Me.OrgID)
	if err != nil {
		c.failAPI(w, r, v, err)
		return
	}
	v.Nav, v.Title, v.Data = "rooms", "Rooms", roomsData{Rooms: rooms, Owner: v.Me.Owner()}
	c.render(w, http.StatusOK, "rooms", v)
}

func (c *Console) createRoom(w http.ResponseWriter, r *http.Request, v *view) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	var room struct {
		RoomID string `json:"room_id"`
	}
	if err := c.rest(r.Context(), v.Me.OrgID, http.MethodPost, "/memory/rooms", map[string]string{"name": name}, &room); err != nil {
		if e, ok := err.(*apiError); ok && e.Status == http.StatusBadRequest { //nolint:errorlint // unwrapped
			rooms, _ := c.listRooms(r, v.Me.OrgID)
			v.Nav, v.Title, v.Error = "rooms", "Rooms", "Give the room a name of 1 to 200 characters."
			v.Data = roomsData{Rooms: rooms, Owner: true, Name: name}
			c.render(w, http.StatusBadRequest, "rooms", v)
			return
		}
		c.failAPI(w, r, v, err)
		return
	}
	next := "Room created. Invite people by e-mail below."
	if c.mail == nil {
		next = "Room created." // the page says how to invite without e-mail
	}
	c.redirect(w, r, Base+"/rooms/"+room.RoomID, next)
}

type roomData struct {
	Room     roomItem
	Owner    bool // the session's org owns the room
	CanEdit  bool // ... and the user is an owner of that org
	Members  []member
	Invites  []cluster.ConsoleInvite
	MailOff  bool
	Scopes   []string
	Today    string
	JoinBase string
}

// findRoom returns the room of the path among the org's rooms; a room the
// org is not in answers 404, as the API does.
func (c *Console) findRoom(w http.ResponseWriter, r *http.Request, v *view) (roomItem, bool) {
	rooms, err := c.listRooms(r, v.Me.OrgID)
	if err != nil {
		c.failAPI(w, r, v, err)
		return roomItem{}, false
	}
	for _, rm := range rooms {
		if rm.RoomID == r.PathValue("id") {
			return rm, true
		}
	}
	c.fail(w, r, v, http.StatusNotFound, "Room not found.")
	return roomItem{}, false
}

func (c *Console) room(w http.ResponseWriter, r *http.Request, v *view) {
	rm, ok := c.findRoom(w, r, v)
	if !ok {
		return
	}
	c.showRoom(w, r, v, rm, http.StatusOK)
}

func (c *Console) showRoom(w http.ResponseWriter, r *http.Request, v *view, rm roomItem, status int) {
	d := roomData{Room: rm, Owner: rm.Role == "owner", MailOff: c.mail == nil,
		Scopes: []string{"read", "read_write"}, Today: time.Now().UTC().Format("2006-01-02"), JoinBase: c.cfg.PublicURL + Base + "/join/"}
	d.CanEdit = d.Owner && v.Me.Owner()
	if d.Owner {
		var res struct {
			Members []member `json:"members"`
		}
		if err := c.rest(r.Context(), v.Me.OrgID, http.MethodGet, "/memory/rooms/"+rm.RoomID+"/members", nil, &res); err != nil {
			c.failAPI(w, r, v, err)
			return
		}
		meta := c.b.Meta()
		for i := range res.Members {
			m := &res.Members[i]
			m.Owner = m.OrgID == v.Me.OrgID
			if o, ok := meta.Org(m.OrgID); ok {
				m.OrgName = o.Name
			}
		}
		d.Members = res.Members
		for _, inv := range meta.ConsoleRoomInvites(rm.RoomID, time.Now()) {
			if inv.OrgID == v.Me.OrgID {
				d.Invites = append(d.Invites, inv)
			}
		}
	}
	v.Nav, v.Title, v.Data = "rooms", rm.Name, d
	c.render(w, status, "room", v)
}

// ownedRoom is findRoom for the owner-only actions.
func (c *Console) ownedRoom(w http.ResponseWriter, r *http.Request, v *view) (roomItem, bool) {
	rm, ok := c.findRoom(w, r, v)
	if ok && rm.Role != "owner" {
		c.fail(w, r, v, http.StatusForbidden, "Only the room's owner can do this.")
		return rm, false
	}
	return rm, ok
}

// roomAction runs a REST change of an owned room and goes back to it.
func (c *Console) roomAction(w http.ResponseWriter, r *http.Request, v *view, method, path string, body any, done string) {
	rm, ok := c.ownedRoom(w, r, v)
	if !ok {
		return
	}
	if err := c.rest(r.Context(), v.Me.OrgID, method, "/memory/rooms/"+rm.RoomID+path, body, nil); err != nil {
		if e, isAPI := err.(*apiError); isAPI && e.Status < 500 { //nolint:errorlint // unwrapped
			v.Error = e.Text()
			c.showRoom(w, r, v, rm, e.Status)
			return
		}
		c.failAPI(w, r, v, err)
		return
	}
	c.redirect(w, r, Base+"/rooms/"+rm.RoomID, done)
}

func (c *Console) updateMember(w http.ResponseWriter, r *http.Request, v *view) {
	body := map[string]any{"scope": r.PostFormValue("scope"), "expires_at": nil}
	d := strings.TrimSpace(r.PostFormValue("expires"))
	if shown, ok := r.PostForm["expires_shown"]; ok && d == strings.TrimSpace(shown[0]) {
		// The date as shown: keep the expiry (one set through the API at
		// 10:00 became 23:59:59 of its day when only the access changed).
		delete(body, "expires_at")
	} else if d != "" {
		t, err := time.Parse("2006-01-02", d)
		if err != nil {
			body["expires_at"] = d // the API explains what is wrong
		} else {
			body["expires_at"] = t.Add(24*time.Hour - time.Second).UTC().Format(time.RFC3339)
		}
	}
	c.roomAction(w, r, v, http.MethodPatch, "/members/"+url.PathEscape(r.PathValue("org")), body, "Membership updated.")
}

func (c *Console) revokeMember(w http.ResponseWriter, r *http.Request, v *view) {
	c.roomAction(w, r, v, http.MethodDelete, "/members/"+url.PathEscape(r.PathValue("org")), nil,
		"Membership revoked. The member's next request to the room gets 403.")
}

func (c *Console) archiveRoom(w http.ResponseWriter, r *http.Request, v *view) {
	c.roomAction(w, r, v, http.MethodPost, "/archive", nil, "Room archived. Members can no longer read or write it.")
}
