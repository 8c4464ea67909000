package console

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/ratelimit"
)

// Base is the path the console is served under.
const Base = "/console"

// Backend is what the console needs from the router.
type Backend interface {
	Meta() *cluster.Meta
	ProposeMeta(ctx context.Context, cmd []byte) (any, error)
	// REST runs one request of the REST API (path relative to /api/v1) as
	// org through the API's own handlers and returns its status and body.
	REST(ctx context.Context, org, method, path string, body []byte) (int, []byte)
	// UsedToday is org's count of queries of the current UTC day.
	UsedToday(org string) int64
	// Settings is org's effective settings (plan included).
	Settings(org string) cluster.Settings
	// Cluster is the cluster view of GET /admin/v1/cluster.
	Cluster() cluster.AdminStatus
	// InvitePreview describes an outstanding share code; found is false
	// when the code is unknown, used up or expired, err when the room's
	// group cannot be read from this node.
	InvitePreview(ctx context.Context, code string) (p InvitePreview, found bool, err error)
}

// InvitePreview is what a join link shows before it is redeemed.
type InvitePreview struct {
	RoomID    string
	RoomName  string
	Scope     string
	ExpiresAt time.Time
	Archived  bool
}

// Mailer sends one e-mail.
type Mailer interface {
	Send(ctx context.Context, to, subject, text, html string) error
}

// Config configures the console.
type Config struct {
	// PublicURL is how browsers reach the service (no trailing slash).
	PublicURL string
	// SMTPURL (smtp://user:pass@host:port, or smtps://) and MailFrom send
	// e-mail invitations; without them the console says mail is off.
	SMTPURL  string
	MailFrom string
	// Mailer overrides the SMTP mailer (tests).
	Mailer Mailer
	Logger *slog.Logger
	// SessionTTL is how long a sign-in lasts (default 14 days).
	SessionTTL time.Duration
}

// Console serves the web console.
type Console struct {
	cfg     Config
	b       Backend
	log     *slog.Logger
	mail    Mailer // nil: mail off
	pages   *pages
	limits  *ratelimit.Limiter
	handler http.Handler
	secure  bool // cookies get the Secure attribute
}

// New builds the console.
func New(cfg Config, b Backend) (*Console, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 14 * 24 * time.Hour
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	c := &Console{cfg: cfg, b: b, log: cfg.Logger, limits: ratelimit.New(limitWindow, limiterMaxKeys, time.Now),
		secure: strings.HasPrefix(cfg.PublicURL, "https://")}
	switch {
	case cfg.Mailer != nil:
		c.mail = cfg.Mailer
	case cfg.SMTPURL != "":
		m, err := newSMTPMailer(cfg.SMTPURL, cfg.MailFrom, hostOf(cfg.PublicURL))
		if err != nil {
			return nil, err
		}
		c.mail = m
	}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	c.pages = p
	c.handler = c.routes()
	return c, nil
}

// MailEnabled reports whether e-mail invitations can be sent.
func (c *Console) MailEnabled() bool { return c.mail != nil }

// Handler serves every path under Base.
func (c *Console) Handler() http.Handler { return c.handler }

