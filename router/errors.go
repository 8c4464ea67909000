package router

import (
	"errors"
	"fmt"

	"github.com/hebbdb/hebb/router/linger"
)

// Error codes of interface §7.1.
const (
	codeValidation   = "VALIDATION_ERROR"
	codeUnauthorized = "UNAUTHORIZED"
	codeForbidden    = "FORBIDDEN"
	codeNotFound     = "NOT_FOUND"
	codeConflict     = "CONFLICT"
	codeInternal     = "INTERNAL"
	codeRateLimited  = "RATE_LIMITED"
	codeMethod       = "METHOD_NOT_ALLOWED"
	codeTimeout      = "REQUEST_TIMEOUT"
)

// ErrUnavailable is returned by a Backend when no leader answers in time.
var ErrUnavailable = errors.New("router: group unavailable")

// fieldError is one entry of details.errors.
type fieldError struct {
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}

// apiError is an error with everything the envelope needs.
type apiError struct {
	Status    int
	Code      string
	Message   string
	Retryable bool
	Details   map[string]any
	Header    map[string]string
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

func notFound(msg string) *apiError  { return newError(404, codeNotFound, msg) }
func forbidden(msg string) *apiError { return newError(403, codeForbidden, msg) }
func conflict(msg string) *apiError  { return newError(409, codeConflict, msg) }

// readTimedOut answers a request whose line, headers or body did not all
// arrive within the read timeout; nothing of it was acted on, so a retry
// is safe.
func readTimedOut() *apiError {
	e := newError(408, codeTimeout, linger.TimeoutMessage)
	e.Retryable = true
	return e
}

func unavailable(msg string) *apiError {
	e := newError(503, codeInternal, msg)
	e.Retryable = true
	return e
}

// outcomeUnknown answers a write whose leader took it but did not confirm
// it (leadership lost, its deadline passed, its answer lost): it may have
// been applied. A retry is safe with the same Idempotency-Key; an
// identical plain write is most likely refused by the gate as a duplicate
// of the first (its reason names that atom).
func outcomeUnknown() *apiError {
	e := unavailable("Service unavailable: the write was not confirmed in time and may have been applied")
	e.Header = map[string]string{"Retry-After": "1"}
	return e.with("reason", "outcome_unknown")
}

// storageUnavailable answers a write the leader could not append to its
// log (a full or failing disk): nothing was written, so a retry is safe.
func storageUnavailable() *apiError {
	return unavailable("Service unavailable: the server cannot write to its storage").
		with("reason", "storage_unavailable")
}

func internalError() *apiError { return newError(500, codeInternal, "Internal server error") }

// validationError builds the 400 of interface §7.1 from field errors.
// A room-address error (interface §7.3) carries its own message.
func validationError(errs ...fieldError) *apiError {
	errs = errs[:min(len(errs), maxFieldErrors)]
	e := newError(400, codeValidation, "Request validation failed").with("errors", errs)
	for _, fe := range errs {
		if isRoomMessage(fe.Msg) {
			e.Message = fe.Msg
			break
		}
	}
	return e
}

// maxFieldErrors bounds details.errors: a body of a million wrong-typed
// list items was answered with a million entries (95 MB for 2 MB).
const maxFieldErrors = 50

// fieldErr is a shorthand for one details.errors entry under the body.
func fieldErr(typ, msg string, loc ...any) fieldError {
	return fieldError{Loc: append([]any{"body"}, loc...), Msg: msg, Type: typ}
}

// validator collects field errors of one request.
type validator struct{ errs []fieldError }

func (v *validator) add(typ, msg string, loc ...any) {
	v.errs = append(v.errs, fieldErr(typ, msg, loc...))
}

func (v *validator) err() *apiError {
	if len(v.errs) == 0 {
		return nil
	}
	return validationError(v.errs...)
}

func asAPI(err error, target **apiError) bool { return errors.As(err, target) }
