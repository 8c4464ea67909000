package chat_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/chat"
	"github.com/hebbdb/hebb/router/vault"
)

const serviceToken = "svc-test-token-0123456789"

// node is one hebb node (cluster + chat surface) on loopback.
type node struct {
	t       *testing.T
	ccfg    cluster.Config // the cluster's config; RaftAddr is pinned after the first start
	cl      *cluster.Cluster
	srv     *chat.Server
	URL     string
	addr    string
	idp     *fakeIdP
	opts    chat.Config
	stopped bool
}

// withChat changes the chat surface's config.
func withChat(f func(*chat.Config)) func(*node) { return func(n *node) { f(&n.opts) } }

// withSnapshots makes every group snapshot every k log entries.
func withSnapshots(k uint64) func(*node) { return func(n *node) { n.ccfg.SnapshotThreshold = k } }

// withKeyRing seals the chat secret under a vault key ring.
func withKeyRing(n *node) {
	r, err := vault.Parse(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	if err != nil {
		n.t.Fatal(err)
	}
	n.opts.Keys = r
}

func testLogger() *slog.Logger {
	if os.Getenv("CHAT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// newNode starts a single-node cluster with the chat surface and a fake
// OpenID Connect provider; t.Cleanup stops both.
func newNode(t *testing.T, opts ...func(*node)) *node {
	t.Helper()
	n := &node{t: t, idp: newFakeIdP(t)}
	n.ccfg = cluster.Config{DataDir: t.TempDir(), RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1",
		Groups: 2, Replicas: 1, Embedder: "test", Dim: 8, Logger: testLogger()}
	n.opts = chat.Config{ServiceToken: serviceToken, MaxParticipants: 5,
		OIDC: chat.OIDC{Issuer: n.idp.URL(), ClientID: fakeClientID, ClientSecret: fakeClientSecret}}
	for _, f := range opts {
		f(n)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n.addr = ln.Addr().String()
	n.start(ln)
	t.Cleanup(n.stop)
	return n
}

func (n *node) start(ln net.Listener) {
	t := n.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := cluster.Start(ctx, n.ccfg)
	if err != nil {
		_ = ln.Close()
		t.Fatalf("cluster.Start: %v", err)
	}
	for _, s := range cl.Status().Admin.Nodes {
		if s.NodeID == cl.NodeID() {
			n.ccfg.RaftAddr, n.ccfg.GossipAddr = s.RaftAddr, cmp.Or(s.GossipAddr, n.ccfg.GossipAddr)
		}
	}
	n.cl = cl
	cfg := n.opts
	cfg.PublicURL = "http://" + n.addr
	if cfg.Logger == nil {
		cfg.Logger = testLogger()
	}
	srv := chat.New(cfg, cl)
	n.srv, n.URL = srv, cfg.PublicURL
	go func() { _ = srv.Serve(ln) }() // not n.srv: a restart replaces it
	n.stopped = false
}

func (n *node) stop() {
	if n.stopped {
		return
	}
	n.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.srv.Shutdown(ctx); err != nil {
		n.t.Errorf("shutdown: %v", err)
	}
	if err := n.cl.Close(); err != nil {
		n.t.Errorf("cluster close: %v", err)
	}
}

// restart stops the node and starts it again on the same data dir and
// address.
func (n *node) restart() {
	n.t.Helper()
	n.stop()
	var ln net.Listener
	var err error
	for range 50 { // the old listener's port may take a moment to free
		if ln, err = net.Listen("tcp", n.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		n.t.Fatalf("relisten: %v", err)
	}
	n.start(ln)
}

// spec is the surface's OpenAPI document, loaded and validated once.
var spec = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openapi3.NewLoader().LoadFromData(chat.OpenAPI)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	doc.Servers = nil // match any host
	return gorillamux.NewRouter(doc)
})

func specDoc(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(chat.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// resp is one HTTP answer.
type resp struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any // nil unless the body is a JSON object
}

func (r resp) str(path ...string) string {
	v, _ := dig(r.Body, path...).(string)
	return v
}

func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// client is one browser-like user: a cookie jar, and the session token
// once signed in.
type client struct {
	t     *testing.T
	n     *node
	hc    *http.Client
	token string // sent as a bearer token when set
	extra map[string]string
}

func (n *node) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: n.t, n: n, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request and checks the answer against the OpenAPI document.
func (c *client) do(method, path string, body any) resp {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	u := path
	if !strings.HasPrefix(path, "http") {
		u = c.n.URL + path
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.extra {
		req.Header.Set(k, v)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	_ = json.Unmarshal(raw, &out.Body)
	if strings.HasPrefix(u, c.n.URL) {
		checkSpec(c.t, req, out)
	}
	return out
}

// checkSpec fails the test when a response does not match the OpenAPI
// document (status documented, body of the documented schema).
func checkSpec(t *testing.T, req *http.Request, r resp) {
	t.Helper()
	router, err := spec()
	if err != nil {
		t.Fatalf("openapi document: %v", err)
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		if r.Status == 404 || r.Status == 405 { // a route the document does not have
			return
		}
		t.Errorf("%s %s: not in the OpenAPI document: %v", req.Method, req.URL.Path, err)
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: r.Status, Header: r.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	out.SetBodyBytes(r.Raw)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s %s → %d does not match the OpenAPI document: %v\nbody: %s", req.Method, req.URL.Path, r.Status, err, r.Raw)
	}
}

// must asserts the status of a response.
func must(t *testing.T, r resp, status int) resp {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Raw)
	}
	return r
}

// mustError asserts an error envelope with status, code and (if given)
// details.reason.
func mustError(t *testing.T, r resp, status int, code, reason string) {
	t.Helper()
	if r.Status != status || r.str("code") != code || (reason != "" && r.str("details", "reason") != reason) {
		t.Fatalf("got %d %s, want %d %s (%s)", r.Status, r.Raw, status, code, reason)
	}
	for _, k := range []string{"code", "message", "requestId", "retryable", "details"} {
		if _, ok := r.Body[k]; !ok {
			t.Fatalf("envelope without %q: %s", k, r.Raw)
		}
	}
}

// guest signs in anonymously under name.
func (n *node) guest(name string) *client {
	c := n.client()
	r := must(c.t, c.do("POST", "/api/auth/sign-in/anonymous", map[string]any{"name": name}), 200)
	c.token = r.str("token")
	return c
}

// newRoom creates a private room named name and returns its ID.
func (c *client) newRoom(name string) string {
	c.t.Helper()
	return must(c.t, c.do("POST", "/api/rooms", map[string]any{"name": name}), 201).str("id")
}

// account signs in through the fake provider as sub (with c's current
// session, so a guest is upgraded). The browser's redirects are followed by
// hand: sign-in → provider → callback.
func (c *client) signInAs(sub, name string) resp {
	c.t.Helper()
	start := must(c.t, c.do("POST", "/api/auth/sign-in/oauth2", map[string]any{"providerId": "oidc"}), 200)
	c.n.idp.nextUser(sub, name)
	loc := c.follow(start.str("url"))
	r := c.do("GET", loc, nil)
	if r.Status == 200 {
		c.token = r.str("token")
	}
	return r
}

// follow GETs a provider URL and returns where it redirects.
func (c *client) follow(u string) string {
	c.t.Helper()
	res, err := c.hc.Get(u)
	if err != nil {
		c.t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusFound {
		c.t.Fatalf("provider answered %d", res.StatusCode)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		c.t.Fatal(err)
	}
	return loc.String()
}

// me is the signed-in user's ID.
func (c *client) me() string {
	c.t.Helper()
	return must(c.t, c.do("GET", "/api/auth/get-session", nil), 200).str("user", "id")
}

// service returns a client of the internal routes.
func (n *node) service() *client {
	c := n.client()
	c.extra = map[string]string{"X-Service-Token": serviceToken}
	return c
}
