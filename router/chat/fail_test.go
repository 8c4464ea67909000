package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
)

// A write the leader could not append to its log answers 503, retryable,
// reason storage_unavailable, without the underlying error's text.
func TestFailStorage(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c := &call{ctx: &fasthttp.RequestCtx{}, reqID: "req_test"}
	disk := errors.New("write /data/raft/group-3/raft.db: no space left on device")
	s.fail(c, fmt.Errorf("%w: %w", cluster.ErrStorage, disk))
	body := c.ctx.Response.Body()
	var env struct {
		Retryable bool
		Details   map[string]any
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	if c.ctx.Response.StatusCode() != 503 || !env.Retryable || env.Details["reason"] != "storage_unavailable" ||
		strings.Contains(string(body), "raft.db") {
		t.Fatalf("answer %d %s", c.ctx.Response.StatusCode(), body)
	}
}

// A request not received within the read timeout answers 408, retryable;
// anything else fasthttp could not read stays a 400.
func TestTransportErrorTimeout(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, 408, "REQUEST_TIMEOUT"},
		{errors.New("cannot find http request method"), 400, "VALIDATION_ERROR"},
	} {
		ctx := &fasthttp.RequestCtx{}
		s.transportError(ctx, tc.err)
		var env struct {
			Code      string
			Retryable bool
		}
		if err := json.Unmarshal(ctx.Response.Body(), &env); err != nil {
			t.Fatal(err)
		}
		if ctx.Response.StatusCode() != tc.status || env.Code != tc.code || env.Retryable != (tc.status == 408) {
			t.Errorf("%v: %d %s", tc.err, ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}

// A 503 about a leader (none answered, or the change went unconfirmed)
// carries Retry-After: 1, as the REST API's do; one about this node's disk
// does not (no wait helps it).
func TestFailRetryAfter(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{cluster.ErrUnavailable, "1"},
		{fmt.Errorf("propose: %w", cluster.ErrOutcomeUnknown), "1"},
		{fmt.Errorf("%w: disk", cluster.ErrStorage), ""},
	} {
		c := &call{ctx: &fasthttp.RequestCtx{}, reqID: "req_test"}
		s.fail(c, tc.err)
		if c.ctx.Response.StatusCode() != 503 || string(c.ctx.Response.Header.Peek("Retry-After")) != tc.want {
			t.Errorf("%v: %d, Retry-After %q, want %q", tc.err, c.ctx.Response.StatusCode(),
				c.ctx.Response.Header.Peek("Retry-After"), tc.want)
		}
	}
}
