package chat

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hebbdb/hebb/raftfsm"
)

// Sentinel errors of the chat surface.
var (
	// ErrProvider is a failure of the OpenID Connect provider or of what it
	// returned (discovery, token exchange, id_token verification).
	ErrProvider = errors.New("chat: sign-in provider failure")
	// errCodeRefused is the provider's invalid_grant for a sign-in code: a
	// callback replayed (the code was used) or too late, the browser's
	// doing, not the provider's failure.
	errCodeRefused = errors.New("chat: the sign-in provider refused the code")
	// ErrToken is a realtime token or signed cookie that does not verify.
	ErrToken = errors.New("chat: invalid token")
)

// Error codes of the envelope (interface §7.1).
const (
	codeValidation   = "VALIDATION_ERROR"
	codeUnauthorized = "UNAUTHORIZED"
	codeForbidden    = "FORBIDDEN"
	codeNotFound     = "NOT_FOUND"
	codeConflict     = "CONFLICT"
	codeInternal     = "INTERNAL"
	codeMethod       = "METHOD_NOT_ALLOWED"
	codeRateLimited  = "RATE_LIMITED"
	codeTimeout      = "REQUEST_TIMEOUT"
)

// apiError is an error with everything the envelope needs.
type apiError struct {
	Status    int
	Code      string
	Message   string
	Retryable bool
	Details   map[string]any
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

func newError(status int, code, msg string) *apiError {
	return &apiError{Status: status, Code: code, Message: msg}
}

func (e *apiError) with(key string, v any) *apiError {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = v
	return e
}

// rateLimited is a retryable 429 with its Retry-After (wait, rounded up).
func rateLimited(c *call, reason, msg string, wait time.Duration) *apiError {
	secs := int(wait.Seconds()) + 1
	c.ctx.Response.Header.Set("Retry-After", strconv.Itoa(secs))
	e := newError(429, codeRateLimited, msg).with("reason", reason).with("retry_after_seconds", secs)
	e.Retryable = true
	return e
}

func notFound(msg string) *apiError  { return newError(404, codeNotFound, msg) }
func forbidden(msg string) *apiError { return newError(403, codeForbidden, msg) }

func unauthorized(reason, msg string) *apiError {
	return newError(401, codeUnauthorized, msg).with("reason", reason)
}

func unavailable(msg string) *apiError {
	e := newError(503, codeInternal, msg)
	e.Retryable = true
	return e
}

func internalError() *apiError { return newError(500, codeInternal, "Internal server error") }

// fieldError is one entry of details.errors.
type fieldError struct {
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}

func validationError(errs ...fieldError) *apiError {
	return newError(400, codeValidation, "Request validation failed").with("errors", errs)
}

// fieldErr is one details.errors entry; loc starts with "body", "query" or
// "path".
func fieldErr(typ, msg string, loc ...any) fieldError {
	return fieldError{Loc: loc, Msg: msg, Type: typ}
}

// applyError maps an expected failure of a chat command to the envelope.
func applyError(e *raftfsm.ApplyError) *apiError {
	switch {
	case errors.Is(e, raftfsm.ErrNotFound):
		return notFound(e.Message)
	case errors.Is(e, raftfsm.ErrForbidden):
		return forbidden(e.Message)
	case errors.Is(e, raftfsm.ErrConflict):
		ae := newError(409, codeConflict, e.Message)
		switch e.Message {
		case raftfsm.ChatMsgRoomFull:
			ae.with("reason", "room_full")
		case raftfsm.ChatMsgEditLimit:
			ae.with("reason", "edit_limit")
		}
		return ae
	}
	return internalError()
}
