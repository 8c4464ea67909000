package chat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	frouter "github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/router/linger"
	"github.com/hebbdb/hebb/router/ratelimit"
	"github.com/hebbdb/hebb/router/relay"
	"github.com/hebbdb/hebb/router/vault"
)

// Version is what GET /health reports (interface §9).
const Version = "2.0.0"

// MaxBodySize bounds every request body; more gets 413.
const MaxBodySize = 64 << 10

// readBodySize is the largest body the server reads before it answers 413
// (limitBody); a larger one is refused from its headers and its connection
// drains what the client still sends (up to lingerBytes) before it closes
// (router/linger): closing on unread input reset the connection, and a
// client still writing its body lost the 413 to a broken pipe.
const readBodySize = 16 * MaxBodySize

// lingerBytes is the most such a connection drains: bodies up to 16 MiB,
// the REST API's cap, get their 413.
const lingerBytes = 16 << 20

const requestTimeout = 10 * time.Second

// Backend is what the surface needs from the cluster; *cluster.Cluster
// satisfies it.
type Backend interface {
	Meta() *cluster.Meta
	ProposeMeta(ctx context.Context, cmd []byte) (any, error)
	// Propose replicates cmd in the group of tenant and returns the apply result.
	Propose(ctx context.Context, tenant string, cmd []byte) (any, error)
	// ReadFSM returns tenant's state machine after a linearizable read barrier.
	ReadFSM(ctx context.Context, tenant string) (*raftfsm.FSM, error)
	// ChatRoomsOf gathers the live chat rooms filter selects from every
	// data group (from their leaders when this node holds no replica).
	ChatRoomsOf(ctx context.Context, filter raftfsm.ChatRoomFilter) ([]raftfsm.ChatRoomView, error)
}

// OIDC configures the OpenID Connect provider users sign in with; an empty
// Issuer leaves sign-in to guests.
type OIDC struct {
	Issuer       string
	ClientID     string
	ClientSecret string // empty: a public client (PKCE only)
	Scopes       []string
}

// Config is the surface's configuration.
type Config struct {
	// PublicURL is how browsers reach this surface: the OIDC redirect URI and
	// the realtime URL are built on it.
	PublicURL string
	// TrustedOrigins may receive the browser after sign-in (callbackURL),
	// besides PublicURL's own origin and relative paths.
	TrustedOrigins []string
	// ServiceToken guards /internal/*; empty turns those routes off.
	ServiceToken    string
	OIDC            OIDC
	SessionTTL      time.Duration // default 30 days
	TokenTTL        time.Duration // realtime token lifetime, default 5 minutes
	MaxParticipants int           // per room, default 100
	HTTPClient      *http.Client  // talks to the OIDC provider
	Logger          *slog.Logger
	// Keys seals the chat secret before it enters the meta group's log and
	// opens it when read; nil records it in clear.
	Keys *vault.Ring
}

// Server is the chat HTTP surface.
type Server struct {
	cfg   Config
	b     Backend
	log   *slog.Logger
	srv   *fasthttp.Server
	oidc  *provider // nil without an issuer
	keys  keyCache
	conns *hub
	// guests counts the guest sign-ins of each client address (each one a
	// user kept in the meta group).
	guests     *ratelimit.Limiter
	roomLimits *ratelimit.Limiter // room creations of each user
	msgLimits  *ratelimit.Limiter // messages posted by each user
	// origins guards the session cookie against other origins (origin.go).
	origins *http.CrossOriginProtection
	ln      atomic.Pointer[linger.Listener] // what Serve serves, for Shutdown's Drain
}

// New builds the server; Serve starts it.
func New(cfg Config, b Backend) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 30 * 24 * time.Hour
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = 5 * time.Minute
	}
	if cfg.MaxParticipants <= 0 {
		cfg.MaxParticipants = 100
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	s := &Server{cfg: cfg, b: b, log: cfg.Logger, conns: newHub(), guests: ratelimit.New(guestWindow, guestMaxKeys, time.Now),
		roomLimits: ratelimit.New(roomWindow, guestMaxKeys, time.Now), msgLimits: ratelimit.New(messageWindow, guestMaxKeys, time.Now),
		origins: newOriginGuard(cfg)}
	if cfg.OIDC.Issuer != "" {
		s.oidc = newProvider(cfg.OIDC, cfg.HTTPClient)
	}
	s.srv = &fasthttp.Server{
		Handler:               s.routes(),
		MaxRequestBodySize:    readBodySize,
		ReadTimeout:           60 * time.Second,
		WriteTimeout:          60 * time.Second,
		IdleTimeout:           120 * time.Second,
		NoDefaultServerHeader: true,
		SecureErrorLogMessage: true, // errors quote no request bytes (keys, cookies, vault values)
		ErrorHandler:          s.transportError,
		Logger:                ratelimit.ConnErrors(cfg.Logger.Handler()),
		Name:                  "hebb-chat",
	}
	return s
}

// Handler exposes the request handler.
func (s *Server) Handler() fasthttp.RequestHandler { return s.srv.Handler }