func (c *Console) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+Base+"/static/", staticHandler())
	mux.HandleFunc("GET "+Base+"/signin", c.public(c.signInPage))
	mux.HandleFunc("POST "+Base+"/signin", c.public(c.signIn))
	mux.HandleFunc("GET "+Base+"/signup", c.public(c.signUpPage))
	mux.HandleFunc("POST "+Base+"/signup", c.public(c.signUp))
	mux.HandleFunc("POST "+Base+"/signout", c.signedIn(c.signOut))
	mux.HandleFunc("POST "+Base+"/org", c.signedIn(c.switchOrg))
	mux.HandleFunc("GET "+Base, c.signedIn(c.overview))
	mux.HandleFunc("GET "+Base+"/{$}", c.signedIn(c.overview))
	mux.HandleFunc("GET "+Base+"/memories", c.signedIn(c.memories))
	mux.HandleFunc("GET "+Base+"/memories/feed", c.signedIn(c.memoriesFeed))
	mux.HandleFunc("GET "+Base+"/memories/{id}", c.signedIn(c.memory))
	mux.HandleFunc("GET "+Base+"/memories/{id}/delete", c.owner(c.memoryDeletePage))
	mux.HandleFunc("POST "+Base+"/memories/{id}/delete", c.owner(c.memoryDelete))
	mux.HandleFunc("GET "+Base+"/keys", c.signedIn(c.keys))
	mux.HandleFunc("POST "+Base+"/keys", c.owner(c.createKey))
	mux.HandleFunc("POST "+Base+"/keys/{id}/revoke", c.owner(c.revokeKey))
	mux.HandleFunc("GET "+Base+"/settings", c.signedIn(c.settings))
	mux.HandleFunc("POST "+Base+"/settings", c.owner(c.saveSettings))
	mux.HandleFunc("GET "+Base+"/rooms", c.signedIn(c.rooms))
	mux.HandleFunc("POST "+Base+"/rooms", c.owner(c.createRoom))
	mux.HandleFunc("GET "+Base+"/rooms/{id}", c.signedIn(c.room))
	mux.HandleFunc("POST "+Base+"/rooms/{id}/members/{org}", c.owner(c.updateMember))
	mux.HandleFunc("POST "+Base+"/rooms/{id}/members/{org}/revoke", c.owner(c.revokeMember))
	mux.HandleFunc("POST "+Base+"/rooms/{id}/archive", c.owner(c.archiveRoom))
	mux.HandleFunc("POST "+Base+"/rooms/{id}/invitations", c.owner(c.inviteByEmail))
	mux.HandleFunc("POST "+Base+"/rooms/{id}/invitations/{inv}/cancel", c.owner(c.cancelInvitation))
	mux.HandleFunc("GET "+Base+"/invitations/{token}", c.optional(c.invitationPage))
	mux.HandleFunc("POST "+Base+"/invitations/{token}", c.owner(c.acceptInvitation)) // joins the workspace: an owner's change
	mux.HandleFunc("GET "+Base+"/join/{code}", c.signedIn(c.joinPage))
	mux.HandleFunc("POST "+Base+"/join/{code}", c.owner(c.join))
	mux.HandleFunc("GET "+Base+"/vault", c.signedIn(c.vault))
	mux.HandleFunc("POST "+Base+"/vault", c.owner(c.storeSecret))
	mux.HandleFunc("GET "+Base+"/cluster", c.operator(c.clusterPage))
	mux.HandleFunc(Base+"/", c.optional(func(w http.ResponseWriter, r *http.Request, v *view) {
		c.fail(w, r, v, http.StatusNotFound, "There is no such page.")
	}))
	cop := http.NewCrossOriginProtection()
	if c.cfg.PublicURL != "" {
		if err := cop.AddTrustedOrigin(originOf(c.cfg.PublicURL)); err != nil {
			c.log.Warn("console: public URL is not a valid origin", "url", c.cfg.PublicURL, "err", err)
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, &view{}, http.StatusForbidden, "This request came from another site and was refused.")
	}))
	return securityHeaders(cop.Handler(mux), c.secure)
}

// securityHeaders keeps pages out of frames and caches and allows only the
// console's own scripts and styles. Served over https (the public URL's
// scheme), it also tells browsers to use nothing else for the host for a
// year (HSTS), so a network attacker cannot strip the next visit to http
// and read the session cookie's first request.
func securityHeaders(h http.Handler, https bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		if https {
			hd.Set("Strict-Transport-Security", "max-age=31536000")
		}
		hd.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; "+
			"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, Base+"/static/") {
			hd.Set("Cache-Control", "no-store")
		}
		h.ServeHTTP(w, r)
	})
}

func originOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Scheme + "://" + p.Host
}

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Hostname() == "" {
		return "localhost"
	}
	return p.Hostname()
}

// SignInPath is the sign-in page that sends the browser on to next (a
// path on this site) once signed in.
func SignInPath(next string) string {
	if next == "" {
		return Base + "/signin"
	}
	return Base + "/signin?next=" + url.QueryEscape(next)
}

// safeNext returns next when it is a path on this site, else the overview.
// A browser resolves the Location header as a URL, and http.Redirect
// cleans the path first: "/console/../\\evil.example" became "/\\evil.example"
// and "/<TAB>/evil.example" kept its tab, both read as another host. So a
// backslash or a control character anywhere refuses it, and the path is
// cleaned here and must still be one path on this site.
func safeNext(next string) string {
	if next == "" || next[0] != '/' || strings.ContainsFunc(next, func(r rune) bool {
		return r == '\\' || r < 0x20 || r == 0x7f
	}) {
		return Base
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return Base
	}
	clean := path.Clean(u.Path)
	if strings.HasSuffix(u.Path, "/") && clean != "/" {
		clean += "/"
	}
	if !strings.HasPrefix(clean, "/") || strings.HasPrefix(clean, "//") {
		return Base
	}
	u.Path, u.RawPath = clean, ""
	return u.String()
}

// metaResult proposes a meta command; an error apply result is returned
// as the error.
func (c *Console) metaResult(ctx context.Context, cmd []byte) (any, error) {
	out, err := c.b.ProposeMeta(ctx, cmd)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the meta group: %w", err)
	}
	if e, ok := out.(error); ok {
		return nil, e
	}
	return out, nil
}

// waitLocal waits (briefly) until this node's meta state shows what a
// command just committed, so the next page read on this node sees it.
func waitLocal(ctx context.Context, ok func() bool) {
	deadline := time.Now().Add(2 * time.Second)
	for !ok() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}
