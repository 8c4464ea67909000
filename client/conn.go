package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
)

// Version is the client's version, sent in the User-Agent.
const Version = "1.0.0"

// DefaultTimeout bounds one try of a call (not a streaming export); the
// caller's context bounds the whole call.
const DefaultTimeout = 30 * time.Second

// Option configures a Client or an AdminClient.
type Option func(*conn)

// WithHTTPClient sends requests through hc (its Timeout, if any, also cuts
// exports short: prefer contexts); nil keeps the default client. The
// default client refuses redirects to another host or from https to http,
// which would carry the API key along (Go strips only Authorization);
// give hc a CheckRedirect of the kind (SameOriginRedirects) if it may
// meet redirects.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *conn) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// SameOriginRedirects is an http.Client CheckRedirect that follows at
// most 10 redirects, each to the first request's scheme and host only.
func SameOriginRedirects(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	switch {
	case len(via) >= 10:
		return errors.New("client: stopped after 10 redirects")
	case req.URL.Host != first.Host || req.URL.Scheme != first.Scheme:
		return fmt.Errorf("client: refusing a redirect from %s://%s to %s://%s: the API key would go along",
			first.Scheme, first.Host, req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// WithRetry replaces DefaultRetryPolicy.
func WithRetry(p RetryPolicy) Option { return func(c *conn) { c.retry = p } }

// WithTimeout bounds each try of a non-streaming call; 0 leaves only the
// caller's context.
func WithTimeout(d time.Duration) Option { return func(c *conn) { c.timeout = d } }

// WithUserAgent replaces the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *conn) { c.userAgent = ua } }

// WithAgent sends X-Hebb-Agent and X-Hebb-Client-Env, which the server
// records in the provenance of room atoms; empty values are not sent.
func WithAgent(agent, clientEnv string) Option {
	return func(c *conn) {
		if agent != "" {
			c.extra.Set("X-Hebb-Agent", agent)
		}
		if clientEnv != "" {
			c.extra.Set("X-Hebb-Client-Env", clientEnv)
		}
	}
}

// conn is the HTTP plumbing shared by Client and AdminClient.
type conn struct {
	base       string // scheme://host[/prefix], no trailing slash
	authHeader string
	authValue  string
	hc         *http.Client
	retry      RetryPolicy
	timeout    time.Duration
	userAgent  string
	extra      http.Header
	// Replaced by tests.
	sleep  sleepFunc
	rnd    func() float64
	newKey func() string
}

var defaultHTTP = &http.Client{Transport: defaultTransport(), CheckRedirect: SameOriginRedirects}

// defaultTransport has no time limit of its own: each try is bounded by
// WithTimeout and the caller's context (a node drain may take minutes).
func defaultTransport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return t
}

func newConn(base, authHeader, authValue string, opts []Option) (*conn, error) {
	c := &conn{base: base, authHeader: authHeader, authValue: authValue, hc: defaultHTTP,
		retry: DefaultRetryPolicy, timeout: DefaultTimeout, userAgent: "hebb-go-client/" + Version,
		extra: http.Header{}, sleep: sleepCtx, rnd: jitter, newKey: newIdempotencyKey}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if err := c.checkHeaders(); err != nil {
		return nil, err
	}
	return c, nil
}

// checkHeaders refuses header values net/http would refuse at every send
// (a key pasted with its newline, say): the error is the caller's to fix,
// not a transport failure to retry.
func (c *conn) checkHeaders() error {
	vals := map[string]string{c.authHeader: c.authValue, "User-Agent": c.userAgent}
	for k := range c.extra {
		vals[k] = c.extra.Get(k)
	}
	for name, v := range vals {
		if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return fmt.Errorf("%w: %s", ErrBadHeader, name)
		}
	}
	return nil
}

// normalizeBase checks an http(s) URL and strips its trailing slash; an
// empty path becomes defPath.
func normalizeBase(raw, defPath string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: %q needs http:// or https:// and a host", ErrBadURL, raw)
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	if u.Path == "" {
		u.Path = defPath
	}
	return strings.TrimRight(u.String(), "/"), nil
}

func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "hebb-" + hex.EncodeToString(b[:])
}

// request is one logical call.
type request struct {
	method string
	path   string // below base, e.g. /memory/write
	query  url.Values
	body   any  // JSON-encoded; nil sends no body
	safe   bool // may be repeated after a transport error
	long   bool // not bounded by the per-try timeout
	header http.Header
}

