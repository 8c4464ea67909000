package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router"
	"github.com/hebbdb/hebb/router/embedder"
	"github.com/hebbdb/hebb/router/vault"
)

const testAdminToken = "adm"

// node is one hebb node (cluster + router) on loopback, with an SMTP
// server of its own that keeps what it receives.
type node struct {
	t     *testing.T
	cl    *cluster.Cluster
	srv   *router.Server
	URL   string
	Mail  *mailbox
	OrgID string // the bootstrapped default org
	Key   string // its API key
}

type nodeOpts struct {
	noMail bool
	vault  bool
	plan   cluster.Plan
}

func startNode(t *testing.T, o nodeOpts) *node {
	t.Helper()
	emb, err := embedder.New("hash")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := cluster.Start(ctx, cluster.Config{DataDir: t.TempDir(), RaftAddr: "127.0.0.1:0", HTTPAddr: ln.Addr().String(),
		Groups: 2, Replicas: 1, Embedder: emb.Name(), Dim: emb.Dim(), Logger: log})
	if err != nil {
		_ = ln.Close()
		t.Fatalf("cluster.Start: %v", err)
	}
	n := &node{t: t, cl: cl, URL: "http://" + ln.Addr().String()}
	cfg := router.Config{PublicURL: n.URL, AdminToken: testAdminToken, Logger: log, DefaultPlan: o.plan}
	if o.vault {
		if cfg.Vault, _, err = vault.Load("", t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	if !o.noMail {
		n.Mail = startMailbox(t)
		cfg.SMTPURL, cfg.MailFrom = "smtp://"+n.Mail.addr, "hebb <noreply@hebb.test>"
	}
	srv := router.New(cfg, cl, emb)
	n.srv = srv
	go func() { _ = srv.Serve(ln) }()
	org, key, _, err := router.CreateOrg(ctx, cl, "default", "")
	if err != nil {
		t.Fatal(err)
	}
	n.OrgID, n.Key = org.ID, key
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = n.srv.Shutdown(ctx)
		_ = cl.Close()
	})
	return n
}

// api calls the REST API (path relative to /api/v1) with key.
func (n *node) api(key, method, path string, body any) (int, map[string]any) {
	n.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, n.URL+"/api/v1"+path, rd)
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// admin calls the admin API.
func (n *node) admin(method, path string, body any) (int, map[string]any) {
	n.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, n.URL+path, bytes.NewReader(b))
	req.Header.Set("X-Admin-Token", testAdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// browser is a cookie-keeping HTTP client that behaves like a same-origin
// browser: it sends Sec-Fetch-Site and Origin on POSTs and never follows
// redirects by itself.
type browser struct {
	t    *testing.T
	n    *node
	jar  *cookiejar.Jar
	http *http.Client
}

func (n *node) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, n: n, jar: jar, http: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	Status   int
	Body     string
	Location string
	Header   http.Header
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{Status: resp.StatusCode, Body: string(body), Location: resp.Header.Get("Location"), Header: resp.Header}
}

func (b *browser) get(path string) page {
	req, _ := http.NewRequest(http.MethodGet, b.n.URL+path, nil)
	return b.do(req)
}

// follow GETs path and follows redirects on the same site.
func (b *browser) follow(path string) page {
	b.t.Helper()
	for range 5 {
		p := b.get(path)
		if p.Location == "" {
			return p
		}
		path = p.Location
	}
	b.t.Fatalf("too many redirects from %s", path)
	return page{}
}

// post sends a form as a same-origin page would, adding the page's CSRF
// token when form has none.
func (b *browser) post(path string, form url.Values, headers ...string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.n.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", b.n.URL)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	return b.do(req)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token of the forms on path.
func (b *browser) csrf(path string) string {
	b.t.Helper()
	p := b.follow(path)
	m := csrfRE.FindStringSubmatch(p.Body)
	if m == nil {
		b.t.Fatalf("no CSRF token on %s (status %d)", path, p.Status)
	}
	return m[1]
}

// submit posts form to action with the CSRF token of the page at from.
func (b *browser) submit(from, action string, form url.Values) page {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", b.csrf(from))
	return b.post(action, form)
}

func (b *browser) signUp(email, password, orgName string) {
	b.t.Helper()
	p := b.submit("/console/signup", "/console/signup", url.Values{"email": {email}, "password": {password},
		"password2": {password}, "org_name": {orgName}})
	if p.Status != http.StatusSeeOther {
		b.t.Fatalf("sign-up %s: %d\n%s", email, p.Status, p.Body)
	}
}

func (b *browser) signIn(email, password string) page {
	b.t.Helper()
	return b.submit("/console/signin", "/console/signin", url.Values{"email": {email}, "password": {password}})
}

func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.n.URL + "/console")
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// mailbox is an SMTP server that keeps every message.
type mailbox struct {
	addr string
	mu   sync.Mutex
	msgs []mailMsg
	got  chan struct{}
}

type mailMsg struct {
	From, To, Subject, Text, HTML string
}

func startMailbox(t *testing.T) *mailbox {
	m := &mailbox{got: make(chan struct{}, 100)}
	s := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &mailSession{m: m}, nil }))
	s.Domain = "mail.test"
	s.AllowInsecureAuth = true
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.addr = ln.Addr().String()
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close() })
	return m
}

// wait returns the next message (bounded by a generous guard).
func (m *mailbox) wait(t *testing.T) mailMsg {
	t.Helper()
	select {
	case <-m.got:
	case <-time.After(30 * time.Second):
		t.Fatal("no mail arrived")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.msgs[len(m.msgs)-1]
}

type mailSession struct {
	m        *mailbox
	from, to string
}

func (s *mailSession) Reset()        {}
func (s *mailSession) Logout() error { return nil }
func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}
func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = to
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	out := mailMsg{From: s.from, To: s.to, Subject: subject}
	_, params, _ := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		body, _ := io.ReadAll(quotedprintable.NewReader(p))
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			out.HTML = string(body)
		} else {
			out.Text = string(body)
		}
	}
	s.m.mu.Lock()
	s.m.msgs = append(s.m.msgs, out)
	s.m.mu.Unlock()
	s.m.got <- struct{}{}
	return nil
}

var linkRE = regexp.MustCompile(`https?://\S+/console/invitations/hinv_[A-Za-z0-9_-]+`)
