package router_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hebbdb/hebb/router/pack"
)

const renderPath = "/orchestration/context"

// renderBody is a valid render_request.v0 with extra fields merged in (a
// nil value deletes the field).
func renderBody(requestID string, extra map[string]any) map[string]any {
	b := map[string]any{
		"version":      "v0",
		"id":           "0190a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b",
		"intent":       "deploy the release pipeline on friday",
		"budgets":      map[string]any{"tokens_max": 400, "time_ms": 2000},
		"risk_profile": map[string]any{"level": "medium"},
		"privacy_mode": "allow",
		"request_id":   requestID,
	}
	for k, v := range extra {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	return b
}

// renderFixture is a server with a small memory of release work.
type renderFixture struct {
	ts                                    *testServer
	pref, decision, warning, fact, secret string
	content                               map[string]string // atom ID → content
}

func newRenderFixture(t *testing.T) *renderFixture {
	t.Helper()
	ts := newTestServer(t)
	f := &renderFixture{ts: ts, content: map[string]string{}}
	write := func(content string, extra map[string]any) string {
		id := ts.write(content, extra)
		f.content[id] = content
		return id
	}
	f.pref = write("The user prefers release notes for the deploy pipeline in Slack", map[string]any{"domain": "prefs"})
	f.decision = write("We decided every release deploy goes through the canary first", map[string]any{"domain": "ops"})
	f.warning = write("Deploying the release pipeline on Friday evening broke production", map[string]any{"domain": "ops"})
	f.fact = write("The release pipeline deploy runs every Friday at noon", map[string]any{"domain": "ops",
		"metadata": map[string]any{"type": "fact"}})
	f.secret = write("Release pipeline alerts for the friday deploy go to ops-lead@example.com", map[string]any{"domain": "ops"})
	write("Our coffee machine on floor three is broken", map[string]any{"domain": "office"})
	write("Release checklist for the deploy pipeline: "+strings.Repeat("verify dashboards, drain a node, deploy it, watch errors; ", 12),
		map[string]any{"domain": "ops"})
	r := ts.do("POST", "/memory/feedback", ts.Key, map[string]any{"atom_ids": []string{f.warning}, "outcome": -1})
	if r.Status != 200 {
		t.Fatalf("feedback: %d %s", r.Status, r.Raw)
	}
	return f
}

func renderCall(ts *testServer, key string, body any) resp {
	ts.t.Helper()
	return ts.do("POST", renderPath, key, body)
}

// renderItems maps atom ID → (section, item) of a reply.
func renderItems(r resp) map[string][2]map[string]any {
	out := map[string][2]map[string]any{}
	for _, s := range list(r.Body["sections"]) {
		sec := obj(s)
		for _, it := range list(sec["items"]) {
			out[str(obj(it)["atom_id"])] = [2]map[string]any{sec, obj(it)}
		}
	}
	return out
}

func renderOmissions(r resp) map[string]string {
	out := map[string]string{}
	for _, o := range list(r.Body["omissions"]) {
		out[str(obj(o)["atom_id"])] = str(obj(o)["reason"])
	}
	return out
}

// checkRenderReply asserts the reply's shape and that the context fits the
// budget under the reported encoding.
func checkRenderReply(t *testing.T, r resp, budget int) {
	t.Helper()
	mustStatus(t, r, 200)
	for _, k := range []string{"type", "version", "id", "request_id", "context", "sections", "usage", "omissions", "policy", "error"} {
		if _, ok := r.Body[k]; !ok {
			t.Errorf("reply lacks %q: %s", k, r.Raw)
		}
	}
	if r.Body["type"] != "render_context_reply.v0" || r.Body["version"] != "v0" || r.Body["error"] != nil {
		t.Errorf("reply type/version/error: %s", r.Raw)
	}
	usage := obj(r.Body["usage"])
	tok, err := pack.NewTokenizer(str(usage["encoding"]))
	if err != nil {
		t.Fatalf("reported encoding: %v", err)
	}
	n := tok.Count(str(r.Body["context"]))
	if n > budget || int(num(usage["tokens_used"])) != n || int(num(usage["tokens_max"])) != budget {
		t.Fatalf("context has %d tokens, usage %v, budget %d", n, usage, budget)
	}
	for _, k := range []string{"elapsed_ms", "time_ms", "time_target_met", "candidates", "included"} {
		if _, ok := usage[k]; !ok {
			t.Errorf("usage lacks %q", k)
		}
	}
	ctx := str(r.Body["context"])
	for _, s := range list(r.Body["sections"]) {
		sec := obj(s)
		if !strings.Contains(ctx, "## "+str(sec["title"])+"\n") {
			t.Errorf("section %v not in the context", sec["name"])
		}
		for _, it := range list(sec["items"]) {
			for _, k := range []string{"atom_id", "relevance", "tokens"} {
				if _, ok := obj(it)[k]; !ok {
					t.Errorf("section item lacks %q", k)
				}
			}
		}
	}
}

// checkRenderError asserts a render_context_reply.v0 error body.
func checkRenderError(t *testing.T, r resp, status int, code, field string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Raw)
	}
	if r.Body["type"] != "render_context_reply.v0" || r.Body["version"] != "v0" {
		t.Fatalf("error body is not a render_context_reply.v0: %s", r.Raw)
	}
	for _, k := range []string{"id", "request_id"} {
		if _, ok := r.Body[k]; !ok {
			t.Errorf("error body lacks %q: %s", k, r.Raw)
		}
	}
	e := obj(r.Body["error"])
	if e["code"] != code {
		t.Errorf("code %v, want %s: %s", e["code"], code, r.Raw)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("no message: %s", r.Raw)
	}
	if _, ok := e["retryable"].(bool); !ok {
		t.Errorf("retryable is not a bool: %s", r.Raw)
	}
	if got, _ := e["field"].(string); got != field {
		t.Errorf("field %v, want %q", e["field"], field)
	}
}

