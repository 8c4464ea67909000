package chat

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	frouter "github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/ratelimit"
)

// Session tokens are "chs_" + 43 base64url characters (32 random bytes);
// only their SHA-256 is stored.
const (
	sessionCookie = "hebb_chat.session_token"
	tokenPrefix   = "chs_"
	tokenLen      = len(tokenPrefix) + 43
)

func (s *Server) authRoutes(r *frouter.Router) {
	r.POST("/api/auth/sign-in/anonymous", s.public(s.signInAnonymous))
	r.POST("/api/auth/sign-in/oauth2", s.public(s.signInOIDC))
	r.GET("/api/auth/oauth2/callback/{providerId}", s.public(s.oidcCallback))
	r.GET("/api/auth/get-session", s.public(s.getSession))
	r.POST("/api/auth/sign-out", s.signedIn(s.signOut))
	r.GET("/api/auth/list-sessions", s.signedIn(s.listSessions))
	r.POST("/api/auth/revoke-session", s.signedIn(s.revokeSession))
	r.POST("/api/auth/revoke-other-sessions", s.signedIn(s.revokeOtherSessions))
	r.POST("/api/auth/revoke-sessions", s.signedIn(s.revokeSessions))
	r.POST("/api/auth/update-user", s.signedIn(s.updateUser))
	r.POST("/api/auth/partykit-token", s.signedIn(s.partykitToken))
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashToken(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

// sessionToken is the token of the request: a bearer token, else the
// session cookie. Another Authorization scheme (a proxy's Basic
// credentials) is not ours and does not hide the cookie.
func sessionToken(ctx *fasthttp.RequestCtx) string {
	h := string(ctx.Request.Header.Peek("Authorization"))
	if tok, ok := cutBearer(h); ok {
		return tok
	}
	return string(ctx.Request.Header.Cookie(sessionCookie))
}

// cutBearer returns the token of an "Authorization: Bearer" header (the
// scheme is case-insensitive, RFC 9110).
func cutBearer(h string) (string, bool) {
	const scheme = "bearer "
	if len(h) < len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return "", false
	}
	return strings.TrimSpace(h[len(scheme):]), true
}

// authenticate resolves the caller's session or fails with 401.
func (s *Server) authenticate(c *call) error {
	raw := sessionToken(c.ctx)
	if raw == "" {
		return unauthorized("missing_session", "Not signed in")
	}
	if !s.resolveSession(c, raw) {
		return unauthorized("invalid_session", "Session is invalid or expired")
	}
	return nil
}

func (s *Server) resolveSession(c *call, raw string) bool {
	if len(raw) != tokenLen || !strings.HasPrefix(raw, tokenPrefix) {
		return false
	}
	var sess cluster.ChatSession
	var user cluster.ChatUser
	var ok bool
	// Signed in through another node a moment ago: look again before
	// refusing.
	m := s.b.Meta()
	m.Synced(c.std, func() bool { sess, user, ok = m.ChatSession(hashToken(raw), c.now); return ok })
	if !ok {
		return false
	}
	c.session, c.user = sess, user
	c.ids = append([]string{user.ID}, user.Aliases...)
	return true
}

// chatUser returns the user id, looking again after a meta read barrier
// before it reports none: signed up through another node a moment ago.
func (s *Server) chatUser(c *call, id string) (u cluster.ChatUser, ok bool) {
	m := s.b.Meta()
	m.Synced(c.std, func() bool { u, ok = m.ChatUser(id); return ok })
	return u, ok
}

func (s *Server) setCookie(c *call, name, value string, maxAge time.Duration, path string) {
	ck := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(ck)
	ck.SetKey(name)
	ck.SetValue(value)
	ck.SetPath(path)
	ck.SetHTTPOnly(true)
	ck.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	ck.SetSecure(strings.HasPrefix(s.cfg.PublicURL, "https://"))
	if maxAge > 0 {
		ck.SetMaxAge(int(maxAge / time.Second))
	} else {
		ck.SetMaxAge(-1) // delete
	}
	c.ctx.Response.Header.SetCookie(ck)
}

// signIn creates a session for user (or the account it resolves to) and
// returns its raw token.
func (s *Server) signIn(c *call, user cluster.ChatUser, upgrade string) (string, cluster.ChatSignedIn, error) {
	raw := tokenPrefix + randomString(32)
	ua := string(c.ctx.Request.Header.UserAgent())
	if len(ua) > 256 {
		ua = ua[:256]
	}
	cmd := cluster.ChatSignIn{User: user, Upgrade: upgrade, Now: c.now, Session: cluster.ChatSession{
		ID: newID(sessionPrefix), Hash: hashToken(raw), UserAgent: ua, CreatedAt: c.now, ExpiresAt: c.now.Add(s.cfg.SessionTTL)}}
	res, err := s.b.ProposeMeta(c.std, cluster.EncodeChatSignIn(cmd))
	if err != nil {
		return "", cluster.ChatSignedIn{}, err
	}
	switch r := res.(type) {
	case cluster.ChatSignedIn:
		s.setCookie(c, sessionCookie, raw, s.cfg.SessionTTL, "/")
		return raw, r, nil
	case error:
		return "", cluster.ChatSignedIn{}, fmt.Errorf("cannot sign in: %w", r)
	}
	return "", cluster.ChatSignedIn{}, fmt.Errorf("cannot sign in: unexpected result %T", res)
}

func (s *Server) signedInBody(raw string, r cluster.ChatSignedIn) map[string]any {
	return map[string]any{"token": raw, "user": userView(r.User, true),
		"session": sessionView(r.Session, r.Session.ID)}
}

type anonymousBody struct {
	Name *string `json:"name"`
}

func (s *Server) signInAnonymous(c *call) error {
	var body anonymousBody
	if err := decodeBody(c.ctx.PostBody(), &body, true); err != nil {
		return err
	}
	var v validator
	v.optName("name", body.Name, maxDisplayName)
	if err := v.err(); err != nil {
		return err
	}
	if raw := sessionToken(c.ctx); raw != "" && s.resolveSession(c, raw) {
		return newError(409, codeConflict, "Already signed in; sign out first").with("reason", "already_signed_in")
	}
	if ok, wait := s.guests.Take(clientAddr(c.ctx), maxGuestsPerAddr); !ok {
		return rateLimited(c, "guest_sign_in_limit", "Too many guest sign-ins from this address; try again later", wait)
	}
	name := "Guest " + strings.ToLower(randomString(3))
	if body.Name != nil {
		name = strings.TrimSpace(*body.Name)
	}
	raw, res, err := s.signIn(c, cluster.ChatUser{ID: newID(userPrefix), Name: name, Anonymous: true, CreatedAt: c.now}, "")
	if err != nil {
		return err
	}
	return s.ok(c, s.signedInBody(raw, res))
}

// Guest sign-ins per client address: each makes a user kept in the meta
// group for good, and nothing else limited them (1,000 in 3.7 s from one
// address).
const (
	maxGuestsPerAddr = 60
	guestWindow      = 15 * time.Minute
	guestMaxKeys     = 100_000
)

// clientAddr is the address a request comes from (behind the trusted
// proxies, the client's they forwarded: ratelimit.ClientAddrOf).
func clientAddr(ctx *fasthttp.RequestCtx) string {
	var fwd []string
	for _, v := range ctx.Request.Header.PeekAll("X-Forwarded-For") {
		fwd = append(fwd, string(v))
	}
	return ratelimit.ClientAddrOf(ctx.RemoteAddr().String(), fwd)
}

// getSession answers the session and user, or null when not signed in.
func (s *Server) getSession(c *call) error {
	if raw := sessionToken(c.ctx); raw == "" || !s.resolveSession(c, raw) {
		return s.ok(c, nil)
	}
	return s.ok(c, map[string]any{"session": sessionView(c.session, c.session.ID), "user": userView(c.user, true)})
}

func (s *Server) revoke(c *call, cmd cluster.ChatRevokeSessions) (int, error) {
	cmd.UserID, cmd.Now = c.user.ID, c.now
	res, err := s.b.ProposeMeta(c.std, cluster.EncodeChatRevokeSessions(cmd))
	if err != nil {
		return 0, err
	}
	n, ok := res.(int)
	if !ok {
		return 0, fmt.Errorf("cannot revoke sessions: unexpected result %T", res)
	}
	return n, nil
}

func (s *Server) signOut(c *call) error {
	if err := decodeBody(c.ctx.PostBody(), &struct{}{}, true); err != nil {
		return err
	}
	if _, err := s.revoke(c, cluster.ChatRevokeSessions{SessionID: c.session.ID}); err != nil {
		return err
	}
	s.setCookie(c, sessionCookie, "", 0, "/")
	return s.ok(c, map[string]any{"success": true})
}

func (s *Server) listSessions(c *call) error {
	out := []any{}
	for _, x := range s.b.Meta().ChatSessions(c.user.ID, c.now) {
		out = append(out, sessionView(x, c.session.ID))
	}
	return s.ok(c, map[string]any{"sessions": out})
}

type revokeBody struct {
	ID *string `json:"id"`
}

func (s *Server) revokeSession(c *call) error {
	var body revokeBody
	if err := decodeBody(c.ctx.PostBody(), &body, false); err != nil {
		return err
	}
	var v validator
	if v.required("id", body.ID != nil) && !validID(sessionPrefix, *body.ID) {
		v.add("value_error", "Input should be a session id (ses_<ulid>)", "body", "id")
	}
	if err := v.err(); err != nil {
		return err
	}
	n, err := s.revoke(c, cluster.ChatRevokeSessions{SessionID: *body.ID})
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound("Session not found")
	}
	if *body.ID == c.session.ID {
		s.setCookie(c, sessionCookie, "", 0, "/")
	}
	return s.ok(c, map[string]any{"success": true, "revoked": n})
}

