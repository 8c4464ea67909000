package router

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/hebbdb/hebb/raftfsm"
)

// flakyReads answers ReadFSM with an empty state machine until it has
// answered ok times, then fails (a group that lost its leader mid-export).
type flakyReads struct {
	Backend
	ok, calls int
}

func (b *flakyReads) ReadFSM(context.Context, string) (*raftfsm.FSM, error) {
	b.calls++
	if b.calls > b.ok {
		return nil, errors.New("group 3 has no leader")
	}
	return raftfsm.New(8), nil
}

// An export that cannot go on once its 200 has started ends with a line
// without its newline, so neither a client nor an import takes it for a
// whole export.
func TestExportAbortedMidStream(t *testing.T) {
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil)), backend: &flakyReads{ok: 1}}
	c := &call{ctx: &fasthttp.RequestCtx{}, org: "org_x", std: context.Background()}
	if err := s.export(c); err != nil {
		t.Fatal(err)
	}
	if st := c.ctx.Response.StatusCode(); st != 200 {
		t.Fatalf("status %d", st)
	}
	if body := string(c.ctx.Response.Body()); body != exportAborted {
		t.Fatalf("body %q, want the abort line without a newline", body)
	}
}