// Serve answers requests on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	l := &linger.Listener{Listener: ln, MaxBytes: lingerBytes, MaxTime: linger.Time}
	s.ln.Store(l)
	return s.srv.Serve(l)
}

// Shutdown stops accepting, closes the realtime connections and waits for
// in-flight requests.
func (s *Server) Shutdown(ctx context.Context) error {
	s.conns.closeAll()
	return s.ln.Load().Drain(ctx, s.srv.ShutdownWithContext)
}

func (s *Server) routes() fasthttp.RequestHandler {
	r := frouter.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.NotFound = s.public(func(c *call) error { return notFound("Not found") })
	r.MethodNotAllowed = s.public(func(c *call) error { return newError(405, codeMethod, "Method not allowed") })
	r.GET("/health", s.public(s.health))
	r.HEAD("/health", s.public(s.health)) // load balancers probe with it, as on the REST listener
	r.GET("/openapi.json", s.public(s.openapi))
	s.authRoutes(r)
	r.GET("/api/rooms", s.signedIn(s.listRooms))
	r.POST("/api/rooms", s.signedIn(s.createRoom))
	r.GET("/api/rooms/{roomId}", s.signedIn(s.hosted(s.getRoom)))
	r.PATCH("/api/rooms/{roomId}", s.signedIn(s.hosted(s.updateRoom)))
	r.DELETE("/api/rooms/{roomId}", s.signedIn(s.hosted(s.deleteRoom)))
	r.GET("/api/rooms/{roomId}/messages", s.signedIn(s.hosted(s.listMessages)))
	r.POST("/api/rooms/{roomId}/messages", s.signedIn(s.hosted(s.postMessage)))
	r.PATCH("/api/rooms/{roomId}/messages/{messageId}", s.signedIn(s.hosted(s.editMessage)))
	r.DELETE("/api/rooms/{roomId}/messages/{messageId}", s.signedIn(s.hosted(s.deleteMessage)))
	r.GET("/api/rooms/{roomId}/participants", s.signedIn(s.hosted(s.listParticipants)))
	r.POST("/api/rooms/{roomId}/participants", s.signedIn(s.hosted(s.addParticipant)))
	r.DELETE("/api/rooms/{roomId}/participants/{participantId}", s.signedIn(s.hosted(s.removeParticipant)))
	s.internalRoutes(r)
	r.GET(realtimePath+"{roomId}", s.realtime)
	return linger.Framed(s.limitBody(r.Handler), s.transportError)
}

// limitBody answers 413 to a body over MaxBodySize (the transport reads up
// to readBodySize).
func (s *Server) limitBody(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if len(ctx.Request.Body()) > MaxBodySize {
			s.tooLarge(ctx) // read whole: the connection stays open
			return
		}
		h(ctx)
	}
}

func (s *Server) health(c *call) error {
	return s.ok(c, map[string]any{"status": "ok", "database": false, "version": Version})
}

// call is one request in flight.
type call struct {
	ctx     *fasthttp.RequestCtx
	std     context.Context
	reqID   string
	now     time.Time
	user    cluster.ChatUser
	session cluster.ChatSession
	ids     []string // the caller's identities: its ID and the guests merged into it
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// public wraps a handler that needs no authentication.
func (s *Server) public(h func(*call) error) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		std, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		c := &call{ctx: ctx, std: std, reqID: newRequestID(), now: time.Now().UTC()}
		ctx.Response.Header.Set("X-Request-Id", c.reqID)
		defer s.recover(c)
		err := s.crossOrigin(ctx)
		if err == nil {
			err = h(c)
		}
		if err != nil {
			s.fail(c, err)
		}
	}
}

// signedIn wraps a handler that needs a session.
func (s *Server) signedIn(h func(*call) error) fasthttp.RequestHandler {
	return s.public(func(c *call) error {
		if err := s.authenticate(c); err != nil {
			return err
		}
		return h(c)
	})
}

func (s *Server) recover(c *call) {
	if r := recover(); r != nil {
		s.log.Error("chat handler panic", "path", string(c.ctx.Path()), "panic", r, "request_id", c.reqID)
		s.writeError(c, internalError())
	}
}