func TestOrchestrationHTTP(t *testing.T) {
	t.Parallel()
	f := newRenderFixture(t)
	ts := f.ts

	t.Run("renders sections within the budget", func(t *testing.T) {
		r := renderCall(ts, ts.Key, renderBody("sections", nil))
		checkRenderReply(t, r, 400)
		if r.Body["request_id"] != "sections" || r.Body["id"] != "0190a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b" {
			t.Errorf("ids not echoed: %s", r.Raw)
		}
		got := renderItems(r)
		want := map[string]string{f.pref: "preferences", f.decision: "decisions", f.warning: "warnings", f.fact: "facts"}
		for id, sec := range want {
			if got[id][0]["name"] != sec {
				t.Errorf("atom %s in section %v, want %s: %s", id, got[id][0]["name"], sec, r.Raw)
			}
		}
		ctx := str(r.Body["context"])
		if !strings.HasPrefix(ctx, "## Warnings\n- Deploying the release pipeline on Friday evening") {
			t.Errorf("warnings do not come first: %q", ctx)
		}
		if strings.Contains(ctx, "coffee") {
			t.Errorf("irrelevant memory rendered: %q", ctx)
		}
		if !strings.Contains(ctx, "ops-lead@example.com") {
			t.Errorf("privacy allow masked the address: %q", ctx)
		}
	})

	t.Run("tight budget omits whole memories", func(t *testing.T) {
		r := renderCall(ts, ts.Key, renderBody("tight", map[string]any{"budgets": map[string]any{"tokens_max": 20}}))
		checkRenderReply(t, r, 20)
		om := renderOmissions(r)
		if len(om) == 0 {
			t.Fatalf("nothing omitted at 20 tokens: %s", r.Raw)
		}
		for id, reason := range om {
			if reason != "budget" && reason != "exceeds_budget" {
				t.Errorf("omission %s: reason %q", id, reason)
			}
		}
		if obj(r.Body["usage"])["time_ms"] != 1000.0 {
			t.Errorf("default time_ms not reported: %v", r.Body["usage"])
		}
	})

	t.Run("random budgets never exceeded", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 1))
		for i := 0; i < 12; i++ {
			budget := 1 + rng.IntN(8000)
			if i%2 == 0 {
				budget = 1 + rng.IntN(60)
			}
			enc := pack.Encodings()[i%2]
			r := renderCall(ts, ts.Key, renderBody(fmt.Sprintf("random-%d", i), map[string]any{
				"budgets": map[string]any{"tokens_max": budget}, "encoding": enc}))
			checkRenderReply(t, r, budget)
			ctx := str(r.Body["context"]) + "\n"
			for id := range renderItems(r) {
				if !strings.Contains(ctx, "- "+strings.TrimSpace(f.content[id])+"\n") {
					t.Errorf("memory %s not rendered whole: %q", id, ctx)
				}
			}
			for id := range renderOmissions(r) {
				if f.content[id] != "" && strings.Contains(ctx, f.content[id][:20]) {
					t.Errorf("omitted memory %s rendered in part", id)
				}
			}
			if obj(r.Body["usage"])["encoding"] != enc {
				t.Errorf("encoding %v, want %s", obj(r.Body["usage"])["encoding"], enc)
			}
		}
	})

	t.Run("privacy modes", func(t *testing.T) {
		r := renderCall(ts, ts.Key, renderBody("redact", map[string]any{"privacy_mode": "redact"}))
		checkRenderReply(t, r, 400)
		ctx := str(r.Body["context"])
		if strings.Contains(ctx, "ops-lead@example.com") || !strings.Contains(ctx, "[email]") {
			t.Errorf("redact did not mask the address: %q", ctx)
		}
		if it := renderItems(r)[f.secret][1]; it["redacted"] != true {
			t.Errorf("item not marked redacted: %v", it)
		}
		r = renderCall(ts, ts.Key, renderBody("exclude", map[string]any{"privacy_mode": "exclude"}))
		checkRenderReply(t, r, 400)
		if strings.Contains(str(r.Body["context"]), "ops-lead") || renderOmissions(r)[f.secret] != "privacy" {
			t.Errorf("exclude kept the memory: %s", r.Raw)
		}
	})

	t.Run("risk levels", func(t *testing.T) {
		low := renderCall(ts, ts.Key, renderBody("risk-low", map[string]any{"risk_profile": map[string]any{"level": "low"}}))
		checkRenderReply(t, low, 400)
		high := renderCall(ts, ts.Key, renderBody("risk-high", map[string]any{"risk_profile": map[string]any{"level": "high"}}))
		checkRenderReply(t, high, 400)
		if lf, hf := num(obj(low.Body["policy"])["relevance_floor"]), num(obj(high.Body["policy"])["relevance_floor"]); lf >= hf {
			t.Errorf("floors low %v high %v", lf, hf)
		}
		if it := renderItems(high)[f.warning][1]; it["pinned"] != true {
			t.Errorf("high risk did not pin the warning: %s", high.Raw)
		}
		if len(renderItems(high)) > len(renderItems(low)) {
			t.Errorf("high risk included more than low risk")
		}
		// At high risk the warning is packed first even when little fits.
		r := renderCall(ts, ts.Key, renderBody("risk-high-tight", map[string]any{
			"risk_profile": map[string]any{"level": "high"}, "budgets": map[string]any{"tokens_max": 16}}))
		checkRenderReply(t, r, 16)
		if _, ok := renderItems(r)[f.warning]; !ok {
			t.Errorf("pinned warning left out at 16 tokens: %s", r.Raw)
		}
	})

	t.Run("domains extension", func(t *testing.T) {
		r := renderCall(ts, ts.Key, renderBody("domains", map[string]any{"domains": []string{"prefs"}}))
		checkRenderReply(t, r, 400)
		got := renderItems(r)
		if _, ok := got[f.pref]; !ok || len(got) != 1 {
			t.Errorf("domains [prefs] rendered %v", got)
		}
	})

	t.Run("unknown fields are ignored", func(t *testing.T) {
		r := renderCall(ts, ts.Key, renderBody("unknown", map[string]any{"frobnicate": true, "stream": false}))
		checkRenderReply(t, r, 400)
	})

	t.Run("authentication is the REST API's", func(t *testing.T) {
		checkEnvelope(t, renderCall(ts, "", renderBody("nokey", nil)), 401, "UNAUTHORIZED")
		checkEnvelope(t, renderCall(ts, "mk_live_nope", renderBody("badkey", nil)), 401, "UNAUTHORIZED")
	})

	t.Run("streaming is refused", func(t *testing.T) {
		h := http.Header{}
		h.Set("X-Api-Key", ts.Key)
		h.Set("Accept", "text/event-stream")
		checkRenderError(t, ts.doH("POST", renderPath, h, renderBody("stream", nil)), 406, "STREAMING_UNSUPPORTED", "")
	})
}

