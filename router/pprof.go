package router

import (
	"net/http/pprof"
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
