package router

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/valyala/fasthttp"
)

// inProcessOrgKey marks a request the router runs through its own handlers
// on behalf of an org it already authenticated (the tool connector's
// caller). It is a user value, which no network request can set;
// authenticate honours it and nothing else does.
type inProcessOrgKey struct{}

// parentContextKey carries the context of an in-process request, so the
// handler's deadline is the caller's.
type parentContextKey struct{}

// orgHeader carries the in-process org on a request forwarded to the node
// that hosts the tenant. forward always strips it from what a client sent
// and ServeRaw, which only the node transport calls, turns it back into
// the user value.
const orgHeader = "X-Hebb-Internal-Org"

// serveAs runs one REST request (path relative to /api/v1) through the
// router's handlers as org, with the caller's headers, and returns the
// status and body.
func (s *Server) serveAs(ctx context.Context, org, method, path string, body []byte, header map[string]string) (int, []byte) {
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI("/api/v1" + path)
	req.Header.SetHost("localhost")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(body)
	}
	var fctx fasthttp.RequestCtx
	fctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
	fctx.SetUserValue(inProcessOrgKey{}, org)
	fctx.SetUserValue(parentContextKey{}, ctx)
	s.srv.Handler(&fctx)
	return fctx.Response.StatusCode(), bytes.Clone(fctx.Response.Body())
}

// inProcessOrg returns the org of an in-process request.
func inProcessOrg(ctx *fasthttp.RequestCtx) (string, bool) {
	org, ok := ctx.UserValue(inProcessOrgKey{}).(string)
	return org, ok && org != ""
}

// parentContext returns the caller's context of an in-process request.
func parentContext(ctx *fasthttp.RequestCtx) context.Context {
	if p, ok := ctx.UserValue(parentContextKey{}).(context.Context); ok {
		return p
	}
	return context.Background()
}

// trustForwardedOrg moves the org a peer's forward carried into the user
// value; ServeRaw calls it for requests from the node transport only.
func trustForwardedOrg(ctx *fasthttp.RequestCtx) {
	if org := ctx.Request.Header.Peek(orgHeader); len(org) > 0 {
		ctx.SetUserValue(inProcessOrgKey{}, string(org))
		ctx.Request.Header.Del(orgHeader)
	}
}

// markForward sets, on a request copy about to be forwarded, the org header
// of an in-process request, and strips whatever a client sent in it.
func markForward(c *call, req *fasthttp.Request) {
	org, ok := inProcessOrg(c.ctx)
	markOrg(req, org, ok)
}

// markOrg is markForward for an in-process org read earlier (inProcess
// false: none), when the call's context is gone by the time it forwards.
func markOrg(req *fasthttp.Request, org string, inProcess bool) {
	req.Header.Del(orgHeader)
	if inProcess {
		req.Header.Set(orgHeader, org)
	}
}

// toolCaller runs the tool set's REST calls in-process as one org
// (mcptools.Caller).
type toolCaller struct {
	s       *Server
	org     string
	headers map[string]string
}

func (t toolCaller) Do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case json.RawMessage:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return 0, nil, err
		}
	}
	status, out := t.s.serveAs(ctx, t.org, method, path, raw, t.headers)
	return status, out, nil
}

// serveStd runs a net/http handler for a fasthttp request, synchronously,
// with ctx as the request's context; the response is buffered (the handlers
// mounted this way answer plain JSON or HTML, never a stream).
func serveStd(fctx *fasthttp.RequestCtx, h http.Handler, ctx context.Context) {
	u, err := url.ParseRequestURI(string(fctx.RequestURI()))
	if err != nil {
		fctx.Error("Bad request URI", fasthttp.StatusBadRequest)
		return
	}
	body := bytes.Clone(fctx.PostBody())
	r := (&http.Request{Method: string(fctx.Method()), URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		Host: string(fctx.Host()), RemoteAddr: fctx.RemoteAddr().String(), RequestURI: u.RequestURI()}).WithContext(ctx)
	for k, v := range fctx.Request.Header.All() {
		r.Header.Add(string(k), string(v))
	}
	w := &bufferedResponse{header: http.Header{}}
	h.ServeHTTP(w, r)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	fctx.SetStatusCode(w.status)
	for k, vs := range w.header {
		for _, v := range vs {
			fctx.Response.Header.Add(k, v)
		}
	}
	fctx.SetBody(w.body.Bytes())
}

// bufferedResponse is an http.ResponseWriter that keeps the whole answer.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.header }

func (w *bufferedResponse) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *bufferedResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush is a no-op: the answer is sent whole.
func (w *bufferedResponse) Flush() {}