func TestOrchestrationIdempotencyHTTP(t *testing.T) {
	t.Parallel()
	f := newRenderFixture(t)
	ts := f.ts

	t.Run("a repeat returns the same reply", func(t *testing.T) {
		first := renderCall(ts, ts.Key, renderBody("idem-1", nil))
		checkRenderReply(t, first, 400)
		// A new memory would change a fresh render; the repeat must not see it.
		ts.write("Release pipeline deploys on friday need two reviewers", map[string]any{"domain": "ops"})
		again := renderCall(ts, ts.Key, renderBody("idem-1", nil))
		mustStatus(t, again, 200)
		if string(again.Raw) != string(first.Raw) {
			t.Errorf("repeat differs:\n%s\n%s", first.Raw, again.Raw)
		}
		if again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay not marked")
		}
	})

	t.Run("concurrent repeats get one reply", func(t *testing.T) {
		var wg sync.WaitGroup
		bodies := make([]string, 4)
		for i := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bodies[i] = string(renderCall(ts, ts.Key, renderBody("idem-concurrent", nil)).Raw)
			}()
		}
		wg.Wait()
		for i := range bodies {
			if bodies[i] != bodies[0] || !strings.Contains(bodies[i], `"request_id":"idem-concurrent"`) {
				t.Fatalf("concurrent replies differ: %s vs %s", bodies[0], bodies[i])
			}
		}
	})

	t.Run("a different request under the same request_id conflicts", func(t *testing.T) {
		r := renderCall(ts, ts.Key, renderBody("idem-1", map[string]any{"intent": "something else"}))
		checkRenderError(t, r, 409, "REQUEST_ID_CONFLICT", "request_id")
		if r.Body["request_id"] != "idem-1" {
			t.Errorf("request_id not echoed: %s", r.Raw)
		}
	})

	t.Run("request_ids are per account", func(t *testing.T) {
		_, other := ts.newOrg("render-other")
		r := renderCall(ts, other, renderBody("idem-1", map[string]any{"intent": "something else"}))
		checkRenderReply(t, r, 400)
		if len(renderItems(r)) != 0 {
			t.Errorf("other account sees memories: %s", r.Raw)
		}
	})

	t.Run("a deleted memory is rendered out of a repeat", func(t *testing.T) {
		gone := ts.write("The friday release pipeline deploy runbook lives in the ops wiki", map[string]any{"domain": "ops"})
		first := renderCall(ts, ts.Key, renderBody("idem-deleted", nil))
		checkRenderReply(t, first, 400)
		if _, ok := renderItems(first)[gone]; !ok {
			t.Fatalf("the memory to delete is not rendered: %s", first.Raw)
		}
		r := ts.do("DELETE", "/memory/atoms/"+gone, ts.Key, nil)
		mustStatus(t, r, 200)
		again := renderCall(ts, ts.Key, renderBody("idem-deleted", nil))
		checkRenderReply(t, again, 400)
		if _, ok := renderItems(again)[gone]; ok || strings.Contains(str(again.Body["context"]), "ops wiki") {
			t.Errorf("the repeat shows a deleted memory: %s", again.Raw)
		}
		if again.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("a reply rendered anew is marked replayed")
		}
		third := renderCall(ts, ts.Key, renderBody("idem-deleted", nil))
		if string(third.Raw) != string(again.Raw) || third.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("the new reply is not the one replayed: %s\n%s", again.Raw, third.Raw)
		}
	})

	t.Run("errors are not stored", func(t *testing.T) {
		r := renderCall(ts, ts.Key, renderBody("idem-err", map[string]any{"privacy_mode": "nope"}))
		checkRenderError(t, r, 400, "UNKNOWN_PRIVACY_MODE", "privacy_mode")
		checkRenderReply(t, renderCall(ts, ts.Key, renderBody("idem-err", nil)), 400)
	})
}

