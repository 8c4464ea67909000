package console

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/ratelimit"
)

// invitationTTL is how long an e-mail invitation can be accepted.
const invitationTTL = 7 * 24 * time.Hour

const invitationPrefix = "hinv_"

// inviteByEmail stores an invitation and mails its link. The message does
// not name the room: its name is shown only once the recipient accepted.
func (c *Console) inviteByEmail(w http.ResponseWriter, r *http.Request, v *view) {
	rm, ok := c.ownedRoom(w, r, v)
	if !ok {
		return
	}
	showErr := func(status int, msg string) {
		v.Error = msg
		c.showRoom(w, r, v, rm, status)
	}
	if c.mail == nil {
		showErr(http.StatusServiceUnavailable, "E-mail is not configured on this server, so no invitation was sent.")
		return
	}
	email, msg := checkEmail(r.PostFormValue("email"))
	scope := r.PostFormValue("scope")
	switch {
	case msg != "":
		showErr(http.StatusBadRequest, msg)
		return
	case scope != "read" && scope != "read_write":
		showErr(http.StatusBadRequest, "Choose read or read & write access.")
		return
	case rm.Status != "active":
		showErr(http.StatusConflict, "This room is archived.")
		return
	}
	// The mail goes out from the operator's server naming the inviter by
	// an address nobody verified: at most maxInvitations a window per
	// person and per recipient, or anyone signed up could send mail
	// without limit.
	byKey, toKey := "i:"+v.Me.UserID, "r:"+email
	if ok, wait := c.limits.TakeAll(ratelimit.Limit{Key: byKey, Max: maxInvitations},
		ratelimit.Limit{Key: toKey, Max: maxInvitations}); !ok {
		showErr(http.StatusTooManyRequests, fmt.Sprintf("Too many invitations sent. Try again in %s.", span(wait+time.Minute)))
		return
	}
	tok := invitationPrefix + randomToken(32)
	now := time.Now().UTC()
	inv := cluster.ConsoleInvite{ID: "inv_" + ulid.Make().String(), Hash: hashToken(tok), Email: email, RoomID: rm.RoomID,
		Scope: scope, OrgID: v.Me.OrgID, InvitedBy: v.Me.UserID, CreatedAt: now, ExpiresAt: now.Add(invitationTTL)}
	if _, err := c.metaResult(r.Context(), cluster.EncodeConsoleInviteCreate(cluster.ConsoleInviteCreate{Invite: inv, Now: now})); err != nil {
		c.log.Error("console: cannot store invitation", "err", err)
		showErr(http.StatusServiceUnavailable, "Cannot create the invitation right now; try again.")
		return
	}
	if err := c.sendInvitation(r.Context(), v.Me, inv, tok); err != nil {
		c.log.Warn("console: invitation not sent", "err", err)
		_, _ = c.metaResult(r.Context(), cluster.EncodeConsoleCancelInvite(cluster.ConsoleCancelInvite{ID: inv.ID,
			OrgID: inv.OrgID, Now: time.Now().UTC()}))
		showErr(http.StatusBadGateway, "The mail server did not take the message, so no invitation was sent.")
		return
	}
	waitLocal(r.Context(), func() bool { _, ok := c.b.Meta().ConsoleInviteByHash(inv.Hash); return ok })
	c.redirect(w, r, Base+"/rooms/"+rm.RoomID, "Invitation sent to "+email+".")
}

func scopeText(scope string) string {
	if scope == "read" {
		return "read-only"
	}
	return "read & write"
}

