package relay

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
)

// A request forwarded with Forward and answered by Serve reaches the
// handler whole (method, path, headers, body, the mark) and its answer
// comes back whole.
func TestForwardServeRoundTrip(t *testing.T) {
	h := func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Request.Header.Peek("X-Prepared")) != "yes" {
			ctx.SetStatusCode(500)
			return
		}
		if !Relayed(ctx) {
			ctx.SetStatusCode(502)
			return
		}
		ctx.SetStatusCode(201)
		ctx.Response.Header.Set("X-Echo-Mark", string(ctx.Request.Header.Peek("X-Mark")))
		ctx.Response.Header.Set(cluster.NotHostedHeader, "1") // between nodes only
		ctx.SetBodyString(string(ctx.Method()) + " " + string(ctx.Path()) + " " + string(ctx.PostBody()) +
			" " + ctx.RemoteIP().String())
	}
	prepare := func(ctx *fasthttp.RequestCtx) { ctx.Request.Header.Set("X-Prepared", "yes") }
	var in fasthttp.RequestCtx
	in.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 9)}, nil)
	in.Request.Header.SetMethod("POST")
	in.Request.SetRequestURI("http://node-a/api/rooms/x?y=1")
	in.Request.SetBodyString(`{"a":1}`)
	err := Forward(&in, func(r *fasthttp.Request) { r.Header.Set("X-Mark", "1") },
		func(raw []byte) ([]byte, error) { return Serve(raw, h, prepare), nil })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(in.Response.Body()), `POST /api/rooms/x {"a":1} 127.0.0.1`; in.Response.StatusCode() != 201 || got != want {
		t.Fatalf("answer %d %q, want 201 %q", in.Response.StatusCode(), got, want)
	}
	if got := string(in.Response.Header.Peek("X-Echo-Mark")); got != "1" {
		t.Fatalf("mark seen by the handler: %q", got)
	}
	if in.Response.Header.Peek(cluster.NotHostedHeader) != nil {
		t.Fatal("the not-hosted mark between nodes reached the caller's answer")
	}
	if in.Request.Header.Peek("X-Mark") != nil || Relayed(&in) {
		t.Fatal("Forward marked the caller's request, not its copy")
	}
}

// A client that sends the forwarding header itself is not relayed: only a
// request Serve answers is.
func TestRelayedOnlyThroughServe(t *testing.T) {
	var ctx fasthttp.RequestCtx
	ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 9)}, nil)
	ctx.Request.Header.Set(header, "1")
	if Relayed(&ctx) {
		t.Fatal("a client's own forwarding header made its request relayed")
	}
}

func TestForwardErrors(t *testing.T) {
	var in fasthttp.RequestCtx
	in.Init(&fasthttp.Request{}, nil, nil)
	in.Request.SetRequestURI("http://node-a/x")
	sendErr := errors.New("no leader")
	if err := Forward(&in, func(*fasthttp.Request) {}, func([]byte) ([]byte, error) { return nil, sendErr }); !errors.Is(err, sendErr) {
		t.Fatalf("send error: %v", err)
	}
	err := Forward(&in, func(*fasthttp.Request) {}, func([]byte) ([]byte, error) { return []byte("garbage"), nil })
	if err == nil || !strings.Contains(err.Error(), "cannot read forwarded answer") {
		t.Fatalf("garbage answer: %v", err)
	}
	if got := string(Serve([]byte("not http"), nil, nil)); !strings.HasPrefix(got, "HTTP/1.1 400") {
		t.Fatalf("Serve of garbage: %q", got)
	}
}

// A streamed answer (read-batch streams large replies) crosses the relay
// whole: Serve writes it chunked and Exchange reads it back.
func TestForwardStreamedAnswer(t *testing.T) {
	part := strings.Repeat("abcdefgh", 100_000)
	h := func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(200)
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			for i := range 5 {
				fmt.Fprintf(w, "%d:%s;", i, part)
				_ = w.Flush()
			}
		})
	}
	var in fasthttp.RequestCtx
	in.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 9)}, nil)
	in.Request.Header.SetMethod("POST")
	in.Request.SetRequestURI("http://node-a/api/v1/memory/read-batch")
	err := Forward(&in, func(*fasthttp.Request) {}, func(raw []byte) ([]byte, error) { return Serve(raw, h, nil), nil })
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range 5 {
		fmt.Fprintf(&want, "%d:%s;", i, part)
	}
	if got := string(in.Response.Body()); in.Response.StatusCode() != 200 || got != want.String() {
		t.Fatalf("answer %d, %d bytes, want 200, %d bytes", in.Response.StatusCode(), len(got), want.Len())
	}
}
