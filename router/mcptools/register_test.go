package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeCaller records calls and answers with a canned status and body.
type fakeCaller struct {
	mu     sync.Mutex
	calls  []fakeCall
	status int
	raw    string
}

type fakeCall struct {
	method, path string
	body         string
}

func (f *fakeCaller) Do(_ context.Context, method, path string, body any) (int, []byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := ""
	if body != nil {
		raw, _ := body.(json.RawMessage)
		b = string(raw)
	}
	f.calls = append(f.calls, fakeCall{method, path, b})
	return f.status, []byte(f.raw), nil
}

func (f *fakeCaller) last(t *testing.T) fakeCall {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		t.Fatal("no REST call was made")
	}
	return f.calls[len(f.calls)-1]
}

// connect serves the tools over in-memory transports and returns a client.
func connect(t *testing.T, caller Caller, opts Options) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "hebb-test", Version: "0"}, nil)
	Register(server, caller, opts)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

func TestToolList(t *testing.T) {
	for _, remote := range []bool{false, true} {
		cs := connect(t, &fakeCaller{status: 200, raw: "{}"}, Options{Remote: remote})
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
			if strings.Contains(tl.Name, "delete") || strings.Contains(tl.Name, "wipe") {
				t.Errorf("delete tool exposed: %s", tl.Name)
			}
			if tl.Name == "memory_invite_to_room" {
				b, _ := json.Marshal(tl.InputSchema)
				if has := strings.Contains(string(b), "max_uses"); has != remote {
					t.Errorf("remote=%v: invite schema max_uses present=%v: %s", remote, has, b)
				}
			}
			if tl.Name == "memory_read" {
				b, _ := json.Marshal(tl.InputSchema)
				for _, bound := range []string{`"maxLength":5000`, `"maximum":500`, `"minimum":1`} {
					if !strings.Contains(string(b), bound) {
						t.Errorf("memory_read schema lacks %s: %s", bound, b)
					}
				}
			}
		}
		want := []string{"memory_read", "memory_write", "memory_stats", "memory_feedback", "memory_graph",
			"memory_create_room", "memory_invite_to_room", "memory_join_room", "memory_list_rooms",
			"memory_list_recent", "vault_list"}
		slices.Sort(names)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("remote=%v tools %v, want %v", remote, names, want)
		}
	}
}

func TestToolRequests(t *testing.T) {
	tests := []struct {
		name     string
		remote   bool
		tool     string
		args     string
		method   string
		path     string
		wantBody string
	}{
		{"write forwards domain unchanged", false, "memory_write", `{"content":"x","domain":"xroom:room_01ABC"}`,
			"POST", "/memory/write", `{"content":"x","domain":"xroom:room_01ABC"}`},
		{"read", false, "memory_read", `{"query":"q","top_k":3,"domain":" Xroom:odd"}`,
			"POST", "/memory/read", `{"domain":" Xroom:odd","query":"q","top_k":3}`},
		{"stats has no body", false, "memory_stats", `{}`, "GET", "/memory/stats", ``},
		{"local invite is single-use", false, "memory_invite_to_room", `{"room_id":"room_1","max_uses":5,"scope":"read"}`,
			"POST", "/memory/rooms/room_1/invites", `{"scope":"read"}`},
		{"remote invite keeps max_uses", true, "memory_invite_to_room", `{"room_id":"room_1","max_uses":5}`,
			"POST", "/memory/rooms/room_1/invites", `{"max_uses":5}`},
		{"room id is escaped", true, "memory_invite_to_room", `{"room_id":"a/../b"}`,
			"POST", "/memory/rooms/a%2F..%2Fb/invites", `{}`},
		{"recent", false, "memory_list_recent", `{"limit":2}`, "POST", "/memory/recent", `{"limit":2}`},
		{"vault", false, "vault_list", `{}`, "GET", "/vault/secrets", ``},
		{"no arguments", false, "memory_list_recent", `null`, "POST", "/memory/recent", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeCaller{status: 200, raw: `{"items":[]}`}
			cs := connect(t, f, Options{Remote: tt.remote})
			res := call(t, cs, tt.tool, json.RawMessage(tt.args))
			if res.IsError {
				t.Fatalf("tool error: %v", res.Content[0].(*mcp.TextContent).Text)
			}
			got := f.last(t)
			if got.method != tt.method || got.path != tt.path || got.body != tt.wantBody {
				t.Errorf("call %s %s %s, want %s %s %s", got.method, got.path, got.body, tt.method, tt.path, tt.wantBody)
			}
		})
	}
}