func (c *Console) sendInvitation(ctx context.Context, from *Identity, inv cluster.ConsoleInvite, tok string) error {
	link := c.cfg.PublicURL + Base + "/invitations/" + tok
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	subject := from.Email + " invited you to a shared memory room on hebb"
	text := fmt.Sprintf("%s invited you to a shared memory room on hebb, with %s access.\n\n"+
		"Open this link, sign in (or create an account with this address) and accept to see the room:\n\n%s\n\n"+
		"The invitation expires on %s. If you did not expect it, ignore this message.\n",
		from.Email, scopeText(inv.Scope), link, inv.ExpiresAt.Format("2 January 2006"))
	body := fmt.Sprintf(`<div style="font-family:system-ui,sans-serif;max-width:32rem;line-height:1.5;color:#1f2330">`+
		`<p><strong>%s</strong> invited you to a shared memory room on hebb, with %s access.</p>`+
		`<p><a href="%s" style="display:inline-block;background:#5b50e6;color:#fff;padding:.6rem 1.1rem;border-radius:.5rem;text-decoration:none">See the invitation</a></p>`+
		`<p style="color:#5f6472;font-size:.9rem">Sign in, or create an account with this address, then accept to see the room. `+
		`The invitation expires on %s. If you did not expect it, ignore this message.</p></div>`,
		html.EscapeString(from.Email), scopeText(inv.Scope), html.EscapeString(link), inv.ExpiresAt.Format("2 January 2006"))
	return c.mail.Send(ctx, inv.Email, subject, text, body)
}

func (c *Console) cancelInvitation(w http.ResponseWriter, r *http.Request, v *view) {
	rm, ok := c.ownedRoom(w, r, v)
	if !ok {
		return
	}
	_, err := c.metaResult(r.Context(), cluster.EncodeConsoleCancelInvite(cluster.ConsoleCancelInvite{ID: r.PathValue("inv"),
		OrgID: v.Me.OrgID, Now: time.Now().UTC()}))
	switch {
	case errors.Is(err, cluster.ErrConsoleInvite):
		c.fail(w, r, v, http.StatusNotFound, "There is no such pending invitation.")
		return
	case err != nil:
		c.fail(w, r, v, http.StatusServiceUnavailable, "Cannot cancel the invitation right now; try again.")
		return
	}
	c.redirect(w, r, Base+"/rooms/"+rm.RoomID, "Invitation cancelled.")
}

type invitationData struct {
	Invite    cluster.ConsoleInvite
	Inviter   string
	OrgName   string
	ScopeText string
	Path      string
	Mismatch  bool
	Joined    *roomItem
}

// invitation loads the invitation of the path and says whether it can be
// shown to v; on false the answer is written.
func (c *Console) invitation(w http.ResponseWriter, r *http.Request, v *view) (invitationData, bool) {
	tok := r.PathValue("token")
	meta := c.b.Meta()
	var inv cluster.ConsoleInvite
	var ok bool
	if strings.HasPrefix(tok, invitationPrefix) {
		meta.Synced(r.Context(), func() bool { inv, ok = meta.ConsoleInviteByHash(hashToken(tok)); return ok })
	}
	if ok && v.Me != nil && inv.AcceptedBy == v.Me.UserID {
		http.Redirect(w, r, Base+"/rooms/"+inv.RoomID, http.StatusSeeOther)
		return invitationData{}, false
	}
	if !ok || !strings.HasPrefix(tok, invitationPrefix) || !inv.Pending(time.Now()) {
		c.fail(w, r, v, http.StatusNotFound, "This invitation is no longer valid: it was used, cancelled or has expired. "+
			"Ask the person who invited you for a new one.")
		return invitationData{}, false
	}
	d := invitationData{Invite: inv, ScopeText: scopeText(inv.Scope), Path: Base + "/invitations/" + tok}
	if u, ok := meta.ConsoleUser(inv.InvitedBy); ok {
		d.Inviter = u.Email
	}
	if o, ok := meta.Org(inv.OrgID); ok {
		d.OrgName = o.Name
	}
	d.Mismatch = v.Me != nil && v.Me.Email != inv.Email
	return d, true
}

func (c *Console) invitationPage(w http.ResponseWriter, r *http.Request, v *view) {
	d, ok := c.invitation(w, r, v)
	if !ok {
		return
	}
	v.Title, v.Data = "Invitation", d
	c.render(w, http.StatusOK, "invitation", v)
}

