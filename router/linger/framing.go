package linger

import (
	"bytes"
	"errors"

	"github.com/valyala/fasthttp"
)

// AmbiguousFraming reports whether a request carries both Transfer-Encoding:
// chunked and Content-Length (RFC 9112 §6.1). fasthttp frames it by the
// chunks and keeps the connection; a proxy in front that framed it by the
// length would take the rest of the body for another request (request
// smuggling), so the servers refuse it and close the connection.
//
// It reads the raw header lines: fasthttp's ContentLength is -1 for a
// chunked body only until the body is read, and an empty one (the "0" chunk
// a smuggled request follows) sets it to 0.
func AmbiguousFraming(h *fasthttp.RequestHeader) bool {
	var length, encoding bool
	for line := range bytes.SplitSeq(h.RawHeaders(), []byte("\n")) {
		name, _, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		name = bytes.TrimSpace(name)
		length = length || bytes.EqualFold(name, []byte("Content-Length"))
		encoding = encoding || bytes.EqualFold(name, []byte("Transfer-Encoding"))
	}
	return length && encoding
}

// ErrAmbiguousFraming is what Framed gives its refuse function.
var ErrAmbiguousFraming = errors.New("request has both Transfer-Encoding: chunked and Content-Length")

// Framed returns h, but for a request of ambiguous framing
// (AmbiguousFraming), which it answers through refuse (the server's answer
// to a malformed request) and closes the connection after.
func Framed(h fasthttp.RequestHandler, refuse func(*fasthttp.RequestCtx, error)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if AmbiguousFraming(&ctx.Request.Header) {
			ctx.SetConnectionClose()
			refuse(ctx, ErrAmbiguousFraming)
			return
		}
		h(ctx)
	}
}