func TestToolResults(t *testing.T) {
	t.Run("success", func(t *testing.T) {
		raw := `{"stored":true,"atom_id":"0190aaaa-0000-7000-8000-000000000001","importance":0.5,"reason":"","superseded":[]}`
		cs := connect(t, &fakeCaller{status: 200, raw: raw}, Options{})
		res := call(t, cs, "memory_write", map[string]any{"content": "x"})
		if res.IsError || structured(t, res)["atom_id"] != "0190aaaa-0000-7000-8000-000000000001" {
			t.Fatalf("result %+v", res)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, "Stored memory 0190aaaa") {
			t.Errorf("summary %q", text)
		}
		if text := res.Content[1].(*mcp.TextContent).Text; text != raw {
			t.Errorf("JSON text %q", text)
		}
	})
	t.Run("REST error keeps code and message", func(t *testing.T) {
		raw := `{"code":"VALIDATION_ERROR","message":"Request validation failed","requestId":"req_1","retryable":false,` +
			`"details":{"errors":[{"loc":["body","top_k"],"msg":"Input should be less than or equal to 500","type":"less_than_equal"}]}}`
		cs := connect(t, &fakeCaller{status: 400, raw: raw}, Options{})
		res := call(t, cs, "memory_read", map[string]any{"query": "q", "top_k": 501})
		env := structured(t, res)
		if !res.IsError || env["code"] != "VALIDATION_ERROR" || env["message"] != "Request validation failed" {
			t.Fatalf("error result %+v", env)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "top_k: Input should be less") {
			t.Errorf("error text %q", text)
		}
	})
	t.Run("not JSON error body", func(t *testing.T) {
		cs := connect(t, &fakeCaller{status: 502, raw: "bad gateway"}, Options{})
		env := structured(t, call(t, cs, "memory_stats", nil))
		if env["code"] != "INTERNAL" || env["retryable"] != true || env["message"] != "bad gateway" {
			t.Errorf("envelope %v", env)
		}
	})
	t.Run("2xx body not JSON", func(t *testing.T) {
		// A captive portal's page: the call went unanswered.
		cs := connect(t, &fakeCaller{status: 200, raw: "<html>sign in to the network</html>"}, Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_stats"})
		if err != nil {
			t.Fatalf("memory_stats: %v", err)
		}
		if env := structured(t, res); !res.IsError || env["code"] != "INTERNAL" || env["retryable"] != true {
			t.Errorf("result %v", env)
		}
	})
	t.Run("summary counts", func(t *testing.T) {
		for raw, want := range map[string]string{
			`{"total_atoms":1,"domains":["a"]}`:     "1 memory in 1 domain.",
			`{"total_atoms":2,"domains":["a","b"]}`: "2 memories in 2 domains.",
			`{"total_atoms":0,"domains":[]}`:        "0 memories in 0 domains.",
		} {
			res := call(t, connect(t, &fakeCaller{status: 200, raw: raw}, Options{}), "memory_stats", nil)
			if text := res.Content[0].(*mcp.TextContent).Text; text != want {
				t.Errorf("summary of %s = %q, want %q", raw, text, want)
			}
		}
	})
	t.Run("missing room id", func(t *testing.T) {
		f := &fakeCaller{status: 200, raw: "{}"}
		cs := connect(t, f, Options{Remote: true})
		res := call(t, cs, "memory_invite_to_room", map[string]any{"scope": "read"})
		if env := structured(t, res); !res.IsError || env["code"] != "VALIDATION_ERROR" {
			t.Errorf("result %v", env)
		}
		if len(f.calls) != 0 {
			t.Errorf("a REST call was made: %v", f.calls)
		}
	})
}

func TestToolScopes(t *testing.T) {
	readOnly := func(context.Context) []string { return []string{"openid", ScopeRead} }
	tests := []struct {
		tool    string
		allowed bool
	}{
		{"memory_read", true}, {"memory_stats", true}, {"memory_graph", true}, {"memory_list_recent", true},
		{"memory_list_rooms", true}, {"vault_list", true},
		{"memory_write", false}, {"memory_feedback", false}, {"memory_create_room", false},
		{"memory_join_room", false}, {"memory_invite_to_room", false},
	}
	f := &fakeCaller{status: 200, raw: `{}`}
	cs := connect(t, f, Options{Remote: true, Scopes: readOnly})
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			before := len(f.calls)
			res := call(t, cs, tt.tool, map[string]any{"room_id": "room_1", "query": "q"})
			if res.IsError == tt.allowed {
				t.Fatalf("IsError=%v, want allowed=%v", res.IsError, tt.allowed)
			}
			if !tt.allowed {
				env := structured(t, res)
				if env["code"] != "FORBIDDEN" || env["details"].(map[string]any)["reason"] != "insufficient_scope" {
					t.Errorf("envelope %v", env)
				}
				if len(f.calls) != before {
					t.Error("a refused tool made a REST call")
				}
			}
			if scope, _ := RequiredScope(tt.tool); (scope == ScopeRead) != tt.allowed {
				t.Errorf("RequiredScope = %q", scope)
			}
		})
	}
}

