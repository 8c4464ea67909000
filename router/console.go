package router

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	frouter "github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/console"
)

// consoleTimeout bounds one console page: a few REST calls and meta
// commands.
const consoleTimeout = 45 * time.Second

// consoleSurface is the web console and what it records about API keys.
type consoleSurface struct {
	c    *console.Console
	uses *keyUses
	h    fasthttp.RequestHandler // the console's handler (nil without a console)
}

// consoleRoutes mounts the console under /console and the operator's user
// creation under /admin/v1/users.
func (s *Server) consoleRoutes(r *frouter.Router) {
	s.console = &consoleSurface{uses: &keyUses{b: s.backend, log: s.log, inflight: map[string]bool{}}}
	c, err := console.New(console.Config{PublicURL: s.cfg.PublicURL, SMTPURL: s.cfg.SMTPURL, MailFrom: s.cfg.MailFrom,
		Logger: s.log}, consoleBackend{s})
	if err != nil { // a bad --smtp-url: serve the console with mail off
		s.log.Error("console e-mail invitations are off", "err", err)
		c, err = console.New(console.Config{PublicURL: s.cfg.PublicURL, Logger: s.log}, consoleBackend{s})
	}
	if err != nil {
		s.log.Error("web console disabled", "err", err)
		return
	}
	s.console.c = c
	h := func(ctx *fasthttp.RequestCtx) {
		std, cancel := context.WithTimeout(context.Background(), consoleTimeout)
		defer cancel()
		serveStd(ctx, c.Handler(), std)
	}
	s.console.h = h
	r.ANY(console.Base, h)
	r.ANY(console.Base+"/{path:*}", h)
	r.POST("/admin/v1/users", s.admin(s.adminCreateUser))
	r.DELETE("/admin/v1/users/{user_id}/orgs/{org_id}", s.admin(s.adminRemoveUser))
	r.PUT("/admin/v1/users/{user_id}/password", s.admin(s.adminSetPassword))
}

// adminSetPassword is PUT /admin/v1/users/{user_id}/password {password}
// (the user's ID or e-mail address): a new password, and every console
// session of the person ends. A person who forgot theirs had no way back.
func (s *Server) adminSetPassword(c *call) error {
	var req struct {
		Password *string `json:"password"`
	}
	if err := decodeBody(c.ctx.PostBody(), &req, true); err != nil {
		return err
	}
	if req.Password == nil {
		return validationError(fieldErr("missing", "Field required", "password"))
	}
	u, ok := s.consoleUserNamed(c.std, c.param("user_id"), "")
	if !ok {
		return notFound("User not found")
	}
	_, err := console.SetPassword(c.std, s.backend, u.ID, *req.Password)
	switch {
	case errors.Is(err, console.ErrInvalidUser):
		return invalidUser(err, "password")
	case errors.Is(err, console.ErrBusy):
		return unavailable("Service unavailable: too many password checks at once; retry")
	case err != nil:
		return err
	}
	return s.ok(c, map[string]any{"user_id": u.ID, "email": u.Email, "password_changed": true})
}

// invalidUser is the 400 of a console.ErrInvalidUser: its reason alone.
func invalidUser(err error, loc ...any) *apiError {
	return validationError(fieldErr("value_error", strings.TrimPrefix(err.Error(), console.ErrInvalidUser.Error()+": "), loc...))
}

// consoleUserNamed finds a console user by ID or e-mail address; with
// inOrg, the user must hold a role in that org too.
func (s *Server) consoleUserNamed(ctx context.Context, name, inOrg string) (u cluster.ConsoleUser, ok bool) {
	meta := s.backend.Meta()
	// A user created (or given the role) through another node a moment
	// ago is looked for again once this node's replica caught up, rather
	// than answered 404.
	meta.Synced(ctx, func() bool {
		u, ok = meta.ConsoleUser(name)
		if !ok && strings.Contains(name, "@") {
			u, ok = meta.ConsoleUserByEmail(name) // the person's e-mail address names them too
		}
		return ok && (inOrg == "" || u.Role(inOrg) != "")
	})
	return u, ok
}

// adminRemoveUser is DELETE /admin/v1/users/{user_id}/orgs/{org_id} (the
// user's ID or e-mail address): the person leaves the org at once, with their sessions in it and the OAuth
// grants they made for it. An operator had no way to take access away from
// someone who left or whose password leaked.
func (s *Server) adminRemoveUser(c *call) error {
	orgID := c.param("org_id")
	u, ok := s.consoleUserNamed(c.std, c.param("user_id"), orgID)
	if !ok {
		return notFound("User not found")
	}
	userID := u.ID
	if u.Role(orgID) == "" {
		return notFound("The user is not in this org")
	}
	if _, err := console.SetRole(c.std, s.backend, userID, orgID, ""); err != nil {
		return err
	}
	return s.ok(c, map[string]any{"user_id": userID, "org_id": orgID, "removed": true})
}

// consoleSession resolves the console sign-in a browser request carries:
// the org the session is for and the user. The OAuth authorization step
// signs people in through it (send the browser to
// console.SignInPath(returnURL) when ok is false).
func (s *Server) consoleSession(r *http.Request) (org, user string, ok bool) {
	if s.console == nil || s.console.c == nil {
		return "", "", false
	}
	id, ok := s.console.c.Session(r)
	return id.OrgID, id.UserID, ok
}

// consoleBackend runs the console's calls against this server.
type consoleBackend struct{ s *Server }

func (b consoleBackend) Meta() *cluster.Meta { return b.s.backend.Meta() }

func (b consoleBackend) ProposeMeta(ctx context.Context, cmd []byte) (any, error) {
	return b.s.backend.ProposeMeta(ctx, cmd)
}