func TestOrchestrationErrorsHTTP(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cases := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
	}{
		{"wrong version", renderBody("e", map[string]any{"version": "v1"}), 400, "UNSUPPORTED_VERSION", "version"},
		{"version not a string", renderBody("e", map[string]any{"version": 0}), 400, "UNSUPPORTED_VERSION", "version"},
		{"version missing", renderBody("e", map[string]any{"version": nil}), 400, "MISSING_FIELD", "version"},
		{"version checked first", map[string]any{"version": "v9"}, 400, "UNSUPPORTED_VERSION", "version"},
		{"id missing", renderBody("e", map[string]any{"id": nil}), 400, "MISSING_FIELD", "id"},
		{"id not a UUID", renderBody("e", map[string]any{"id": "42"}), 400, "INVALID_FIELD", "id"},
		{"intent missing", renderBody("e", map[string]any{"intent": nil}), 400, "MISSING_FIELD", "intent"},
		{"intent blank", renderBody("e", map[string]any{"intent": "  "}), 400, "INVALID_FIELD", "intent"},
		{"intent too long", renderBody("e", map[string]any{"intent": strings.Repeat("x", 5001)}), 400, "INVALID_FIELD", "intent"},
		{"budgets missing", renderBody("e", map[string]any{"budgets": nil}), 400, "MISSING_FIELD", "budgets"},
		{"tokens_max missing", renderBody("e", map[string]any{"budgets": map[string]any{"time_ms": 5}}), 400, "MISSING_FIELD", "budgets.tokens_max"},
		{"tokens_max zero", renderBody("e", map[string]any{"budgets": map[string]any{"tokens_max": 0}}), 400, "INVALID_FIELD", "budgets.tokens_max"},
		{"tokens_max a string", renderBody("e", map[string]any{"budgets": map[string]any{"tokens_max": "100"}}), 400, "INVALID_FIELD", "budgets.tokens_max"},
		{"tokens_max a fraction", renderBody("e", map[string]any{"budgets": map[string]any{"tokens_max": 10.5}}), 400, "INVALID_FIELD", "budgets.tokens_max"},
		{"time_ms negative", renderBody("e", map[string]any{"budgets": map[string]any{"tokens_max": 10, "time_ms": -1}}), 400, "INVALID_FIELD", "budgets.time_ms"},
		{"unknown privacy mode", renderBody("e", map[string]any{"privacy_mode": "paranoid"}), 400, "UNKNOWN_PRIVACY_MODE", "privacy_mode"},
		{"unknown risk level", renderBody("e", map[string]any{"risk_profile": map[string]any{"level": "extreme"}}), 400, "UNKNOWN_RISK_LEVEL", "risk_profile.level"},
		{"unknown encoding", renderBody("e", map[string]any{"encoding": "gpt2"}), 400, "UNKNOWN_ENCODING", "encoding"},
		{"request_id missing", renderBody("e", map[string]any{"request_id": nil}), 400, "MISSING_FIELD", "request_id"},
		{"request_id empty", renderBody("", nil), 400, "INVALID_FIELD", "request_id"},
		{"domains not a list", renderBody("e", map[string]any{"domains": "ops"}), 400, "INVALID_FIELD", "domains"},
		{"domain near-miss of a room", renderBody("e", map[string]any{"domains": []string{"XROOM:room_1"}}), 400, "INVALID_FIELD", "domains.0"},
		{"unknown room", renderBody("e", map[string]any{"domains": []string{"ops", "xroom:room_01HZZZZZZZZZZZZZZZZZZZZZZZ"}}), 404, "NOT_FOUND", "domains.1"},
		{"not JSON", "version=v0", 400, "INVALID_JSON", ""},
		{"empty body", "", 400, "INVALID_JSON", ""},
		{"an array", "[]", 400, "INVALID_JSON", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkRenderError(t, renderCall(ts, ts.Key, tc.body), tc.status, tc.code, tc.field)
		})
	}
	t.Run("ids are echoed in errors", func(t *testing.T) {
		for _, extra := range []map[string]any{{"privacy_mode": "x"}, {"version": "v1"}, {"budgets": "x"}} {
			r := renderCall(ts, ts.Key, renderBody("echo", extra))
			if r.Body["request_id"] != "echo" || r.Body["id"] != "0190a3b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b" {
				t.Errorf("%v: ids not echoed: %s", extra, r.Raw)
			}
		}
		// Ids that are no strings are echoed as null, not as "".
		r := renderCall(ts, ts.Key, renderBody("", map[string]any{"id": 123, "request_id": []string{"r"}}))
		if v, ok := r.Body["id"]; !ok || v != nil || r.Body["request_id"] != nil {
			t.Errorf("non-string ids echoed: %s", r.Raw)
		}
	})
}

