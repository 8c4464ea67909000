package router

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"sort"
	"sync/atomic"
	"time"

	frouter "github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/raftfsm"
	"github.com/hebbdb/hebb/router/console"
	"github.com/hebbdb/hebb/router/embedder"
	"github.com/hebbdb/hebb/router/linger"
	"github.com/hebbdb/hebb/router/ratelimit"
	"github.com/hebbdb/hebb/router/vault"
)

// Version is reported by the health probes (interface §9).
const Version = "1.0.0"

// MaxBodySize is the hard transport cap (operator.md §6).
const MaxBodySize = 16 << 20

// requestTimeout bounds every call into a group.
const requestTimeout = 10 * time.Second

// Backend is what the router needs from the cluster: the meta state for
// auth and settings, and the groups that hold tenants. A local group and a
// remote one are served through the same interface.
type Backend interface {
	Meta() *cluster.Meta
	ProposeMeta(ctx context.Context, cmd []byte) (any, error)
	// Propose replicates cmd in the group of tenant and returns the apply result.
	Propose(ctx context.Context, tenant string, cmd []byte) (any, error)
	// ReadFSM returns the state machine of tenant's group after a
	// linearizable read barrier.
	ReadFSM(ctx context.Context, tenant string) (*raftfsm.FSM, error)
	// InRoom reports whether an atom lives in a room, looking in every data
	// group (through their leaders when this node holds no replica).
	InRoom(ctx context.Context, org string, id raftfsm.ID) (bool, error)
	// RoomsOf gathers the rooms an org belongs to from every group.
	RoomsOf(ctx context.Context, org string, now int64) ([]raftfsm.RoomView, error)
	// ProposeAll replicates cmd in every data group.
	ProposeAll(ctx context.Context, cmd []byte) ([]any, error)
	Status() cluster.Status
	Placement(tenant string) cluster.Placement
}

// Config is the router's part of the server configuration.
type Config struct {
	PublicURL           string
	AdminToken          string
	EnableReset         bool
	EnableConsolidation bool
	DefaultPlan         cluster.Plan
	Vault               *vault.Ring // seals vault values; nil: vault answers 503
	SeparateMetrics     bool        // /metrics is served on its own listener
	RedirectHosts       []string    // OAuth redirect hosts allowed besides loopback
	SMTPURL             string      // mail for console invitations (smtp://user:pass@host:port); "" = off
	MailFrom            string      // sender address of console invitations
	Logger              *slog.Logger
}

// Server is the HTTP surface.
type Server struct {
	cfg     Config
	backend Backend
	emb     embedder.Embedder
	log     *slog.Logger
	srv     *fasthttp.Server
	touch   *toucher
	quota   *quotas
	rooms   *ratelimit.Limiter              // room creations of each org (rooms.go)
	tools   *toolSurface                    // POST /mcp and its authorization server
	console *consoleSurface                 // the web console under /console
	ln      atomic.Pointer[linger.Listener] // what Serve serves, for Shutdown's Drain
}

// New builds the server; Serve starts it.
func New(cfg Config, b Backend, emb embedder.Embedder) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, backend: b, emb: emb, log: cfg.Logger, quota: newQuotas(b, cfg.Logger),
		rooms: ratelimit.New(roomWindow, roomLimitKeys, time.Now)}
	s.touch = newToucher(b, cfg.Logger)
	go s.touch.run()
	s.srv = &fasthttp.Server{
		Handler:               s.routes(),
		MaxRequestBodySize:    MaxBodySize,
		ReadBufferSize:        readBufferSize,
		ReadTimeout:           60 * time.Second,
		WriteTimeout:          120 * time.Second,
		IdleTimeout:           120 * time.Second,
		NoDefaultServerHeader: true,
		SecureErrorLogMessage: true, // errors quote no request bytes (keys, cookies, vault values)
		ErrorHandler:          s.transportError,
		Logger:                ratelimit.ConnErrors(cfg.Logger.Handler()),
		Name:                  "hebb",
	}
	return s
}

// readBufferSize bounds a request's line and headers together: browsers
// send every cookie of the host (other apps on localhost:8080 included),
// which fasthttp's default of 4 KiB refused.
const readBufferSize = 16 << 10

// Handler exposes the request handler (tests drive it directly).
func (s *Server) Handler() fasthttp.RequestHandler { return s.srv.Handler }

// Serve answers requests on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	if runtime.GOMAXPROCS(0) > 1 { // with one CPU a poll would hold it from other connections
		ln = &spinListener{Listener: ln}
	}
	// Bodies up to twice the cap get their 413 rather than a reset.
	l := &linger.Listener{Listener: ln, MaxBytes: 2 * MaxBodySize, MaxTime: linger.Time}
	s.ln.Store(l)
	return s.srv.Serve(l)
}

