package router

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/router/linger"
)

// A request that does not arrive within the read timeout answers 408
// REQUEST_TIMEOUT, retryable: nothing of it was acted on. It answered 400
// "Malformed HTTP request", as if the client had sent something wrong.
func TestReadTimeoutAnswers408(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv := &fasthttp.Server{ReadTimeout: 200 * time.Millisecond, ErrorHandler: s.transportError,
		Handler: func(ctx *fasthttp.RequestCtx) { t.Error("a handler ran for an unfinished request") }}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Shutdown() }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The headers promise 100 bytes of body; 3 come.
	if _, err := io.WriteString(conn, "POST /api/v1/memory/read HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"q"); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a hang guard
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env envelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 408 || env.Code != "REQUEST_TIMEOUT" || !env.Retryable || env.Message != linger.TimeoutMessage ||
		env.RequestID == nil || resp.Header.Get("X-Request-Id") != *env.RequestID {
		t.Fatalf("%d %+v", resp.StatusCode, env)
	}
}
