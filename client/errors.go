package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Error codes of the envelope (interface §7.1, operator.md §6).
const (
	CodeValidation       = "VALIDATION_ERROR"
	CodeUnauthorized     = "UNAUTHORIZED"
	CodeForbidden        = "FORBIDDEN"
	CodeNotFound         = "NOT_FOUND"
	CodeConflict         = "CONFLICT"
	CodeInternal         = "INTERNAL"
	CodeRateLimited      = "RATE_LIMITED"
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	CodeRequestTimeout   = "REQUEST_TIMEOUT" // 408: the request did not arrive whole in time
)

// Sentinel errors: errors.Is(err, ErrNotFound) holds for an *APIError with
// the matching code. ErrUnavailable matches any 503.
var (
	ErrValidation   = errors.New("client: validation error")
	ErrUnauthorized = errors.New("client: unauthorized")
	ErrForbidden    = errors.New("client: forbidden")
	ErrNotFound     = errors.New("client: not found")
	ErrConflict     = errors.New("client: conflict")
	ErrRateLimited  = errors.New("client: rate limited")
	ErrInternal     = errors.New("client: internal server error")
	ErrUnavailable  = errors.New("client: service unavailable")
	// ErrBadURL is returned by New and NewAdmin for an unusable base URL.
	ErrBadURL = errors.New("client: bad base URL")
	// ErrBadHeader is returned by New and NewAdmin for a key, user agent
	// or agent name holding a control character (a key pasted with its
	// newline, say).
	ErrBadHeader = errors.New("client: header value holds a control character")
	// ErrNotUTF8 is returned, before anything is sent, for a request whose
	// text is not valid UTF-8: encoding/json would send each bad byte as
	// U+FFFD, and the server would store that.
	ErrNotUTF8 = errors.New("client: text is not valid UTF-8")
)

var codeSentinels = map[string]error{
	CodeValidation:   ErrValidation,
	CodeUnauthorized: ErrUnauthorized,
	CodeForbidden:    ErrForbidden,
	CodeNotFound:     ErrNotFound,
	CodeConflict:     ErrConflict,
	CodeRateLimited:  ErrRateLimited,
	CodeInternal:     ErrInternal,
}

// FieldError is one entry of details.errors of a VALIDATION_ERROR.
type FieldError struct {
	// Loc is the location, e.g. ["body", "items", 3, "external_ref"];
	// strings and (JSON-number) float64 indexes.
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}

// LocString renders Loc as "body.items.3.external_ref".
func (f FieldError) LocString() string {
	parts := make([]string, len(f.Loc))
	for i, p := range f.Loc {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".")
}

// APIError is an error answer of the server: its envelope
// {code, message, requestId, retryable, details} plus the HTTP status.
// An answer that is not an envelope (a proxy's 502, say) has an empty Code
// and the start of the body as Message.
type APIError struct {
	StatusCode int    // HTTP status
	Method     string // the request's method
	Path       string // the request's path
	Code       string // envelope code, e.g. NOT_FOUND
	Message    string
	RequestID  string // the envelope's requestId, else the X-Request-Id header; "" when neither
	Retryable  bool
	// Reason is details.reason ("" when absent), e.g. "idempotency_key_reused".
	Reason string
	// Details is the raw details object (nil when null).
	Details json.RawMessage
	// Errors is details.errors of a VALIDATION_ERROR.
	Errors []FieldError
	// RetryAfter is the Retry-After header, 0 when absent.
	RetryAfter time.Duration
}

// Error renders the status, code, message and request ID.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "client: %s %s: %d", e.Method, e.Path, e.StatusCode)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, " (reason %s)", e.Reason)
	}
	for i, fe := range e.Errors {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Errors)-i)
			break
		}
		fmt.Fprintf(&b, "; %s: %s", fe.LocString(), fe.Msg)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [%s]", e.RequestID)
	}
	return b.String()
}

// Is matches the sentinel errors by code (ErrUnavailable by status 503);
// an answer that is no envelope (a proxy's) by its status: 400, 401, 403,
// 404, 409, 429 and 500 map to the code the server gives them.
func (e *APIError) Is(target error) bool {
	if target == ErrUnavailable {
		return e.StatusCode == http.StatusServiceUnavailable
	}
	code := e.Code
	if code == "" {
		code = statusCodes[e.StatusCode]
	}
	s, ok := codeSentinels[code]
	return ok && s == target
}

var statusCodes = map[int]string{
	http.StatusBadRequest: CodeValidation, http.StatusUnauthorized: CodeUnauthorized,
	http.StatusForbidden: CodeForbidden, http.StatusNotFound: CodeNotFound, http.StatusConflict: CodeConflict,
	http.StatusTooManyRequests: CodeRateLimited, http.StatusInternalServerError: CodeInternal,
}

// DetailsInto decodes the raw details object into v.
func (e *APIError) DetailsInto(v any) error {
	if len(e.Details) == 0 {
		return nil
	}
	return json.Unmarshal(e.Details, v)
}

// AsAPIError returns the *APIError in err's chain, or nil.
func AsAPIError(err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	return nil
}

// ReasonOf returns details.reason of the *APIError in err's chain, or "".
func ReasonOf(err error) string {
	if ae := AsAPIError(err); ae != nil {
		return ae.Reason
	}
	return ""
}

// envelopeJSON is the wire form of an error answer.
type envelopeJSON struct {
	Code      string          `json:"code"`
	Message   string          `json:"message"`
	RequestID *string         `json:"requestId"`
	Retryable bool            `json:"retryable"`
	Details   json.RawMessage `json:"details"`
}

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 1 << 20

// decodeError builds the APIError of a non-2xx answer.
func decodeError(method, path string, status int, h http.Header, body []byte) *APIError {
	e := &APIError{StatusCode: status, Method: method, Path: path, RetryAfter: parseRetryAfter(h.Get("Retry-After"), time.Now()),
		RequestID: h.Get("X-Request-Id")}
	var env envelopeJSON
	if err := json.Unmarshal(body, &env); err != nil || env.Code == "" {
		e.Message = http.StatusText(status)
		if s := snippet(body); s != "" {
			e.Message += ": " + s
		}
		return e
	}
	e.Code, e.Message, e.Retryable = env.Code, env.Message, env.Retryable
	if env.RequestID != nil {
		e.RequestID = *env.RequestID
	}
	if d := env.Details; len(d) > 0 && string(d) != "null" {
		e.Details = d
		var reason struct {
			Reason string `json:"reason"`
		}
		var fields struct {
			Errors []FieldError `json:"errors"`
		}
		if json.Unmarshal(d, &reason) == nil { // each alone: a malformed one keeps the other
			e.Reason = reason.Reason
		}
		if json.Unmarshal(d, &fields) == nil {
			e.Errors = fields.Errors
		}
	}
	return e
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
