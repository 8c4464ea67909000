package embedder

import "errors"

// ErrUnknownEmbedder is returned by New for a name it does not know.
var ErrUnknownEmbedder = errors.New("embedder: unknown embedder")

// ErrInvalidConfig is returned by NewHTTP for a configuration it cannot use
// (no URL, a URL that is not http or https, no model).
var ErrInvalidConfig = errors.New("embedder: invalid configuration")

// ErrUnavailable is wrapped by every *Error: the embedder could not give
// vectors now, and the caller may retry later.
var ErrUnavailable = errors.New("embedder: unavailable")

// Reasons an *Error gives, short and machine-readable; the router puts them
// in the 503's details.reason.
const (
	ReasonTimeout           = "embedder_timeout"            // no answer before a deadline
	ReasonCanceled          = "embedder_canceled"           // the caller gave up
	ReasonUnreachable       = "embedder_unreachable"        // connection refused, reset, DNS...
	ReasonHTTPStatus        = "embedder_http_status"        // an answer other than 2xx
	ReasonBadResponse       = "embedder_bad_response"       // a 2xx the embedder cannot use
	ReasonDimensionMismatch = "embedder_dimension_mismatch" // vectors of another dimension than discovered
)

// Error is an embedder failure. errors.Is(err, ErrUnavailable) holds for it;
// Reason says what kind of failure it is. Its text never holds credentials.
type Error struct {
	Reason string // one of the Reason constants
	Status int    // the HTTP status for ReasonHTTPStatus, else 0
	Detail string // human-readable, without credentials
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return ErrUnavailable.Error() + ": " + e.Reason
	}
	return ErrUnavailable.Error() + ": " + e.Reason + ": " + e.Detail
}

// Unwrap makes errors.Is(err, ErrUnavailable) hold.
func (e *Error) Unwrap() error { return ErrUnavailable }
