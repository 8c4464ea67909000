package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router"
	"github.com/hebbdb/hebb/router/embedder"
)

// testServer is one node (cluster + router) serving real HTTP on loopback.
// Its request helpers report failures with Errorf on the test that created
// it (never FailNow, which is illegal from a subtest), so assert statuses
// with the subtest's own t (mustStatus, checkEnvelope).
type testServer struct {
	t       *testing.T
	opts    serverOpts
	dir     string
	raft    string // the Raft address of the first start, reused on restart
	cl      *cluster.Cluster
	srv     *router.Server
	URL     string // http://127.0.0.1:port
	Base    string // URL + /api/v1
	Key     string // API key of the bootstrapped "default" org
	OrgID   string
	Admin   string // admin token ("" when the admin API is off)
	stopped bool
}

type serverOpts struct {
	adminToken  string
	enableReset bool
	plan        cluster.Plan
	groups      int
	snapshotAt  uint64
	emb         embedder.Embedder
	log         io.Writer // the node's log (nil: discarded)
}

type serverOpt func(*serverOpts)

// withAdminToken sets --admin-token (the default is "adm").
func withAdminToken(tok string) serverOpt { return func(o *serverOpts) { o.adminToken = tok } }

// withReset sets --enable-reset.
func withReset() serverOpt { return func(o *serverOpts) { o.enableReset = true } }

// withSnapshotThreshold makes the groups snapshot every n log entries.
func withSnapshotThreshold(n uint64) serverOpt { return func(o *serverOpts) { o.snapshotAt = n } }

// withEmbedder replaces the hash embedder.
func withEmbedder(e embedder.Embedder) serverOpt { return func(o *serverOpts) { o.emb = e } }

// withLog writes the node's log (cluster and router) to w.
func withLog(w io.Writer) serverOpt { return func(o *serverOpts) { o.log = w } }

// withPlan sets the default plan of every org.
func withPlan(p cluster.Plan) serverOpt { return func(o *serverOpts) { o.plan = p } }

const testAdminToken = "adm"

var testHTTP = &http.Client{Timeout: 30 * time.Second}

// newTestServer starts a node on t.TempDir() with one org and returns it
// serving; t.Cleanup stops it.
func newTestServer(t *testing.T, opts ...serverOpt) *testServer {
	t.Helper()
	ts := &testServer{t: t, dir: t.TempDir(), raft: "127.0.0.1:0",
		opts: serverOpts{adminToken: testAdminToken, groups: 2}}
	for _, o := range opts {
		o(&ts.opts)
	}
	ts.Admin = ts.opts.adminToken
	ts.start()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	org, raw, _, err := router.CreateOrg(ctx, ts.cl, "default", "")
	if err != nil {
		t.Fatalf("cannot create org: %v", err)
	}
	ts.Key, ts.OrgID = raw, org.ID
	t.Cleanup(ts.stop)
	return ts
}

func (ts *testServer) start() {
	t := ts.t
	t.Helper()
	var emb embedder.Embedder = ts.opts.emb
	if emb == nil {
		var err error
		if emb, err = embedder.New("hash"); err != nil {
			t.Fatalf("embedder: %v", err)
		}
	}
	var logTo io.Writer = io.Discard
	if ts.opts.log != nil {
		logTo = ts.opts.log
	}
	log := slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := cluster.Start(ctx, cluster.Config{DataDir: ts.dir, RaftAddr: ts.raft, HTTPAddr: ln.Addr().String(),
		Groups: ts.opts.groups, Replicas: 1, Embedder: emb.Name(), Dim: emb.Dim(),
		SnapshotThreshold: ts.opts.snapshotAt, Logger: log})
	if err != nil {
		_ = ln.Close()
		t.Fatalf("cluster.Start: %v", err)
	}
	ts.raft = cl.Status().Admin.Nodes[0].RaftAddr
	ts.URL = "http://" + ln.Addr().String()
	ts.Base = ts.URL + "/api/v1"
	ts.cl = cl
	srv := router.New(router.Config{PublicURL: ts.URL, AdminToken: ts.opts.adminToken,
		EnableReset: ts.opts.enableReset, DefaultPlan: ts.opts.plan, Logger: log}, cl, emb)
	ts.srv = srv
	go func() { _ = srv.Serve(ln) }()
	ts.stopped = false
}

