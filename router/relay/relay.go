package relay

import (
	"bufio"
	"bytes"
	"fmt"
	"net"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
)

// header marks a request a node forwarded, so that it is never forwarded
// again.
const header = "X-Hebb-Forwarded"

// relayedKey is the user value Serve sets: only a request that came
// through the node RPC is relayed, whatever headers a client sends.
type relayedKey struct{}

// Relayed reports whether ctx's request was forwarded by another node:
// such a request must be answered here, and was counted against the
// limits of the node the client reached. A client's own X-Hebb-Forwarded
// header does not make it one (it skipped the chat API's room-creation
// limit and reached the export's paging between nodes).
func Relayed(ctx *fasthttp.RequestCtx) bool { return ctx.UserValue(relayedKey{}) != nil }

// MarkRelayed makes ctx's request one another node forwarded (Serve does,
// and tests).
func MarkRelayed(ctx *fasthttp.RequestCtx) { ctx.SetUserValue(relayedKey{}, true) }

// Forward copies in's request, marks the copy as forwarded (Relayed), lets
// mark adjust it further (its headers), sends it as raw bytes with send,
// and copies the answer, headers included, into in's response. send's
// error is returned as it is.
func Forward(in *fasthttp.RequestCtx, mark func(*fasthttp.Request), send func(raw []byte) ([]byte, error)) error {
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	if err := Exchange(&in.Request, resp, mark, send); err != nil {
		return err
	}
	resp.CopyTo(&in.Response)
	in.Response.Header.Del(cluster.NotHostedHeader) // between nodes only
	return nil
}

// Exchange sends a copy of req, marked as forwarded and adjusted by mark,
// as raw bytes with send, and reads the answer into resp.
func Exchange(req *fasthttp.Request, resp *fasthttp.Response, mark func(*fasthttp.Request),
	send func(raw []byte) ([]byte, error)) error {
	cp := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(cp)
	req.CopyTo(cp)
	cp.Header.Set(header, "1")
	mark(cp)
	var buf bytes.Buffer
	if _, err := cp.WriteTo(&buf); err != nil {
		return fmt.Errorf("cannot forward request: %w", err)
	}
	raw, err := send(buf.Bytes())
	if err != nil {
		return err
	}
	if err := resp.Read(bufio.NewReader(bytes.NewReader(raw))); err != nil {
		return fmt.Errorf("cannot read forwarded answer: %w", err)
	}
	return nil
}

// Serve answers raw, a request another node forwarded, with h and returns
// the raw answer; prepare, when not nil, sees the request first. The
// request comes from the loopback address; one that does not parse is
// answered 400.
func Serve(raw []byte, h fasthttp.RequestHandler, prepare func(*fasthttp.RequestCtx)) []byte {
	var req fasthttp.Request
	if err := req.Read(bufio.NewReader(bytes.NewReader(raw))); err != nil {
		return []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
	}
	var ctx fasthttp.RequestCtx
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, nil)
	MarkRelayed(&ctx)
	if prepare != nil {
		prepare(&ctx)
	}
	h(&ctx)
	var buf bytes.Buffer
	_, _ = ctx.Response.WriteTo(&buf)
	return buf.Bytes()
}