// Shutdown stops accepting, waits for in-flight requests, then flushes the
// pending access counts.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.ln.Load().Drain(ctx, s.srv.ShutdownWithContext)
	s.touch.stop()
	s.quota.stop()
	return err
}

func (s *Server) routes() fasthttp.RequestHandler {
	r := frouter.New()
	r.SaveMatchedRoutePath = true
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	notFoundJSON := s.plain(func(c *call) error { return notFound("Not found") })
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		// The router matches /console/<rest> but not a path ending in '/'
		// (it would redirect, which is off): the console answers its own.
		if s.console != nil && s.console.h != nil && bytes.HasPrefix(ctx.Path(), []byte(console.Base+"/")) {
			s.console.h(ctx)
			return
		}
		notFoundJSON(ctx)
	}
	r.MethodNotAllowed = s.plain(func(c *call) error {
		return newError(405, codeMethod, "Method not allowed")
	})
	for _, prefix := range []string{"", "/api/v1"} {
		// HEAD too: load balancers probe with it (the answer without a body).
		for _, m := range []string{fasthttp.MethodGet, fasthttp.MethodHead} {
			r.Handle(m, prefix+"/health", s.plain(s.health))
			r.Handle(m, prefix+"/health/ready", s.plain(s.ready))
		}
	}
	v1 := r.Group("/api/v1")
	v1.POST("/memory/write", s.authed(s.write))
	v1.POST("/memory/read", s.authed(s.counted(s.read)))
	v1.POST("/memory/read-batch", s.authed(s.counted(s.readBatch)))
	v1.POST("/memory/query", s.authed(s.counted(s.query)))
	v1.POST("/memory/recent", s.authed(s.counted(s.recent)))
	v1.POST("/memory/graph", s.authed(s.counted(s.graph)))
	v1.POST("/memory/write-batch", s.authed(s.writeBatchHyphen))
	v1.POST("/memory/write_batch", s.authed(s.writeBatchUnderscore))
	v1.POST("/memory/feedback", s.authed(s.feedback))
	v1.POST("/memory/consolidate", s.authed(s.consolidate))
	v1.GET("/memory/atoms/{atom_id}", s.authed(s.getAtom))
	v1.DELETE("/memory/atoms/{atom_id}", s.authed(s.deleteAtom))
	v1.GET("/memory/atoms/{atom_id}/chain", s.authed(s.chain))
	v1.POST("/memory/atoms/by-external-ref", s.authed(s.byExternalRef))
	v1.DELETE("/memory/domain/{domain}", s.authed(s.deleteDomain))
	v1.GET("/memory/stats", s.authed(s.stats))
	v1.GET("/memory/domains", s.authed(s.domains))
	v1.GET("/memory/export", s.authed(s.export))
	v1.DELETE("/memory/reset", s.authed(s.reset))
	v1.POST("/memory/rooms", s.authed(s.createRoom))
	v1.GET("/memory/rooms", s.authed(s.listRooms))
	v1.POST("/memory/rooms/join", s.authed(s.joinRoom))
	v1.POST("/memory/rooms/{room_id}/invites", s.authed(s.createInvite))
	v1.GET("/memory/rooms/{room_id}/invites", s.authed(s.listInvites))
	v1.GET("/memory/rooms/{room_id}/members", s.authed(s.listMembers))
	v1.PATCH("/memory/rooms/{room_id}/members/{org_id}", s.authed(s.updateMember))
	v1.DELETE("/memory/rooms/{room_id}/members/{org_id}", s.authed(s.revokeMember))
	v1.POST("/memory/rooms/{room_id}/archive", s.authed(s.archiveRoom))
	v1.POST("/vault/secrets", s.authed(s.storeSecret))
	v1.GET("/vault/secrets", s.authed(s.listSecrets))
	v1.GET("/vault/secrets/by-alias/{alias}", s.authed(s.secretByAlias))
	v1.POST("/orchestration/context", s.authed(s.orchestrate))
	s.adminRoutes(r)
	s.pprofRoutes(r)
	s.consoleRoutes(r)
	s.toolRoutes(r)
	if !s.cfg.SeparateMetrics {
		r.GET("/metrics", MetricsHandler())
	}
	return observe(linger.Framed(r.Handler, s.transportError))
}

