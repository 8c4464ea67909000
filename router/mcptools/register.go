package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Caller runs one REST call as the authenticated account: method, path
// relative to /api/v1, and a JSON body (nil for none). It returns the HTTP
// status and the raw response body; err is a transport failure only.
type Caller interface {
	Do(ctx context.Context, method, path string, body any) (status int, raw []byte, err error)
}

// Options shape the tool set.
type Options struct {
	// Remote selects the remote connector's set: the invite tool accepts
	// max_uses. The local set always mints single-use codes.
	Remote bool
	// Scopes returns the OAuth scopes granted to the caller of ctx; nil
	// means the caller holds every scope (an API key).
	Scopes func(ctx context.Context) []string
}

// Register adds every tool to server; each call goes through caller.
func Register(server *mcp.Server, caller Caller, opts Options) {
	for _, t := range toolSet(opts.Remote) {
		server.AddTool(t.definition(), t.handler(caller, opts))
	}
}

// RequiredScope returns the scope the named tool needs; false for a name
// that is no tool.
func RequiredScope(name string) (string, bool) {
	for _, t := range toolSet(true) {
		if t.name == name {
			return t.scope, true
		}
	}
	return "", false
}

// Names returns the names of the tools of a set.
func Names(remote bool) []string {
	var out []string
	for _, t := range toolSet(remote) {
		out = append(out, t.name)
	}
	return out
}

func (t tool) definition() *mcp.Tool {
	readOnly := t.scope == ScopeRead
	notDestructive := false
	return &mcp.Tool{Name: t.name, Title: t.title, Description: t.desc, InputSchema: t.input,
		Annotations: &mcp.ToolAnnotations{Title: t.title, ReadOnlyHint: readOnly, DestructiveHint: &notDestructive}}
}

func (t tool) handler(caller Caller, opts Options) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if opts.Scopes != nil && !slices.Contains(opts.Scopes(ctx), t.scope) {
			return errorResult(envelope{Code: "FORBIDDEN", Message: "The access token lacks the " + t.scope + " scope",
				Details: map[string]any{"reason": "insufficient_scope", "scope": t.scope}}), nil
		}
		path, body, verr := t.request(req.Params.Arguments, opts.Remote)
		if verr != nil {
			return errorResult(*verr), nil
		}
		status, raw, err := caller.Do(ctx, t.method, path, body)
		if err != nil {
			return errorResult(callFailed(ctx, t, err)), nil
		}
		if status >= 400 {
			return errorResult(restError(status, raw)), nil
		}
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil || m == nil { // null decodes into a nil map
			// A proxy's or portal's page: as structured content it made
			// the SDK fail to encode the reply, and the call went unanswered.
			return errorResult(envelope{Code: "INTERNAL", Retryable: true,
				Message: fmt.Sprintf("The service answered HTTP %d with a body that is not a JSON object", status)}), nil
		}
		return t.result(raw, m), nil
	}
}

// ErrAnswerTooLarge is a Caller's error for an answer larger than it reads:
// not retryable, asking again gets the same answer.
var ErrAnswerTooLarge = errors.New("the answer is too large to read: ask for fewer items (top_k, limit)")

