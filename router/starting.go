package router

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/router/linger"
	"github.com/hebbdb/hebb/router/ratelimit"
)

// A restarted node restores its groups' snapshots before the router can
// serve (tens of seconds at a million atoms). Meanwhile ServeStarting
// answers on the HTTP listener, so liveness probes and load balancers see
// a live process that is not ready rather than a port that never answers:
// /health as always, /health/ready with "ready": false, the profiler under
// /admin/v1/debug/pprof/ with --admin-token (a slow start is what an
// operator wants to profile), anything else 503, retryable,
// details.reason "starting". Every answer closes its
// connection, so none is left to this server when Server.Serve takes the
// listener over. The persistence API's listener (--chat-addr) gets the
// same, with its own version and no /health/ready.

// Starting configures ServeStarting.
type Starting struct {
	Version   string // the API's version, as its /health reports it
	Ready     bool   // answer /health/ready too (the memory API has it)
	Embedding bool   // what /health/ready reports as its embedding check
	// AdminToken, when set, serves the profiler behind it (pprofHandler).
	AdminToken string
	Log        *slog.Logger
}

// ServeStarting answers on ln until handoff, which returns once it has
// stopped accepting; ln stays open for the real server. Only handoff's
// first call acts. A listener without deadlines (not TCP or unix) is left
// alone, and handoff does nothing.
func ServeStarting(ln net.Listener, st Starting) (handoff func()) {
	dl, ok := ln.(interface{ SetDeadline(time.Time) error })
	if !ok {
		return func() {}
	}
	log := st.Log
	if log == nil {
		log = slog.Default()
	}
	s := &Server{log: log, cfg: Config{AdminToken: st.AdminToken}}
	hl := &handoffListener{Listener: ln}
	// The real server's limits and error answers: a body over the cap gets
	// its JSON 413 (not fasthttp's plain-text one at its default 4 MiB), a
	// request with a cookie-laden header its JSON 400.
	srv := &fasthttp.Server{
		Handler:               s.starting(st),
		MaxRequestBodySize:    MaxBodySize,
		ReadBufferSize:        readBufferSize,
		ReadTimeout:           10 * time.Second,
		WriteTimeout:          120 * time.Second, // a CPU profile takes its seconds
		NoDefaultServerHeader: true,
		SecureErrorLogMessage: true, // errors quote no request bytes (keys, cookies, vault values)
		ErrorHandler:          s.transportError,
		Logger:                ratelimit.ConnErrors(log.Handler()),
		Name:                  "hebb",
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(&linger.Listener{Listener: hl, MaxBytes: 2 * MaxBodySize, MaxTime: linger.Time})
	}()
	return sync.OnceFunc(func() {
		hl.stopping.Store(true)
		_ = dl.SetDeadline(time.Now()) // wakes a blocked Accept
		<-served
		_ = dl.SetDeadline(time.Time{})
	})
}

// handoffListener ends its server's accept loop (io.EOF) once stopping is
// set, without closing the listener. A connection accepted just before is
// still served, and closed after its one answer.
type handoffListener struct {
	net.Listener
	stopping atomic.Bool
}

func (l *handoffListener) Accept() (net.Conn, error) {
	if l.stopping.Load() {
		return nil, io.EOF
	}
	c, err := l.Listener.Accept()
	if err != nil && l.stopping.Load() {
		return nil, io.EOF
	}
	return c, err
}

// starting is the handler of ServeStarting.
func (s *Server) starting(st Starting) fasthttp.RequestHandler {
	const pprofPrefix = "/admin/v1/debug/pprof/"
	pprof := s.pprofHandler()
	return func(ctx *fasthttp.RequestCtx) {
		if p := string(ctx.Path()); strings.HasPrefix(p, pprofPrefix) && st.AdminToken != "" &&
			(ctx.IsGet() || ctx.IsPost()) {
			ctx.SetConnectionClose()
			ctx.SetUserValue("name", strings.TrimPrefix(p, pprofPrefix))
			pprof(ctx)
			return
		}
		ctx.SetConnectionClose()
		c := &call{ctx: ctx, reqID: newRequestID()}
		ctx.Response.Header.Set("X-Request-Id", c.reqID)
		path := strings.TrimPrefix(string(ctx.Path()), "/api/v1")
		switch {
		case (ctx.IsGet() || ctx.IsHead()) && path == "/health":
			_ = s.ok(c, healthJSON{Status: "ok", Database: false, Version: st.Version})
		case (ctx.IsGet() || ctx.IsHead()) && path == "/health/ready" && st.Ready:
			_ = s.ok(c, readyJSON{Ready: false, Version: st.Version,
				Checks: map[string]bool{"database": false, "engine": false, "embedding": st.Embedding}})
		default:
			e := unavailable("Service unavailable: the node is starting").with("reason", "starting")
			ctx.Response.Header.Set("Retry-After", "1")
			s.writeError(c, e)
		}
	}
}