// param returns the path segment bound to name, percent-decoded: the
// router matches the path as sent, and clients encode characters such as
// ':' in a segment (a secret's alias). A segment that does not decode is
// returned as sent.
func (c *call) param(name string) string {
	raw, _ := c.ctx.UserValue(name).(string)
	if v, err := url.PathUnescape(raw); err == nil {
		return v
	}
	return raw
}

// call is one request in flight.
type call struct {
	ctx      *fasthttp.RequestCtx
	std      context.Context
	reqID    string
	org      string
	settings cluster.Settings
	rooms    map[string]raftfsm.RoomView // rooms this call passed the membership check of
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

func (s *Server) begin(ctx *fasthttp.RequestCtx) (*call, context.CancelFunc) {
	std, cancel := context.WithTimeout(parentContext(ctx), requestTimeout)
	c := &call{ctx: ctx, std: std, reqID: newRequestID()}
	ctx.Response.Header.Set("X-Request-Id", c.reqID)
	return c, cancel
}

// plain wraps a handler that needs no authentication.
func (s *Server) plain(h func(*call) error) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		c, cancel := s.begin(ctx)
		defer cancel()
		defer s.recover(c)
		if err := h(c); err != nil {
			if tenant, ok := notHosted(err); ok {
				if err = s.forward(c, tenant); err == nil {
					return
				}
			}
			s.fail(c, err)
		}
	}
}

// authed wraps a handler of the REST API: the caller's key is checked first.
func (s *Server) authed(h func(*call) error) fasthttp.RequestHandler {
	return s.plain(func(c *call) error {
		if err := s.authenticate(c); err != nil {
			return err
		}
		return h(c)
	})
}

func (s *Server) recover(c *call) {
	if r := recover(); r != nil {
		s.log.Error("handler panic", "path", string(c.ctx.Path()), "panic", r, "request_id", c.reqID)
		s.writeError(c, internalError())
	}
}

// fail maps any error to the envelope, in one place.
func (s *Server) fail(c *call, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, cluster.ErrStorage):
		s.log.Warn("write refused: the log cannot be written", "err", err, "request_id", c.reqID)
		ae = storageUnavailable()
	case errors.Is(err, cluster.ErrOutcomeUnknown):
		ae = outcomeUnknown()
	case errors.Is(err, ErrUnavailable), errors.Is(err, cluster.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		ae = unavailable("Service unavailable: no leader answered in time")
		ae.Header = map[string]string{"Retry-After": "1"} // an election takes about a second
	default:
		s.log.Error("request failed", "path", string(c.ctx.Path()), "err", err, "request_id", c.reqID)
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
	for k, v := range e.Header {
		c.ctx.Response.Header.Set(k, v)
	}
	s.reply(c, e.Status, envelope{Code: e.Code, Message: e.Message, RequestID: id,
		Retryable: e.Retryable, Details: e.Details})
}

// reply encodes v as the JSON body with the given status.
func (s *Server) reply(c *call, status int, v any) {
	c.ctx.SetContentType("application/json")
	err := encodeReplyOwned(v, c.ctx.SetBody, c.ctx.Response.SetBodyRaw)
	if err != nil {
		s.log.Error("cannot encode response", "err", err)
		status = 500
		c.ctx.SetBodyString(`{"code":"INTERNAL","message":"Internal server error","requestId":null,"retryable":false,"details":null}`)
	}
	c.ctx.SetStatusCode(status)
}

func (s *Server) ok(c *call, v any) error {
	s.reply(c, 200, v)
	return nil
}

// transportError answers errors fasthttp meets before a handler runs. The
// connection closes after the answer, and the client may still be sending
// (a body over the cap, headers over the buffer, the rest of a malformed
// request): it lingers (linger.OnError), so that a client that sends its
// whole request before it reads gets the answer rather than a reset.
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	c := &call{ctx: ctx, reqID: newRequestID()}
	ctx.Response.Header.Set("X-Request-Id", c.reqID)
	linger.OnError(ctx, err)
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		s.writeError(c, newError(413, codeValidation, "Request body exceeds 16 MiB"))
		return
	}
	if linger.TimedOut(err) {
		s.writeError(c, readTimedOut())
		return
	}
	var small *fasthttp.ErrSmallBuffer
	if errors.As(err, &small) {
		s.writeError(c, validationError(fieldError{Loc: []any{"header"},
			Msg: fmt.Sprintf("Request headers exceed %d KiB", readBufferSize>>10), Type: "value_error"}))
		return
	}
	s.writeError(c, validationError(fieldError{Loc: []any{"request"}, Msg: "Malformed HTTP request", Type: "value_error"}))
}

func sortStrings(s []string) { sort.Strings(s) }

type (
	fastCtx    = fasthttp.RequestCtx
	stdContext = context.Context
)
