package router

import (
	"bufio"
	"bytes"
	"errors"
	"net"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
)

// forwardedHeader marks a request another node forwarded here, so it is
// never forwarded twice.
const forwardedHeader = "X-Hebb-Forwarded"

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
	if !ok || len(c.ctx.Request.Header.Peek(forwardedHeader)) > 0 {
		return unavailable("Service unavailable: no replica of the tenant's group answered")
	}
	req := &fasthttp.Request{}
	c.ctx.Request.CopyTo(req)
	req.Header.Set(forwardedHeader, "1")
	markForward(c, req)
	var buf bytes.Buffer
	if _, err := req.WriteTo(&buf); err != nil {
		return err
	}
	raw, err := fw.ForwardHTTP(c.std, tenant, buf.Bytes())
	if err != nil {
		return err
	}
	resp := &fasthttp.Response{}
	if err := resp.Read(bufio.NewReader(bytes.NewReader(raw))); err != nil {
		return err
	}
	resp.CopyTo(&c.ctx.Response)
	return nil
}

// ServeRaw answers a forwarded request given as raw HTTP bytes.
func (s *Server) ServeRaw(raw []byte) []byte {
	var req fasthttp.Request
	if err := req.Read(bufio.NewReader(bytes.NewReader(raw))); err != nil {
		return []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
	trustForwardedOrg(&ctx)
	s.srv.Handler(&ctx)
	var buf bytes.Buffer
	_, _ = ctx.Response.WriteTo(&buf)
	return buf.Bytes()
}

func notHosted(err error) (string, bool) {
	var nh *cluster.NotHostedError
	if errors.As(err, &nh) {
		return nh.Tenant, true
	}
	return "", false
}