// do runs r with retries and decodes a 2xx JSON answer into out (nil: drop).
func (c *conn) do(ctx context.Context, r *request, out any) error {
	body, err := encodeBody(r.body)
	if err != nil {
		return fmt.Errorf("client: cannot encode %s %s: %w", r.method, r.path, err)
	}
	return c.retrying(ctx, r.safe, func() error {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if c.timeout > 0 && !r.long {
			actx, cancel = context.WithTimeout(ctx, c.timeout)
		}
		defer cancel()
		resp, err := c.send(actx, r, body)
		if err != nil {
			return err
		}
		defer drain(resp.Body)
		if out == nil {
			return nil
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			terr := c.transportErr(r, fmt.Errorf("cannot decode response: %w", err))
			var nerr net.Error
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &nerr) {
				return terr // cut short: another try may get it whole
			}
			return &permanentError{terr} // the answer itself: a retry gets it again (and counts again)
		}
		return nil
	})
}

// open runs r with retries until a 2xx answer's headers arrive and returns
// it with the body unread; the caller closes it.
func (c *conn) open(ctx context.Context, r *request) (*http.Response, error) {
	var resp *http.Response
	err := c.retrying(ctx, r.safe, func() error {
		var err error
		resp, err = c.send(ctx, r, nil)
		return err
	})
	return resp, err
}

// retrying calls try until it succeeds or the policy gives up.
func (c *conn) retrying(ctx context.Context, safe bool, try func() error) error {
	for n := 0; ; n++ {
		err := try()
		if err == nil {
			return nil
		}
		wait, again := c.retry.waitFor(ctx, n, err, safe, c.rnd())
		if !again {
			return err
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return fmt.Errorf("%w; %w", err, serr)
		}
	}
}

// send makes one HTTP exchange; a non-2xx answer becomes an *APIError.
func (c *conn) send(ctx context.Context, r *request, body []byte) (*http.Response, error) {
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, rd)
	if err != nil {
		return nil, &permanentError{fmt.Errorf("client: cannot build %s %s: %w", r.method, r.path, err)}
	}
	c.setHeaders(req, r, body != nil)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportErr(r, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer drain(resp.Body)
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return nil, c.transportErr(r, fmt.Errorf("cannot read %d answer: %w", resp.StatusCode, err))
	}
	return nil, decodeError(r.method, r.path, resp.StatusCode, resp.Header, raw)
}

func (c *conn) setHeaders(req *http.Request, r *request, hasBody bool) {
	for k, vs := range c.extra {
		req.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range r.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if c.authValue != "" {
		req.Header.Set(c.authHeader, c.authValue)
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("User-Agent", c.userAgent)
}

// TransportError is a call that got no HTTP answer (or an unreadable one).
type TransportError struct {
	Method, Path string
	Err          error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("client: %s %s: %v", e.Method, e.Path, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// Timeout reports whether the transport gave up waiting.
func (e *TransportError) Timeout() bool {
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout()
}

func (c *conn) transportErr(r *request, err error) error {
	return &TransportError{Method: r.method, Path: r.path, Err: err}
}

func encodeBody(v any) ([]byte, error) {
	switch b := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		return b, nil
	case json.RawMessage:
		return b, nil
	}
	// Not json.Marshal: it writes <, > and & (in strings and in raw
	// metadata alike) as \u003c escapes, so metadata would not come back
	// byte for byte.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err // a cycle among them, before the walk below
	}
	// encoding/json writes each invalid byte of a string as U+FFFD, which
	// the server would store as such; raw JSON it copies (the server refuses
	// a body that is not UTF-8, 400).
	if err := checkUTF8(reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	if !utf8.Valid(buf.Bytes()) {
		return nil, fmt.Errorf("%w: the encoded body", ErrNotUTF8)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// drain reads what is left of a body (so the connection is reused) and
// closes it.
func drain(rc io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(rc, 64<<10))
	_ = rc.Close()
}

// checkUTF8 returns ErrNotUTF8, naming the text, when a string (or raw JSON)
// in v is not valid UTF-8.
// It walks what encoding/json encodes: not fields tagged "-", nor values
// that encode themselves (their output is checked whole). Call it after
// encoding v: encoding/json refuses cycles, which the walk would follow.
func checkUTF8(v reflect.Value) error {
	if v.IsValid() && v.Type() != rawMessageType && encodesItself(v.Type()) {
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return fmt.Errorf("%w: %.40q", ErrNotUTF8, v.String())
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return checkUTF8(v.Elem())
		}
	case reflect.Slice:
		if v.Type() == rawMessageType {
			if !utf8.Valid(v.Bytes()) {
				return fmt.Errorf("%w: raw JSON %.40q", ErrNotUTF8, v.Bytes())
			}
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // encoded as base64
		}
		fallthrough
	case reflect.Array:
		for i := range v.Len() {
			if err := checkUTF8(v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if err := checkUTF8(it.Key()); err != nil {
				return err
			}
			if err := checkUTF8(it.Value()); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				if err := checkUTF8(v.Field(i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

var (
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// encodesItself reports whether encoding/json leaves values of t (or of
// *t) to their own MarshalJSON or MarshalText.
func encodesItself(t reflect.Type) bool {
	for _, m := range []reflect.Type{jsonMarshalerType, textMarshalerType} {
		if t.Implements(m) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(m)) {
			return true
		}
	}
	return false
}