func (b consoleBackend) REST(ctx context.Context, org, method, path string, body []byte) (int, []byte) {
	return b.s.serveAs(ctx, org, method, path, body, map[string]string{"X-Hebb-Client-Env": "console"})
}

func (b consoleBackend) UsedToday(org string) int64 { return b.s.quota.used(org) }

func (b consoleBackend) Settings(org string) cluster.Settings {
	return b.s.backend.Meta().Settings(org, b.s.cfg.DefaultPlan)
}

func (b consoleBackend) Cluster() cluster.AdminStatus { return b.s.backend.Status().Admin }

func (b consoleBackend) InvitePreview(ctx context.Context, code string) (console.InvitePreview, bool, error) {
	roomID, ok := roomOfCode(code)
	if !ok {
		return console.InvitePreview{}, false, nil
	}
	fsm, err := b.s.backend.ReadFSM(ctx, roomID)
	if err != nil {
		return console.InvitePreview{}, false, err
	}
	v, ok := fsm.Room(roomID, "")
	if !ok {
		return console.InvitePreview{}, false, nil
	}
	for _, inv := range fsm.Invites(roomID, time.Now().UnixMicro()) {
		if inv.Code == code {
			return console.InvitePreview{RoomID: roomID, RoomName: v.Room.Name, Scope: inv.Scope,
				ExpiresAt: time.UnixMicro(inv.ExpiresAt).UTC(), Archived: v.Room.Archived}, true, nil
		}
	}
	return console.InvitePreview{}, false, nil
}

// keyUses records, at most once a minute per key and node, when each API
// key was last used, for the console's key list.
type keyUses struct {
	b        Backend
	log      interface{ Debug(string, ...any) }
	mu       sync.Mutex
	inflight map[string]bool
}

const keyUseEvery = time.Minute

func (s *Server) noteKeyUse(keyID string) {
	if s.console == nil || keyID == "" {
		return
	}
	s.console.uses.note(keyID)
}

func (k *keyUses) note(keyID string) {
	now := time.Now().UTC()
	if last, ok := k.b.Meta().ConsoleKeyLastUsed(keyID); ok && now.Sub(last) < keyUseEvery {
		return
	}
	k.mu.Lock()
	if k.inflight[keyID] {
		k.mu.Unlock()
		return
	}
	k.inflight[keyID] = true
	k.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := k.b.ProposeMeta(ctx, cluster.EncodeConsoleTouchKeys(cluster.ConsoleTouchKeys{
			Uses: []cluster.ConsoleKeyUse{{KeyID: keyID, At: now}}, Now: now}))
		if err != nil {
			k.log.Debug("cannot record key use", "key_id", keyID, "err", err)
		}
		k.mu.Lock()
		delete(k.inflight, keyID)
		k.mu.Unlock()
	}()
}

type createUserRequest struct {
	Email    *string `json:"email"`
	Password *string `json:"password"`
	OrgID    *string `json:"org_id"`
	OrgName  *string `json:"org_name"`
	Role     *string `json:"role"`
	Operator *bool   `json:"operator"`
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// adminCreateUser is POST /admin/v1/users: a console user in an existing
// org (org_id) or a new one (org_name). An existing user is given the role
// in org_id instead when the password is theirs (409 otherwise).
func (s *Server) adminCreateUser(c *call) error {
	var req createUserRequest
	if err := decodeBody(c.ctx.PostBody(), &req, true); err != nil {
		return err
	}
	v := &validator{}
	if req.Email == nil {
		v.add("missing", "Field required", "email")
	}
	if req.Password == nil {
		v.add("missing", "Field required", "password")
	}
	if err := v.err(); err != nil {
		return err
	}
	nu := console.NewUser{Email: *req.Email, Password: *req.Password, OrgID: strings.TrimSpace(deref(req.OrgID)),
		OrgName: deref(req.OrgName), Role: deref(req.Role), Operator: deref(req.Operator)}
	if nu.OrgID != "" {
		if !s.orgExists(c, nu.OrgID) {
			return notFound("Org not found")
		}
	}
	u, err := console.CreateUser(c.std, s.backend, nu)
	if errors.Is(err, console.ErrEmailTaken) && nu.OrgID != "" {
		existing, _ := s.backend.Meta().ConsoleUserByEmail(nu.Email)
		// Anyone may sign up under any address: an account made first by
		// someone else took the role the operator meant for the person.
		// An existing account joins the org only with its own password.
		ok, verr := console.VerifyPassword(c.std, existing.PasswordHash, nu.Password)
		if errors.Is(verr, console.ErrBusy) {
			return unavailable("Service unavailable: too many password checks at once; retry")
		}
		if !ok {
			return conflict("A user with this e-mail address already exists (it may have signed up) and the password " +
				"does not match it: it was not added to the org. Pass its current password to add it")
		}
		role := nu.Role
		if role == "" {
			role = cluster.ConsoleRoleOwner
		}
		u, err = console.SetRole(c.std, s.backend, existing.ID, nu.OrgID, role)
	}
	switch {
	case errors.Is(err, console.ErrInvalidUser):
		return invalidUser(err)
	case errors.Is(err, console.ErrEmailTaken):
		return conflict("A user with this e-mail address exists; pass org_id to add them to an org")
	case errors.Is(err, console.ErrUnknownOrg):
		return notFound("Org not found")
	case err != nil:
		return err
	}
	org := u.Orgs[0]
	for _, m := range u.Orgs {
		if m.OrgID == nu.OrgID {
			org = m
		}
	}
	return s.ok(c, map[string]any{"user_id": u.ID, "email": u.Email, "org_id": org.OrgID, "role": org.Role,
		"operator": u.Operator})
}