func (ts *testServer) stop() {
	if ts.stopped {
		return
	}
	ts.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		ts.t.Errorf("shutdown: %v", err)
	}
	if err := ts.cl.Close(); err != nil {
		ts.t.Errorf("cluster close: %v", err)
	}
	testHTTP.CloseIdleConnections()
}

// restart stops the node and starts it again on the same data dir.
func (ts *testServer) restart() {
	ts.t.Helper()
	ts.stop()
	ts.start()
}

// resp is one HTTP answer.
type resp struct {
	Status int
	Body   map[string]any // nil when the body is not a JSON object
	Raw    []byte
	Header http.Header
}

// do sends body (nil, a []byte/string taken as is, or a value encoded as
// JSON) to path (relative to the REST base unless it starts with "/" and a
// root prefix like /health or /admin) with key as X-Api-Key ("" for none).
func (ts *testServer) do(method, path, key string, body any) resp {
	ts.t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("X-Api-Key", key)
	}
	return ts.doH(method, path, h, body)
}

// doH is do with explicit headers.
func (ts *testServer) doH(method, path string, h http.Header, body any) resp {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(enc)
	}
	url := ts.Base + path
	if strings.HasPrefix(path, "/health") || strings.HasPrefix(path, "/admin") || strings.HasPrefix(path, "/api") {
		url = ts.URL + path
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		ts.t.Fatalf("request: %v", err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := testHTTP.Do(req)
	if err != nil {
		// Errorf, not Fatalf: ts.t may be the parent of the running subtest.
		ts.t.Errorf("%s %s: %v", method, path, err)
		return resp{Status: -1}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		ts.t.Errorf("%s %s: read body: %v", method, path, err)
		return resp{Status: -1}
	}
	out := resp{Status: res.StatusCode, Raw: raw, Header: res.Header}
	if len(raw) > 0 && raw[0] == '{' {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err == nil {
			out.Body = m
		}
	}
	return out
}

// admin calls the admin API with the server's token.
func (ts *testServer) admin(method, path string, body any) resp {
	ts.t.Helper()
	h := http.Header{}
	h.Set("X-Admin-Token", ts.Admin)
	return ts.doH(method, path, h, body)
}

// newOrg creates an org through the admin API and returns its ID and key.
func (ts *testServer) newOrg(name string) (orgID, key string) {
	ts.t.Helper()
	r := ts.admin("POST", "/admin/v1/orgs", map[string]any{"name": name})
	if r.Status != 200 {
		ts.t.Errorf("create org %q: %d %s", name, r.Status, r.Raw)
	}
	return str(r.Body["org_id"]), str(r.Body["api_key"])
}

// write stores content (with extra fields) and returns the atom ID; it fails
// the test unless the write is stored.
func (ts *testServer) write(content string, extra map[string]any) string {
	ts.t.Helper()
	body := map[string]any{"content": content}
	for k, v := range extra {
		body[k] = v
	}
	r := ts.do("POST", "/memory/write", ts.Key, body)
	if r.Status != 200 || r.Body["stored"] != true {
		ts.t.Errorf("write %q not stored: %d %s", content, r.Status, r.Raw)
	}
	return str(r.Body["atom_id"])
}

func mustStatus(t *testing.T, r resp, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d: %s", r.Status, want, r.Raw)
	}
}