// errCaller fails every call with err (after waiting for ctx when block).
type errCaller struct {
	err   error
	block bool
}

func (e errCaller) Do(ctx context.Context, _, _ string, _ any) (int, []byte, error) {
	if e.block {
		<-ctx.Done()
		return 0, nil, ctx.Err()
	}
	return 0, nil, e.err
}

type timeoutErr struct{}

func (timeoutErr) Error() string { return "Client.Timeout exceeded" }
func (timeoutErr) Timeout() bool { return true }

// What a call that got no answer says: a write that timed out may have
// been applied, so it is not called retryable; a REST body of null, an
// invite's use count, a room_id of the wrong type.
func TestToolFailures(t *testing.T) {
	for _, tc := range []struct {
		name, tool string
		err        error
		retryable  bool
		text       string
	}{
		{"write timed out", "memory_write", timeoutErr{}, false, "may have been applied"},
		{"read timed out", "memory_read", timeoutErr{}, true, "did not answer in time"},
		{"unreachable", "memory_write", errors.New("connection refused"), true, "Service unreachable"},
		// Asking again gets the same answer: not retryable (it was read
		// cut, then called retryable as "not a JSON object").
		{"answer too large", "memory_read", fmt.Errorf("over 256 MiB: %w", ErrAnswerTooLarge), false, "too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, errCaller{err: tc.err}, Options{})
			res := call(t, cs, tc.tool, map[string]any{"content": "x", "query": "q"})
			env := structured(t, res)
			if !res.IsError || env["retryable"] != tc.retryable || !strings.Contains(fmt.Sprint(env["message"]), tc.text) {
				t.Errorf("result %v", env)
			}
		})
	}
	t.Run("null body", func(t *testing.T) {
		res := call(t, connect(t, &fakeCaller{status: 200, raw: "null"}, Options{}), "memory_stats", nil)
		if env := structured(t, res); !res.IsError || env["code"] != "INTERNAL" {
			t.Errorf("result %v", env)
		}
	})
	t.Run("invite says single-use", func(t *testing.T) {
		raw := `{"code":"mshare_x","share_message":"join","max_uses":1}`
		res := call(t, connect(t, &fakeCaller{status: 200, raw: raw}, Options{}), "memory_invite_to_room",
			map[string]any{"room_id": "room_1", "max_uses": 5})
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "single-use") {
			t.Errorf("summary %q", text)
		}
	})
	t.Run("room_id not a string", func(t *testing.T) {
		res := call(t, connect(t, &fakeCaller{status: 200, raw: "{}"}, Options{}), "memory_invite_to_room",
			map[string]any{"room_id": 123})
		if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "valid string") {
			t.Errorf("result %q", text)
		}
	})
}

// A cancelled write may have been taken before the cancel: its answer says
// so (it said only "cancelled", as for a read).
func TestCancelledCallSays(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		tool tool
		text string
	}{
		{tool{name: "memory_write", scope: ScopeWrite, method: "POST"}, "may have been applied"},
		{tool{name: "memory_read", scope: ScopeRead, method: "POST"}, "The call was cancelled"},
	} {
		env := callFailed(ctx, tc.tool, context.Canceled)
		if env.Retryable || !strings.Contains(env.Message, tc.text) {
			t.Errorf("%s: %+v", tc.tool.name, env)
		}
	}
	if env := callFailed(ctx, tool{name: "memory_read", scope: ScopeRead, method: "POST"}, context.Canceled); strings.Contains(env.Message, "applied") {
		t.Errorf("a cancelled read: %+v", env)
	}
}
