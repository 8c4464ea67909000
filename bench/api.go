package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// Request is one call a workload wants made.
type Request struct {
	// Op names the histogram the call is recorded under ("search", "write").
	Op string
	// Method is the HTTP method; Path is relative to the REST base
	// ("/memory/read") unless it starts with "/admin/" or "/health", or is
	// "/metrics".
	Method, Path string
	// Key is sent as X-Api-Key when not empty.
	Key string
	// Body is sent as JSON when not nil.
	Body []byte
	// OnResponse, when set, sees the status and body of the answer before the
	// body is released; a non-empty tag it returns is counted in the report
	// (for example "filtered" for a write the gate refused).
	OnResponse func(status int, body []byte) (tag string)
	// ServerTime, when set, reads from a 2xx answer the time the server
	// says it spent on it (a read's search_time_ms), recorded beside the
	// round trip so that a report shows what the network and HTTP add.
	ServerTime func(body []byte) (time.Duration, bool)
}

// Doer sends a request and returns the HTTP status, or an error when no
// answer arrived.
type Doer interface {
	Do(req *Request) (status int, err error)
}

// API is a REST client of one hebb deployment over fasthttp. It is safe for
// concurrent use.
type API struct {
	base  string // REST base, ".../api/v1", no trailing slash
	root  string // scheme://host[:port], for /admin and /health
	admin string // X-Admin-Token for /admin calls
	c     *fasthttp.Client
	wait  time.Duration
}

// NewAPI returns a client of the REST base rawURL (".../api/v1" is appended
// when the URL has no path) holding up to conns connections, giving up on a
// call after timeout.
func NewAPI(rawURL, adminToken string, conns int, timeout time.Duration) (*API, error) {
	u, err := url.Parse(strings.TrimRight(rawURL, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%w: --url %q is not an http(s) URL", ErrBadConfig, rawURL)
	}
	if u.Path == "" {
		u.Path = "/api/v1"
	}
	root := u.Scheme + "://" + u.Host
	return &API{
		base: root + u.Path, root: root, admin: adminToken, wait: timeout,
		c: &fasthttp.Client{
			MaxConnsPerHost:          max(conns, 1),
			MaxConnWaitTimeout:       timeout,
			ReadTimeout:              timeout,
			WriteTimeout:             timeout,
			MaxIdleConnDuration:      time.Minute,
			NoDefaultUserAgentHeader: true,
			DisablePathNormalizing:   true,
			MaxResponseBodySize:      64 << 20,
		},
	}, nil
}

// Base returns the REST base URL.
func (a *API) Base() string { return a.base }

func (a *API) url(path string) string {
	if strings.HasPrefix(path, "/admin/") || strings.HasPrefix(path, "/health") || path == metricsPath {
		return a.root + path
	}
	return a.base + path
}

// Do sends req and calls req.OnResponse with the answer.
func (a *API) Do(req *Request) (int, error) {
	status, _, err := a.do(req, false)
	return status, err
}

// do sends req; with keep it returns a copy of the body.
func (a *API) do(req *Request, keep bool) (int, []byte, error) {
	hreq, hresp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(hreq)
	defer fasthttp.ReleaseResponse(hresp)
	hreq.SetRequestURI(a.url(req.Path))
	hreq.Header.SetMethod(req.Method)
	if req.Key != "" {
		hreq.Header.Set("X-Api-Key", req.Key)
	}
	if strings.HasPrefix(req.Path, "/admin/") && a.admin != "" {
		hreq.Header.Set("X-Admin-Token", a.admin)
	}
	if req.Body != nil {
		hreq.Header.SetContentType("application/json")
		hreq.SetBodyRaw(req.Body)
	}
	if err := a.c.DoTimeout(hreq, hresp, a.wait); err != nil {
		return 0, nil, err
	}
	status, body := hresp.StatusCode(), hresp.Body()
	if req.OnResponse != nil {
		req.OnResponse(status, body)
	}
	if keep {
		body = append([]byte(nil), body...)
	}
	return status, body, nil
}

// Call sends in (nil, or a value encoded as JSON) and decodes a 2xx answer
// into out (when not nil); any other status is an error wrapping ErrStatus.
// It is for setup calls, not for measured load.
func (a *API) Call(method, path, key string, in, out any) error {
	req := &Request{Method: method, Path: path, Key: key}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("cannot encode %s %s: %w", method, path, err)
		}
		req.Body = b
	}
	status, body, err := a.do(req, true)
	if err != nil {
		return fmt.Errorf("cannot call %s %s: %w", method, path, err)
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("%s %s: %w %d: %s", method, path, ErrStatus, status, truncate(body, 300))
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return fmt.Errorf("cannot decode %s %s: %w", method, path, err)
		}
	}
	return nil
}

// ErrorKey names a failed call for the report's errors-by-code: the HTTP
// status ("503") for an answer outside 2xx, a transport class otherwise
// ("timeout", "conn_refused", "conn_closed", "no_free_conns",
// "transport"); "" for success.
func ErrorKey(status int, err error) string {
	switch {
	case err == nil && status >= 200 && status <= 299:
		return ""
	case err == nil:
		return fmt.Sprint(status)
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, fasthttp.ErrDialTimeout):
		return "timeout"
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return "no_free_conns"
	case errors.Is(err, fasthttp.ErrConnectionClosed):
		return "conn_closed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "conn_refused"
	}
	return "transport"
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
