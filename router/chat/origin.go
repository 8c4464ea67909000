package chat

import (
	"net/http"

	"github.com/valyala/fasthttp"
)

// The session cookie is SameSite=Lax: browsers leave it off requests that
// other sites' pages make, but not off those of another origin of the same
// site (a sibling subdomain). So an unsafe request that the cookie alone
// authenticates must come from this surface's own origin, or a trusted one:
// net/http's CrossOriginProtection decides, as for the console
// (Sec-Fetch-Site, else Origin against Host; a request with neither header
// is not a browser's). A bearer token is never sent by a browser on its
// own, so requests carrying one are not checked.

// newOriginGuard returns the check of the surface's trusted origins: the
// public URL's and TrustedOrigins.
func newOriginGuard(cfg Config) *http.CrossOriginProtection {
	cop := http.NewCrossOriginProtection()
	for _, o := range append([]string{originOf(cfg.PublicURL)}, cfg.TrustedOrigins...) {
		if o != "" {
			// An origin that does not parse is left out: it could not
			// match a browser's Origin header anyway.
			_ = cop.AddTrustedOrigin(o)
		}
	}
	return cop
}

// crossOrigin refuses an unsafe request authenticated by the session
// cookie that a page of another origin made.
func (s *Server) crossOrigin(ctx *fasthttp.RequestCtx) error {
	if len(ctx.Request.Header.Cookie(sessionCookie)) == 0 {
		return nil
	}
	if _, bearer := cutBearer(string(ctx.Request.Header.Peek("Authorization"))); bearer {
		return nil
	}
	req := &http.Request{Method: string(ctx.Method()), Host: string(ctx.Host()), Header: http.Header{}}
	for _, k := range [...]string{"Sec-Fetch-Site", "Origin"} {
		if v := ctx.Request.Header.Peek(k); len(v) > 0 {
			req.Header.Set(k, string(v))
		}
	}
	if s.origins.Check(req) != nil {
		return forbidden("Cross-origin request refused: a page of another origin cannot act with this session").
			with("reason", "cross_origin")
	}
	return nil
}
