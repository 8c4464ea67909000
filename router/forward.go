package router

import (
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/relay"
)

// Forwarder is implemented by a Backend that can send a whole request to a
// node holding the tenant's group.
type Forwarder interface {
	ForwardHTTP(ctx stdContext, tenant string, raw []byte) ([]byte, error)
}

// forward sends the request to a node that hosts the tenant's group and
// copies its answer back. It runs before anything was proposed, so the
// whole request is answered by the other node.
func (s *Server) forward(c *call, tenant string) error {
	fw, ok := s.backend.(Forwarder)
	if !ok || relay.Relayed(c.ctx) {
		e := unavailable("Service unavailable: no replica of the tenant's group answered")
		if ok { // relayed: the forwarding node looks for the leader again
			e.Header = map[string]string{cluster.NotHostedHeader: "1"}
		}
		return e
	}
	return relay.Forward(c.ctx, func(req *fasthttp.Request) { markForward(c, req) }, func(raw []byte) ([]byte, error) { return fw.ForwardHTTP(c.std, tenant, raw) })
}

// ServeRaw answers a forwarded request given as raw HTTP bytes.
func (s *Server) ServeRaw(raw []byte) []byte {
	return relay.Serve(raw, s.srv.Handler, trustForwardedOrg)
}

func notHosted(err error) (string, bool) {
	var nh *cluster.NotHostedError
	if errors.As(err, &nh) {
		return nh.Tenant, true
	}
	return "", false
}