// checkEnvelope asserts the five-key error envelope, the status and code,
// and that X-Request-Id equals requestId.
func checkEnvelope(t *testing.T, r resp, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Raw)
	}
	if r.Body == nil {
		t.Fatalf("error body is not a JSON object: %q", r.Raw)
	}
	if len(r.Body) != 5 {
		t.Errorf("envelope has %d keys, want 5: %s", len(r.Body), r.Raw)
	}
	for _, k := range []string{"code", "message", "requestId", "retryable", "details"} {
		if _, ok := r.Body[k]; !ok {
			t.Errorf("envelope lacks %q: %s", k, r.Raw)
		}
	}
	if r.Body["code"] != code {
		t.Errorf("code %v, want %s", r.Body["code"], code)
	}
	if _, ok := r.Body["message"].(string); !ok {
		t.Errorf("message is not a string: %s", r.Raw)
	}
	if _, ok := r.Body["retryable"].(bool); !ok {
		t.Errorf("retryable is not a bool: %s", r.Raw)
	}
	if d := r.Body["details"]; d != nil {
		if _, ok := d.(map[string]any); !ok {
			t.Errorf("details is neither null nor an object: %s", r.Raw)
		}
	}
	hdr := r.Header.Get("X-Request-Id")
	if id, ok := r.Body["requestId"].(string); ok {
		if id != hdr {
			t.Errorf("requestId %q != X-Request-Id %q", id, hdr)
		}
	} else if r.Body["requestId"] != nil {
		t.Errorf("requestId is neither null nor a string: %s", r.Raw)
	}
}

// fieldErrors returns details.errors of a validation error.
func fieldErrors(t *testing.T, r resp) []map[string]any {
	t.Helper()
	d, _ := r.Body["details"].(map[string]any)
	list, ok := d["errors"].([]any)
	if !ok {
		t.Fatalf("details.errors missing: %s", r.Raw)
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			t.Fatalf("details.errors[%d] is not an object: %s", i, r.Raw)
		}
		for _, k := range []string{"loc", "msg", "type"} {
			if _, ok := m[k]; !ok {
				t.Errorf("details.errors[%d] lacks %q: %s", i, k, r.Raw)
			}
		}
		out[i] = m
	}
	return out
}

// checkValidation asserts a 400 VALIDATION_ERROR with the spec's message
// whose details.errors has an entry at loc (when loc is given).
func checkValidation(t *testing.T, r resp, loc ...string) []map[string]any {
	t.Helper()
	checkEnvelope(t, r, 400, "VALIDATION_ERROR")
	if r.Body["message"] != "Request validation failed" {
		t.Errorf("message %q, want 'Request validation failed'", r.Body["message"])
	}
	errs := fieldErrors(t, r)
	if len(loc) == 0 {
		return errs
	}
	want := strings.Join(loc, ".")
	for _, e := range errs {
		if locString(e["loc"]) == want {
			return errs
		}
	}
	t.Errorf("no details.errors entry at %s: %s", want, r.Raw)
	return errs
}

func locString(v any) string {
	list, _ := v.([]any)
	parts := make([]string, len(list))
	for i, p := range list {
		switch x := p.(type) {
		case string:
			parts[i] = x
		case float64:
			parts[i] = strconv.Itoa(int(x))
		}
	}
	return strings.Join(parts, ".")
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// items returns the read response's items.
func items(r resp) []map[string]any {
	l := list(r.Body["items"])
	out := make([]map[string]any, len(l))
	for i, x := range l {
		out[i] = obj(x)
	}
	return out
}

func itemIDs(r resp) []string {
	var out []string
	for _, it := range items(r) {
		out = append(out, str(it["atom_id"]))
	}
	return out
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// withoutRequestID is an error body minus requestId, for comparing bodies.
func withoutRequestID(r resp) map[string]any {
	m := make(map[string]any, len(r.Body))
	for k, v := range r.Body {
		if k != "requestId" {
			m[k] = v
		}
	}
	return m
}

// clearOfMidnight waits out the last minute of a UTC day: daily query
// quotas start afresh at midnight, so a test that counts a day's queries
// and crossed it would see its count reset.
func clearOfMidnight(t *testing.T) {
	t.Helper()
	now := time.Now().UTC()
	if left := now.Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now); left < time.Minute {
		t.Logf("waiting %v for UTC midnight to pass", left)
		time.Sleep(left + time.Second)
	}
}
