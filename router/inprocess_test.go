package router

import (
	"testing"

	"github.com/valyala/fasthttp"
)

func TestMarkForward(t *testing.T) {
	tests := []struct {
		name     string
		inProc   string // org of the in-process request ("" for a client request)
		sent     string // org header the client sent
		wantSent string
	}{
		{"client header is stripped", "", "org_victim", ""},
		{"in-process org is carried", "org_a", "", "org_a"},
		{"in-process org wins over a sent header", "org_a", "org_victim", "org_a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ctx fasthttp.RequestCtx
			if tt.inProc != "" {
				ctx.SetUserValue(inProcessOrgKey{}, tt.inProc)
			}
			req := &fasthttp.Request{}
			if tt.sent != "" {
				req.Header.Set(orgHeader, tt.sent)
			}
			markForward(&call{ctx: &ctx}, req)
			if got := string(req.Header.Peek(orgHeader)); got != tt.wantSent {
				t.Errorf("forwarded org header %q, want %q", got, tt.wantSent)
			}
		})
	}
	t.Run("node transport turns the header into the user value", func(t *testing.T) {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.Set(orgHeader, "org_a")
		trustForwardedOrg(&ctx)
		if org, ok := inProcessOrg(&ctx); !ok || org != "org_a" || len(ctx.Request.Header.Peek(orgHeader)) != 0 {
			t.Errorf("org %q %v, header left %q", org, ok, ctx.Request.Header.Peek(orgHeader))
		}
	})
}
