package router

import (
	"fmt"
	"net/http/pprof"
	"strconv"
	"strings"

	frouter "github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// pprofRoutes serves Go's profiler under /admin/v1/debug/pprof/ behind the
// admin token (off, 404, without --admin-token): the index, profile (CPU,
// ?seconds=N), symbol, trace, and every named profile (heap, allocs,
// goroutine, block, mutex, threadcreate). Not cmdline: a command line may
// hold secrets given as flags.
//
//	go tool pprof -http : 'http://host:8080/admin/v1/debug/pprof/profile?seconds=20' \
//	  # with the header X-Admin-Token (curl -H ... -o cpu.prof, then pprof cpu.prof)
func (s *Server) pprofRoutes(r *frouter.Router) {
	h := s.pprofHandler()
	r.GET("/admin/v1/debug/pprof/{name:*}", h)
	r.POST("/admin/v1/debug/pprof/{name:*}", h) // symbol lookups post
}

// pprofHandler serves the profile named by the request's "name" value
// (what follows /admin/v1/debug/pprof/) behind the admin token.
func (s *Server) pprofHandler() fasthttp.RequestHandler {
	handlers := map[string]fasthttp.RequestHandler{
		"":        fasthttpadaptor.NewFastHTTPHandlerFunc(pprof.Index),
		"profile": fasthttpadaptor.NewFastHTTPHandlerFunc(pprof.Profile),
		"symbol":  fasthttpadaptor.NewFastHTTPHandlerFunc(pprof.Symbol),
		"trace":   fasthttpadaptor.NewFastHTTPHandlerFunc(pprof.Trace),
	}
	return s.admin(func(c *call) error {
		name := c.param("name")
		name = strings.TrimPrefix(name, "/")
		if err := checkProfileSeconds(c.ctx.QueryArgs()); err != nil {
			return err
		}
		if handle, ok := handlers[name]; ok {
			handle(c.ctx)
			return nil
		}
		// pprof.Index serves named profiles from its own path prefix, so
		// hand it the name directly.
		fasthttpadaptor.NewFastHTTPHandler(pprof.Handler(name))(c.ctx)
		return nil
	})
}

// maxProfileSeconds bounds ?seconds=: a profile runs to its end even when
// its client has gone, and CPU profiles run one at a time, so seconds=100000
// refused every later one for 28 hours.
const maxProfileSeconds = 300

// checkProfileSeconds refuses a seconds parameter that is not a whole
// number from 1 to maxProfileSeconds.
func checkProfileSeconds(args *fasthttp.Args) *apiError {
	if !args.Has("seconds") {
		return nil
	}
	n, err := strconv.Atoi(string(args.Peek("seconds")))
	if err != nil || n < 1 || n > maxProfileSeconds {
		return validationError(fieldError{Loc: []any{"query", "seconds"},
			Msg: fmt.Sprintf("seconds must be a whole number from 1 to %d", maxProfileSeconds), Type: "value_error"})
	}
	return nil
}