func TestOrchestrationRoomHTTP(t *testing.T) {
	t.Parallel()
	f := newRoomFixture(t)
	ts := f.ts
	r := ts.do("POST", "/memory/write", f.owner.key, map[string]any{
		"content": "The shared release pipeline deploy needs a canary on friday", "domain": f.addr})
	mustStatus(t, r, 200)
	room := str(r.Body["atom_id"])

	r = renderCall(ts, f.reader.key, renderBody("room", map[string]any{"domains": []string{f.addr}}))
	checkRenderReply(t, r, 400)
	if _, ok := renderItems(r)[room]; !ok {
		t.Errorf("room memory not rendered for a member: %s", r.Raw)
	}
	r = renderCall(ts, f.outsider.key, renderBody("room", map[string]any{"domains": []string{f.addr}}))
	checkRenderError(t, r, 403, "FORBIDDEN", "domains.0")

	// A repeat is checked again: a revoked member gets no stored reply.
	mustStatus(t, ts.do("DELETE", "/memory/rooms/"+f.room+"/members/"+f.reader.id, f.owner.key, nil), 200)
	r = renderCall(ts, f.reader.key, renderBody("room", map[string]any{"domains": []string{f.addr}}))
	checkRenderError(t, r, 403, "FORBIDDEN", "domains.0")
}
