package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/cluster"
)

// A write the leader could not append to its log answers 503, retryable,
// reason storage_unavailable, without the underlying error's text (it
// names files of the data dir).
func TestFailStorage(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c := &call{ctx: &fasthttp.RequestCtx{}, reqID: "req_test"}
	disk := errors.New("write /data/raft/group-3/raft.db: no space left on device")
	s.fail(c, fmt.Errorf("%w: %w", cluster.ErrStorage, disk))
	if got := c.ctx.Response.StatusCode(); got != 503 {
		t.Fatalf("status %d, want 503", got)
	}
	var env struct {
		Code      string
		Message   string
		Retryable bool
		Details   map[string]any
	}
	body := c.ctx.Response.Body()
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	if env.Code != "INTERNAL" || !env.Retryable || env.Details["reason"] != "storage_unavailable" {
		t.Fatalf("envelope %s", body)
	}
	if strings.Contains(string(body), "raft.db") {
		t.Fatalf("the answer names a file: %s", body)
	}
}

// A write its leader took but did not confirm is 503, retryable (with the
// same Idempotency-Key; an identical plain write meets the gate), and says
// that it may have been applied: reason outcome_unknown.
func TestFailOutcomeUnknown(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c := &call{ctx: &fasthttp.RequestCtx{}, reqID: "req_test"}
	s.fail(c, fmt.Errorf("%w: %w: leadership lost", cluster.ErrOutcomeUnknown, cluster.ErrUnavailable))
	body := string(c.ctx.Response.Body())
	if c.ctx.Response.StatusCode() != 503 || string(c.ctx.Response.Header.Peek("Retry-After")) != "1" ||
		!strings.Contains(body, `"reason":"outcome_unknown"`) || !strings.Contains(body, "may have been applied") {
		t.Fatalf("%d %s", c.ctx.Response.StatusCode(), body)
	}
}

// A request no leader answered is 503, retryable, with Retry-After: an
// election takes about a second.
func TestFailNoLeader(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c := &call{ctx: &fasthttp.RequestCtx{}, reqID: "req_test"}
	s.fail(c, fmt.Errorf("%w: group 3: no leader known", cluster.ErrUnavailable))
	if got := c.ctx.Response.StatusCode(); got != 503 {
		t.Fatalf("status %d, want 503", got)
	}
	if got := string(c.ctx.Response.Header.Peek("Retry-After")); got != "1" {
		t.Fatalf("Retry-After %q, want 1", got)
	}
	if body := string(c.ctx.Response.Body()); !strings.Contains(body, `"retryable":true`) {
		t.Fatalf("envelope %s", body)
	}
}

// An embedding cut short by the request's deadline (a busy in-process
// embedder) is a timeout, retryable, not "Embedding failed: context
// deadline exceeded" with embedder_unavailable.
func TestEmbedderDeadline(t *testing.T) {
	e := embedderUnavailable(fmt.Errorf("embed 50 texts: %w", context.DeadlineExceeded))
	if e.Status != 503 || !e.Retryable || e.Details["reason"] != "embedder_timeout" || strings.Contains(e.Message, "deadline") {
		t.Fatalf("error %+v", e)
	}
	if e := embedderUnavailable(errors.New("model not loaded")); e.Details["reason"] != "embedder_unavailable" {
		t.Fatalf("other failure: reason %v", e.Details["reason"])
	}
}