// fail maps any error to the envelope, in one place.
func (s *Server) fail(c *call, err error) {
	var ae *apiError
	var nh *cluster.NotHostedError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &nh):
		ae = unavailable("Service unavailable: this node holds no replica of the room").with("reason", "not_hosted")
		if relay.Relayed(c.ctx) { // the forwarding node looks for the leader again
			c.ctx.Response.Header.Set(cluster.NotHostedHeader, "1")
		}
	case errors.Is(err, errSigningKey):
		s.log.Error("chat signing key", "err", err, "request_id", c.reqID)
		ae = unavailable("Service unavailable: the chat signing key cannot be opened or made with this node's vault key "+
			"(HEBB_VAULT_KEY or the data dir's vault.key; see the log)").with("reason", "signing_key_unavailable")
	case errors.Is(err, cluster.ErrStorage):
		s.log.Warn("write refused: the log cannot be written", "err", err, "request_id", c.reqID)
		ae = unavailable("Service unavailable: the server cannot write to its storage").with("reason", "storage_unavailable")
	case errors.Is(err, cluster.ErrOutcomeUnknown):
		ae = unavailable("Service unavailable: the change was not confirmed in time and may have been applied").
			with("reason", "outcome_unknown")
		c.ctx.Response.Header.Set("Retry-After", "1") // as the REST API's: an election takes about a second
	case errors.Is(err, cluster.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		ae = unavailable("Service unavailable: no leader answered in time")
		c.ctx.Response.Header.Set("Retry-After", "1")
	case errors.Is(err, ErrProvider):
		s.log.Warn("sign-in provider", "err", err, "request_id", c.reqID)
		ae = newError(502, codeInternal, "The sign-in provider failed").with("reason", "provider_error")
	default:
		s.log.Error("chat request failed", "path", string(c.ctx.Path()), "err", err, "request_id", c.reqID)
		ae = internalError()
	}
	s.writeError(c, ae)
}

type envelope struct {
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	RequestID *string        `json:"requestId"`
	Retryable bool           `json:"retryable"`
	Details   map[string]any `json:"details"`
}

func (s *Server) writeError(c *call, e *apiError) {
	var id *string
	if c.reqID != "" {
		id = &c.reqID
	}
	s.reply(c, e.Status, envelope{Code: e.Code, Message: e.Message, RequestID: id, Retryable: e.Retryable, Details: e.Details})
}

// reply encodes v as the JSON body with the given status.
func (s *Server) reply(c *call, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.log.Error("cannot encode chat response", "err", err)
		status, b = 500, []byte(`{"code":"INTERNAL","message":"Internal server error","requestId":null,"retryable":false,"details":null}`)
	}
	c.ctx.Response.Header.Set("Cache-Control", "no-store")
	c.ctx.SetStatusCode(status)
	c.ctx.SetContentType("application/json")
	c.ctx.SetBody(b)
}

func (s *Server) ok(c *call, v any) error {
	s.reply(c, 200, v)
	return nil
}

func (s *Server) created(c *call, v any) error {
	s.reply(c, 201, v)
	return nil
}

// tooLarge answers 413 to a body over MaxBodySize.
func (s *Server) tooLarge(ctx *fasthttp.RequestCtx) {
	c := &call{ctx: ctx, reqID: newRequestID()}
	ctx.Response.Header.Set("X-Request-Id", c.reqID)
	s.writeError(c, newError(413, codeValidation, "Request body exceeds 64 KiB"))
}

// transportError answers errors fasthttp meets before a handler runs. The
// client may still be sending, so the connection lingers on close
// (linger.OnError): a client that sends its whole request before it reads
// gets the answer rather than a reset.
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	linger.OnError(ctx, err)
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		s.tooLarge(ctx)
		return
	}
	c := &call{ctx: ctx, reqID: newRequestID()}
	ctx.Response.Header.Set("X-Request-Id", c.reqID)
	if linger.TimedOut(err) {
		e := newError(408, codeTimeout, linger.TimeoutMessage)
		e.Retryable = true
		s.writeError(c, e)
		return
	}
	s.writeError(c, newError(400, codeValidation, "Malformed HTTP request"))
}

// hub tracks the open realtime connections so Shutdown can close them
// (fasthttp does not track hijacked connections).
// It also counts each user's connections, at most maxRealtimePerUser, so
// one account cannot hold unbounded sockets and goroutines on a node.
type hub struct {
	mu      sync.Mutex
	conns   map[*wsConn]string // the user of each
	perUser map[string]int
	closed  bool
}

// maxRealtimePerUser is how many realtime connections one user may hold
// open on one node (a browser opens one a room it shows).
const maxRealtimePerUser = 32

func newHub() *hub { return &hub{conns: map[*wsConn]string{}, perUser: map[string]int{}} }

// full reports whether user holds maxRealtimePerUser connections already:
// asked before the upgrade, to answer 429; add enforces it.
func (h *hub) full(user string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.perUser[user] >= maxRealtimePerUser
}

// add tracks c, a connection of user; errHubClosed once the server stops,
// errUserFull when user holds the most already (upgrades that raced past
// full).
func (h *hub) add(c *wsConn, user string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errHubClosed
	}
	if h.perUser[user] >= maxRealtimePerUser {
		return errUserFull
	}
	h.conns[c] = user
	h.perUser[user]++
	return nil
}

var (
	errHubClosed = errors.New("the server is stopping")
	errUserFull  = errors.New("too many realtime connections for the user")
)

func (h *hub) remove(c *wsConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	user, ok := h.conns[c]
	if !ok {
		return
	}
	delete(h.conns, c)
	if h.perUser[user]--; h.perUser[user] <= 0 {
		delete(h.perUser, user)
	}
}

func (h *hub) closeAll() {
	h.mu.Lock()
	h.closed = true
	conns := make([]*wsConn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.shutdown()
	}
}