// callFailed is the result of a REST call that got no answer. A call the
// client cancelled says so; a write that timed out may have been applied,
// so it is not called retryable (a retry could store it twice).
func callFailed(ctx context.Context, t tool, err error) envelope {
	write := t.method != "GET" && t.scope == ScopeWrite
	if errors.Is(ctx.Err(), context.Canceled) {
		if write { // the server may have taken it before the cancel
			return envelope{Code: "INTERNAL", Message: "The call was cancelled; it may have been applied, check before repeating it"}
		}
		return envelope{Code: "INTERNAL", Message: "The call was cancelled"}
	}
	if errors.Is(err, ErrAnswerTooLarge) {
		return envelope{Code: "INTERNAL", Message: err.Error()} // the same call gets the same answer
	}
	timedOut := errors.Is(err, context.DeadlineExceeded) || isTimeout(err)
	if timedOut && write {
		return envelope{Code: "INTERNAL", Message: fmt.Sprintf("The service did not answer in time; the call may "+
			"have been applied, check before repeating it: %v", err)}
	}
	if timedOut {
		return envelope{Code: "INTERNAL", Retryable: true, Message: fmt.Sprintf("The service did not answer in time: %v", err)}
	}
	return envelope{Code: "INTERNAL", Retryable: true, Message: fmt.Sprintf("Service unreachable: %v", err)}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// request turns the tool arguments into the REST path and body: path
// arguments move into the path, every other argument is forwarded as is.
func (t tool) request(raw json.RawMessage, remote bool) (string, any, *envelope) {
	args := map[string]json.RawMessage{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", nil, validation("model_attributes_type", "Input should be a valid dictionary or object")
		}
	}
	path := t.path
	if strings.Contains(path, "{room_id}") {
		var id string
		switch raw, ok := args["room_id"]; {
		case !ok || string(raw) == "null":
			return "", nil, validation("missing", "Field required", "room_id")
		case json.Unmarshal(raw, &id) != nil:
			return "", nil, validation("string_type", "Input should be a valid string", "room_id")
		case strings.TrimSpace(id) == "":
			return "", nil, validation("string_too_short", "String should have at least 1 character", "room_id")
		}
		delete(args, "room_id")
		path = strings.Replace(path, "{room_id}", url.PathEscape(id), 1)
	}
	if t.name == "memory_invite_to_room" && !remote {
		delete(args, "max_uses") // the local tool always mints a single-use code
	}
	if t.method == "GET" {
		return path, nil, nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "", nil, validation("json_invalid", "Invalid JSON arguments")
	}
	return path, json.RawMessage(b), nil
}

// result is a successful call: the REST JSON (raw, decoded as m) as
// structured content, a one-line summary and the JSON as text.
func (t tool) result(raw []byte, m map[string]any) *mcp.CallToolResult {
	summary := t.summary(m)
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(raw),
		Content: []mcp.Content{&mcp.TextContent{Text: summary}, &mcp.TextContent{Text: string(raw)}}}
}

// envelope is the REST error envelope (interface §7.1).
type envelope struct {
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	RequestID *string        `json:"requestId"`
	Retryable bool           `json:"retryable"`
	Details   map[string]any `json:"details"`
}

func validation(typ, msg string, loc ...any) *envelope {
	e := map[string]any{"loc": append([]any{"body"}, loc...), "msg": msg, "type": typ}
	return &envelope{Code: "VALIDATION_ERROR", Message: "Request validation failed",
		Details: map[string]any{"errors": []any{e}}}
}

// restError reads the envelope of a REST error; a body that is not one
// still gives a code from the status.
func restError(status int, raw []byte) envelope {
	var e envelope
	if json.Unmarshal(raw, &e) == nil && e.Code != "" {
		return e
	}
	e = envelope{Code: "INTERNAL", Message: strings.TrimSpace(string(raw)), Retryable: status >= 500}
	if e.Message == "" {
		e.Message = fmt.Sprintf("HTTP %d", status)
	}
	return e
}

// errorResult is a tool error carrying the envelope as structured content
// and "CODE: message" (plus any field errors) as text.
func errorResult(e envelope) *mcp.CallToolResult {
	text := e.Code + ": " + e.Message
	if errs, ok := e.Details["errors"].([]any); ok {
		for _, fe := range errs {
			if m, ok := fe.(map[string]any); ok {
				text += fmt.Sprintf("\n- %s: %v", location(m["loc"]), m["msg"])
			}
		}
	}
	if reason, ok := e.Details["reason"].(string); ok {
		text += " (reason: " + reason + ")"
	}
	b, _ := json.Marshal(e)
	return &mcp.CallToolResult{IsError: true, StructuredContent: json.RawMessage(b),
		Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// location renders a details.errors loc without its leading "body".
func location(loc any) string {
	parts, _ := loc.([]any)
	var out []string
	for i, p := range parts {
		if i == 0 && p == "body" {
			continue
		}
		out = append(out, fmt.Sprint(p))
	}
	if len(out) == 0 {
		return "body"
	}
	return strings.Join(out, ".")
}
