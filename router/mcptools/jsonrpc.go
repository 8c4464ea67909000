package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Refusal returns the JSON-RPC error response a client's message deserves
// when it is not one the SDK's transports can take, and nil when it is:
// not UTF-8 or not JSON (-32700 Parse error), or not a JSON-RPC 2.0 request,
// notification or response (-32600 Invalid Request; an id that is neither
// a string nor an integer counts, as the SDK would change it). A batch (a
// JSON array) is refused when batches is false. The response carries the
// message's id when it has a usable one, else null, and never echoes the
// input.
//
// The SDK's stdio transport ends the session on such a message, and its
// HTTP handler answers it in plain text: both surfaces check first.
func Refusal(msg []byte, batches bool) []byte {
	msg = bytes.TrimSpace(msg)
	if !utf8.Valid(msg) || !json.Valid(msg) {
		return errorResponse(nil, jsonrpc.CodeParseError, "Parse error", "the message is not valid JSON")
	}
	if msg[0] == '[' {
		if !batches {
			return errorResponse(nil, jsonrpc.CodeInvalidRequest, "Invalid Request", "batches are not supported")
		}
		var items []json.RawMessage
		if json.Unmarshal(msg, &items) != nil || len(items) == 0 {
			return errorResponse(nil, jsonrpc.CodeInvalidRequest, "Invalid Request", "a batch holds one message or more")
		}
		for _, it := range items {
			if Refusal(it, false) != nil {
				return errorResponse(nil, jsonrpc.CodeInvalidRequest, "Invalid Request", "a message of the batch is not valid")
			}
		}
		return nil
	}
	var m struct {
		Version *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if msg[0] != '{' || json.Unmarshal(msg, &m) != nil {
		return errorResponse(nil, jsonrpc.CodeInvalidRequest, "Invalid Request", "the message is not a JSON object")
	}
	if string(bytes.TrimSpace(m.ID)) == "null" && m.Method != nil {
		// Neither a request the SDK answers nor a notification: MCP ids
		// "MUST NOT be null", and stdio dropped it unanswered.
		return errorResponse(nil, jsonrpc.CodeInvalidRequest, "Invalid Request", "id must not be null")
	}
	id, ok := usableID(m.ID)
	if !ok {
		return errorResponse(nil, jsonrpc.CodeInvalidRequest, "Invalid Request", "id must be a string or an integer")
	}
	var method string
	switch {
	case m.Version == nil || *m.Version != "2.0":
		return errorResponse(id, jsonrpc.CodeInvalidRequest, "Invalid Request", `jsonrpc must be "2.0"`)
	case m.Method != nil && json.Unmarshal(m.Method, &method) != nil:
		return errorResponse(id, jsonrpc.CodeInvalidRequest, "Invalid Request", "method must be a string")
	case m.Method == nil && (id == nil || (m.Result == nil && m.Error == nil)):
		return errorResponse(id, jsonrpc.CodeInvalidRequest, "Invalid Request", "a request needs a method")
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		return errorResponse(id, jsonrpc.CodeInvalidRequest, "Invalid Request", "the message cannot be decoded")
	}
	return nil
}

// FromSDKText turns a plain-text refusal of the SDK's HTTP handler (status
// and text) into the JSON-RPC error response to msg: for a 400 (a message
// it refuses) -32601 for an unknown method, -32602 for missing or bad
// params; else -32600, with our words for a 415 (a body not sent as JSON)
// and a 406 (an Accept without JSON and event streams). The SDK's text is
// not passed on: it can name the SDK's Go types.
func FromSDKText(status int, text string, msg []byte) []byte {
	id := IDOf(bytes.TrimSpace(msg))
	why := "the message was refused"
	switch {
	case status == 400 && (strings.Contains(text, "not handled") || strings.Contains(text, "unsupported")):
		return errorResponse(id, jsonrpc.CodeMethodNotFound, "Method not found", "the server has no such method")
	case status == 400 && strings.Contains(text, "params"):
		return errorResponse(id, jsonrpc.CodeInvalidParams, "Invalid params", "the method's params are missing or not valid")
	case status == 415:
		why = "the body must be sent with Content-Type: application/json"
	case status == 406:
		why = "Accept must list application/json and text/event-stream"
	}
	return errorResponse(id, jsonrpc.CodeInvalidRequest, "Invalid Request", why)
}

// InUse is the error response to a request whose id a request still in
// progress has (the SDK drops such a request without an answer). Its id is
// null: an answer under the id would be taken for the first request's.
func InUse() []byte {
	return errorResponse(nil, jsonrpc.CodeInvalidRequest, "Invalid Request",
		"a request with this id is still in progress")
}

// CleanSDKError rewrites an error response the SDK wrote with its own text
// (code 0, or a message naming its Go types) into a standard JSON-RPC
// error with the same id, as FromSDKText does for the remote connector;
// nil for any other message.
func CleanSDKError(msg []byte) []byte {
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Error == nil {
		return nil
	}
	text := m.Error.Message
	if m.Error.Code != 0 && !strings.Contains(text, "unmarshal") && !strings.Contains(text, "mcp.") &&
		!strings.Contains(text, "missing required") {
		return nil
	}
	id := m.ID
	if string(id) == "null" {
		id = nil
	}
	switch {
	case strings.Contains(text, "during session initialization"):
		return errorResponse(id, jsonrpc.CodeInvalidRequest, "Invalid Request", "send initialize first")
	case strings.Contains(text, "initialize") && strings.Contains(text, "twice"),
		strings.Contains(text, "already initialized"):
		return errorResponse(id, jsonrpc.CodeInvalidRequest, "Invalid Request", "the session is already initialized")
	case strings.Contains(text, "params") || strings.Contains(text, "unmarshal"):
		return errorResponse(id, jsonrpc.CodeInvalidParams, "Invalid params", "the method's params are missing or not valid")
	}
	return errorResponse(id, jsonrpc.CodeInvalidRequest, "Invalid Request", "the message was refused")
}

// TooLarge is the error response to a message over limit bytes, which a
// transport skips unread.
func TooLarge(limit int) []byte {
	return errorResponse(nil, jsonrpc.CodeInvalidRequest, "Invalid Request",
		fmt.Sprintf("the message exceeds %d MiB", limit>>20))
}

// usableID returns raw's id (nil when absent or null) as the SDK encodes
// it in a response, and whether the SDK keeps it: a string, or an integer
// it can hold.
func usableID(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return nil, false
	}
	switch x := v.(type) {
	case string:
		b, _ := json.Marshal(x)
		return b, true
	case json.Number:
		if n, err := x.Int64(); err == nil {
			b, _ := json.Marshal(n)
			return b, true
		}
	}
	return nil, false
}

// IDOf returns a request's id as the SDK encodes it (nil for a
// notification or a response), for matching the response that answers it.
func IDOf(msg []byte) json.RawMessage {
	if id, request := messageID(msg); request {
		return id
	}
	return nil
}

// AnsweredID returns the id a response answers (nil when msg is not a
// response).
func AnsweredID(msg []byte) json.RawMessage {
	if id, request := messageID(msg); !request {
		return id
	}
	return nil
}

// messageID returns msg's id as the SDK encodes it, and whether msg has a
// method (a request or a notification, not a response).
func messageID(msg []byte) (id json.RawMessage, request bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return nil, false
	}
	id, _ = usableID(m.ID)
	return id, m.Method != nil
}

type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data"`
}

type errorReply struct {
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   wireError       `json:"error"`
}

func errorResponse(id json.RawMessage, code int, msg, why string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(errorReply{Version: "2.0", ID: id, Error: wireError{code, msg, why}})
	return b
}