func (s *Server) revokeOtherSessions(c *call) error {
	if err := decodeBody(c.ctx.PostBody(), &struct{}{}, true); err != nil {
		return err
	}
	n, err := s.revoke(c, cluster.ChatRevokeSessions{Except: c.session.ID})
	if err != nil {
		return err
	}
	return s.ok(c, map[string]any{"success": true, "revoked": n})
}

func (s *Server) revokeSessions(c *call) error {
	if err := decodeBody(c.ctx.PostBody(), &struct{}{}, true); err != nil {
		return err
	}
	n, err := s.revoke(c, cluster.ChatRevokeSessions{})
	if err != nil {
		return err
	}
	s.setCookie(c, sessionCookie, "", 0, "/")
	return s.ok(c, map[string]any{"success": true, "revoked": n})
}

type updateUserBody struct {
	Name  *string `json:"name"`
	Image *string `json:"image"`
}

func (s *Server) updateUser(c *call) error {
	var body updateUserBody
	if err := decodeBody(c.ctx.PostBody(), &body, false); err != nil {
		return err
	}
	var v validator
	v.optName("name", body.Name, maxDisplayName)
	v.imageURL(body.Image)
	if err := v.err(); err != nil {
		return err
	}
	if body.Name != nil {
		name := strings.TrimSpace(*body.Name)
		body.Name = &name
	}
	res, err := s.b.ProposeMeta(c.std, cluster.EncodeChatUpdateUser(cluster.ChatUpdateUser{
		UserID: c.user.ID, Name: body.Name, Image: body.Image, Now: c.now}))
	if err != nil {
		return err
	}
	switch r := res.(type) {
	case cluster.ChatUser:
		return s.ok(c, map[string]any{"user": userView(r, true)})
	case error:
		if errors.Is(r, cluster.ErrUnknownChatUser) {
			return unauthorized("invalid_session", "Session is invalid or expired")
		}
		return r
	}
	return fmt.Errorf("cannot update user: unexpected result %T", res)
}

type partykitBody struct {
	RoomID *string `json:"roomId"`
}

// partykitToken issues a short-lived token for the realtime channel of one
// room the caller participates in.
func (s *Server) partykitToken(c *call) error {
	var body partykitBody
	if err := decodeBody(c.ctx.PostBody(), &body, false); err != nil {
		return err
	}
	var v validator
	v.required("roomId", body.RoomID != nil)
	if err := v.err(); err != nil {
		return err
	}
	if _, _, err := s.followRoom(c, *body.RoomID); err != nil {
		return err
	}
	exp := c.now.Add(s.cfg.TokenTTL)
	tok, err := s.signRealtime(c.std, realtimeClaims{Sub: c.user.ID, Room: *body.RoomID, Sid: c.session.ID,
		Iat: c.now.Unix(), Exp: exp.Unix()})
	if err != nil {
		return err
	}
	return s.ok(c, map[string]any{"token": tok, "expiresAt": stamp(exp.UnixMicro()), "roomId": *body.RoomID,
		"userId": c.user.ID, "url": s.realtimeURL(*body.RoomID)})
}