// acceptInvitation claims the invitation, then joins the room at the scope
// the owner chose: a single-use share code is minted as the room's owner
// and redeemed at once as the accepting org, so the code never leaves the
// server.
func (c *Console) acceptInvitation(w http.ResponseWriter, r *http.Request, v *view) {
	d, ok := c.invitation(w, r, v)
	if !ok {
		return
	}
	if d.Mismatch {
		c.fail(w, r, v, http.StatusForbidden, "This invitation was sent to "+d.Invite.Email+". Sign in with that address to accept it.")
		return
	}
	inv := d.Invite
	_, err := c.metaResult(r.Context(), cluster.EncodeConsoleAcceptInvite(cluster.ConsoleAcceptInvite{Hash: inv.Hash,
		UserID: v.Me.UserID, Now: time.Now().UTC()}))
	if err != nil {
		c.fail(w, r, v, http.StatusConflict, "This invitation can no longer be accepted.")
		return
	}
	var code struct {
		Code string `json:"code"`
	}
	err = c.rest(r.Context(), inv.OrgID, http.MethodPost, "/memory/rooms/"+inv.RoomID+"/invites",
		map[string]any{"scope": inv.Scope, "max_uses": 1, "expires_in_days": 1}, &code)
	if err == nil {
		err = c.rest(r.Context(), v.Me.OrgID, http.MethodPost, "/memory/rooms/join", map[string]string{"code": code.Code}, nil)
	}
	if err != nil {
		c.log.Warn("console: invitation accepted but join failed", "invite", inv.ID, "err", err)
		c.fail(w, r, v, http.StatusConflict, "The room could not be joined (it may have been archived). "+
			"Reload this page to try again, or ask for a new invitation.")
		return
	}
	rooms, _ := c.listRooms(r, v.Me.OrgID)
	for i := range rooms {
		if rooms[i].RoomID == inv.RoomID {
			d.Joined = &rooms[i]
		}
	}
	v.Title, v.Data = "Invitation accepted", d
	c.render(w, http.StatusOK, "invitation", v)
}

type joinData struct {
	Code    string
	Preview InvitePreview
	Found   bool
	Unknown bool // the room's group could not be read here
}

func (c *Console) joinPage(w http.ResponseWriter, r *http.Request, v *view) {
	code := r.PathValue("code")
	p, found, err := c.b.InvitePreview(r.Context(), code)
	d := joinData{Code: code, Preview: p, Found: found || err != nil, Unknown: err != nil}
	status := http.StatusOK
	if !d.Found {
		status = http.StatusNotFound
	}
	v.Title, v.Data = "Join a room", d
	c.render(w, status, "join", v)
}

func (c *Console) join(w http.ResponseWriter, r *http.Request, v *view) {
	var res struct {
		RoomID string `json:"room_id"`
		Scope  string `json:"scope"`
	}
	err := c.rest(r.Context(), v.Me.OrgID, http.MethodPost, "/memory/rooms/join", map[string]string{"code": r.PathValue("code")}, &res)
	if err != nil {
		if e, ok := err.(*apiError); ok && e.Status == http.StatusNotFound { //nolint:errorlint // unwrapped
			v.Title, v.Data = "Join a room", joinData{Code: r.PathValue("code")}
			c.render(w, http.StatusNotFound, "join", v)
			return
		}
		if e, ok := err.(*apiError); ok && e.Status == http.StatusForbidden && e.Message == "Not an active member of this room" { //nolint:errorlint // unwrapped
			// A code minted before the workspace's membership ended.
			c.fail(w, r, v, http.StatusForbidden, "Your workspace's membership of this room ended after this code was made, so it "+
				"cannot bring it back: ask the room's owner for a new code.")
			return
		}
		c.failAPI(w, r, v, err)
		return
	}
	c.redirect(w, r, Base+"/rooms/"+res.RoomID, "You joined the room with "+scopeText(res.Scope)+" access.")
}
