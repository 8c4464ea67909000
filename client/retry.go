package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy says how often and how patiently a call is repeated.
//
// A call is repeated only when repeating it cannot apply it twice: a safe
// call (GETs, reads, idempotent deletes and settings updates, and a
// write-batch with an Idempotency-Key) after an answer with retryable:
// true, a transport error or a bare 502/503/504 from a proxy; any other
// call (a write, feedback, a room change) only after a retryable answer
// that says nothing was applied (NotApplied: a full disk, a starting node,
// an embedder that failed before the write). A 503 "no leader answered in
// time" may come after the write was committed, so such a call returns it.
// A request that cannot be built, or a 2xx answer that cannot be decoded,
// is not repeated. The n-th wait (n from 0) is a random duration in [d/2,
// d] with d = BaseDelay·2^n, at most MaxDelay when it is above zero; a
// Retry-After header replaces it. A wait that would outlast the context's
// deadline, or a Retry-After longer than MaxRetryAfter, ends the call with
// the last error.
type RetryPolicy struct {
	// MaxAttempts is the number of tries, the first included; <= 1 never retries.
	MaxAttempts int
	// BaseDelay is the first back-off step.
	BaseDelay time.Duration
	// MaxDelay caps one back-off step; <= 0: no cap.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits for; a longer
	// one (a daily quota that resets at midnight) is returned to the caller.
	// 0: an answer carrying Retry-After is never retried.
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy is used unless WithRetry says otherwise.
var DefaultRetryPolicy = RetryPolicy{
	MaxAttempts:   4,
	BaseDelay:     100 * time.Millisecond,
	MaxDelay:      5 * time.Second,
	MaxRetryAfter: 30 * time.Second,
}

// NoRetry makes every call a single try.
var NoRetry = RetryPolicy{MaxAttempts: 1}

// backoff is the wait before retry number n (0-based), with jitter from
// rnd in [0, 1).
func (p RetryPolicy) backoff(n int, rnd float64) time.Duration {
	d := p.BaseDelay
	for i := 0; i < n && (p.MaxDelay <= 0 || d < p.MaxDelay) && d < maxBackoff; i++ {
		d *= 2
	}
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	half := d / 2
	return half + time.Duration(rnd*float64(d-half))
}

// maxBackoff stops the doubling of an uncapped back-off long before a
// Duration overflows.
const maxBackoff = 24 * time.Hour

// maxRetryAfter bounds a parsed Retry-After (a larger number of seconds
// overflowed a Duration into a negative wait).
const maxRetryAfter = 365 * 24 * time.Hour

// parseRetryAfter reads a Retry-After header: delta seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
	} else if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v, "-") {
		return maxRetryAfter
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// sleepFunc waits d or until ctx is done.
type sleepFunc func(ctx context.Context, d time.Duration) error

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// jitter is the default random source of back-off.
func jitter() float64 { return rand.Float64() }

// waitFor returns how long to wait before retry n after err, and whether to
// retry at all (safe: repeating the request cannot apply it twice).
func (p RetryPolicy) waitFor(ctx context.Context, n int, err error, safe bool, rnd float64) (time.Duration, bool) {
	if n+1 >= p.MaxAttempts {
		return 0, false
	}
	var wait time.Duration
	switch ae := AsAPIError(err); {
	case ae == nil:
		if !safe || ctx.Err() != nil || errors.As(err, new(*permanentError)) {
			return 0, false
		}
		wait = p.backoff(n, rnd)
	case ae.Retryable && (safe || NotApplied(ae)) || safe && ae.Code == "" && isGatewayStatus(ae.StatusCode):
		wait = p.backoff(n, rnd)
		if ae.RetryAfter > 0 {
			if ae.RetryAfter > p.MaxRetryAfter {
				return 0, false
			}
			wait = ae.RetryAfter
		}
	default:
		return 0, false
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		return 0, false
	}
	return wait, true
}

// NotApplied reports whether a retryable answer says the server refused the
// request before changing anything (its details.reason), so that even a
// write may be sent again: a log the leader cannot write
// (storage_unavailable), a node still starting, the vault not configured,
// the daily query quota, an embedder that failed (embedder_*); or its
// code: a request the server did not receive whole in time
// (REQUEST_TIMEOUT). The 503 "no leader answered in time" carries no
// reason: the write may have been committed.
func NotApplied(ae *APIError) bool {
	if ae.Code == CodeRequestTimeout {
		return true
	}
	switch ae.Reason {
	case "storage_unavailable", "starting", "vault_unavailable", "daily_query_quota":
		return true
	}
	return strings.HasPrefix(ae.Reason, "embedder_")
}

// permanentError is a failure a retry cannot mend: a request that cannot be
// built, a 2xx answer that cannot be decoded.
type permanentError struct{ error }

func (e *permanentError) Unwrap() error { return e.error }

func isGatewayStatus(s int) bool {
	return s == http.StatusBadGateway || s == http.StatusServiceUnavailable || s == http.StatusGatewayTimeout
}
