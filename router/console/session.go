package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

// Cookie names. The session cookie has Path=/ so that the OAuth
// authorization step under /oauth sees it too.
const (
	sessionCookie = "hebb_console"
	formCookie    = "hebb_console_csrf" // double-submit token of the signed-out forms
	flashCookie   = "hebb_console_flash"
	tokenPrefix   = "hcs_"
)

// Identity is who a console request runs as.
type Identity struct {
	UserID   string
	Email    string
	OrgID    string
	OrgName  string
	Role     string // owner or member
	Operator bool
	Orgs     []OrgChoice // every org the user belongs to
}

// OrgChoice is one org a user can switch the console to.
type OrgChoice struct {
	ID, Name, Role string
	Current        bool
}

// Owner reports whether the identity may change its org.
func (id Identity) Owner() bool { return id.Role == cluster.ConsoleRoleOwner }

// view is one request's page state: who is signed in and the tokens its
// forms carry.
type view struct {
	Me      *Identity
	CSRF    string // the token forms carry
	Flash   string
	token   string // raw session token ("" signed out)
	Nav     string
	Title   string
	Error   string
	Data    any
	MailOff bool
}

// randomToken returns n random bytes, base64url.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashToken is how a token is stored: hex SHA-256.
func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// csrfOf derives a session's CSRF token from its raw token, so any node
// can check it without storing it.
func csrfOf(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("hebb console csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// Session resolves the console session carried by r's cookie: the
// signed-in user and the org the session is for. The OAuth authorization
// step signs people in through it.
func (c *Console) Session(r *http.Request) (Identity, bool) {
	id, _, ok := c.session(r)
	return id, ok
}

func (c *Console) session(r *http.Request) (Identity, string, bool) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || len(ck.Value) < len(tokenPrefix)+16 || len(ck.Value) > 200 {
		return Identity{}, "", false
	}
	meta := c.b.Meta()
	var s cluster.ConsoleSession
	var ok bool
	meta.Synced(r.Context(), func() bool { s, ok = meta.ConsoleSession(hashToken(ck.Value), time.Now()); return ok })
	if !ok {
		return Identity{}, "", false
	}
	u, ok := meta.ConsoleUser(s.UserID)
	if !ok {
		return Identity{}, "", false
	}
	id := Identity{UserID: u.ID, Email: u.Email, OrgID: s.OrgID, Role: u.Role(s.OrgID), Operator: u.Operator}
	for _, m := range u.Orgs {
		o, _ := meta.Org(m.OrgID)
		id.Orgs = append(id.Orgs, OrgChoice{ID: m.OrgID, Name: o.Name, Role: m.Role, Current: m.OrgID == s.OrgID})
		if m.OrgID == s.OrgID {
			id.OrgName = o.Name
		}
	}
	return id, ck.Value, true
}

type handler func(w http.ResponseWriter, r *http.Request, v *view)

// optional runs h with the session if there is one.
func (c *Console) optional(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := &view{}
		if id, tok, ok := c.session(r); ok {
			v.Me, v.token, v.CSRF = &id, tok, csrfOf(tok)
		}
		v.Flash = takeFlash(w, r)
		h(w, r, v)
	}
}

// public runs a signed-out form: its POSTs carry the double-submit token.
func (c *Console) public(h handler) http.HandlerFunc {
	return c.optional(func(w http.ResponseWriter, r *http.Request, v *view) {
		ck, err := r.Cookie(formCookie)
		tok := ""
		if err == nil {
			tok = ck.Value
		}
		if r.Method == http.MethodPost && !sameToken(tok, r.PostFormValue("csrf")) {
			c.fail(w, r, v, http.StatusForbidden, "The form expired. Reload the page and try again.")
			return
		}
		if tok == "" {
			tok = randomToken(24)
			http.SetCookie(w, &http.Cookie{Name: formCookie, Value: tok, Path: Base, HttpOnly: true,
				Secure: c.secure, SameSite: http.SameSiteStrictMode, MaxAge: 86400})
		}
		v.CSRF = tok
		h(w, r, v)
	})
}

// signedIn runs h for a signed-in user; a signed-out GET goes to the
// sign-in page and comes back. POSTs must carry the session's CSRF token.
func (c *Console) signedIn(h handler) http.HandlerFunc {
	return c.optional(func(w http.ResponseWriter, r *http.Request, v *view) {
		if v.Me == nil {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, SignInPath(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			c.fail(w, r, v, http.StatusForbidden, "You are signed out. Sign in and try again.")
			return
		}
		if r.Method == http.MethodPost && !sameToken(v.CSRF, r.PostFormValue("csrf")) {
			c.fail(w, r, v, http.StatusForbidden, "The form expired. Reload the page and try again.")
			return
		}
		h(w, r, v)
	})
}

// owner runs h for an owner of the session's org.
func (c *Console) owner(h handler) http.HandlerFunc {
	return c.signedIn(func(w http.ResponseWriter, r *http.Request, v *view) {
		if !v.Me.Owner() {
			c.fail(w, r, v, http.StatusForbidden, "Only an owner of "+v.Me.OrgName+" can do this.")
			return
		}
		h(w, r, v)
	})
}

// operator runs h for an operator of the deployment.
func (c *Console) operator(h handler) http.HandlerFunc {
	return c.signedIn(func(w http.ResponseWriter, r *http.Request, v *view) {
		if !v.Me.Operator {
			c.fail(w, r, v, http.StatusNotFound, "There is no such page.")
			return
		}
		h(w, r, v)
	})
}

// startSession mints a new session for user in org, ending the browser's
// previous one, and sets the cookie. A token the browser presented is
// never reused (no session fixation).
func (c *Console) startSession(ctx context.Context, w http.ResponseWriter, r *http.Request, userID, org string) error {
	tok := tokenPrefix + randomToken(32)
	now := time.Now().UTC()
	s := cluster.ConsoleSession{Hash: hashToken(tok), UserID: userID, OrgID: org, CreatedAt: now,
		ExpiresAt: now.Add(c.cfg.SessionTTL)}
	replace := ""
	if ck, err := r.Cookie(sessionCookie); err == nil && ck.Value != "" {
		replace = hashToken(ck.Value)
	}
	if _, err := c.metaResult(ctx, cluster.EncodeConsoleSignIn(cluster.ConsoleSignIn{Session: s, Replace: replace, Now: now})); err != nil {
		return err
	}
	waitLocal(ctx, func() bool { _, ok := c.b.Meta().ConsoleSession(s.Hash, time.Now()); return ok })
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: tok, Path: "/", HttpOnly: true, Secure: c.secure,
		SameSite: http.SameSiteLaxMode, Expires: s.ExpiresAt})
	return nil
}

func (c *Console) clearSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: c.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: -1})
}

// flash carries a one-line message across a redirect.
func (c *Console) flash(w http.ResponseWriter, msg string) {
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: base64.RawURLEncoding.EncodeToString([]byte(msg)),
		Path: Base, HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteLaxMode, MaxAge: 60})
}

func takeFlash(w http.ResponseWriter, r *http.Request) string {
	ck, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: Base, MaxAge: -1})
	b, err := base64.RawURLEncoding.DecodeString(ck.Value)
	if err != nil || len(b) > 300 {
		return ""
	}
	return string(b)
}

// redirect answers a POST with 303 to path, with a flash message.
func (c *Console) redirect(w http.ResponseWriter, r *http.Request, path, msg string) {
	if msg != "" {
		c.flash(w, msg)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}
