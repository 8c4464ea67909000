package oauth

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

// fakeBackend applies meta commands directly, in order.
type fakeBackend struct {
	mu  sync.Mutex
	m   *cluster.Meta
	idx uint64
}

func (f *fakeBackend) Meta() *cluster.Meta { return f.m }

func (f *fakeBackend) ProposeMeta(_ context.Context, cmd []byte) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.idx++
	return f.m.Apply(f.idx, cmd), nil
}

var (
	sharedOnce    sync.Once
	sharedBackend *fakeBackend
	sharedKey     string // API key of org_test
)

// backend returns one meta state for every test, so the RSA key is made
// once.
func backend(t *testing.T) (*fakeBackend, string) {
	t.Helper()
	sharedOnce.Do(func() {
		b := &fakeBackend{m: cluster.NewMeta()}
		raw, err := cluster.GenerateKey()
		if err != nil {
			panic(err)
		}
		k, err := cluster.NewKeyRecord(raw, "org_test", "k", time.Now())
		if err != nil {
			panic(err)
		}
		if res, _ := b.ProposeMeta(context.Background(), cluster.EncodeCreateOrg(cluster.CreateOrg{OrgID: "org_test",
			Name: "Test Org", CreatedAt: time.Now(), Key: &k})); res == nil {
			panic("no org")
		}
		if res, _ := b.ProposeMeta(context.Background(), cluster.EncodeConsoleCreateUser(cluster.ConsoleCreateUser{
			User: cluster.ConsoleUser{ID: testUser, Email: testEmail, PasswordHash: "unused",
				Orgs: []cluster.ConsoleMembership{{OrgID: "org_test", Role: cluster.ConsoleRoleOwner}}}, Now: time.Now()}),
		); res == nil {
			panic("no console user")
		} else if err, ok := res.(error); ok {
			panic(err)
		}
		sharedBackend, sharedKey = b, raw
	})
	return sharedBackend, sharedKey
}

// The person of org_test who signs in with a session in the tests.
const (
	testUser  = "usr_ada"
	testEmail = "ada@example.com"
)

// env is one authorization server on an httptest listener.
type env struct {
	t      *testing.T
	srv    *Server
	ts     *httptest.Server
	key    string
	http   *http.Client
	issuer string
	cookie string // the session cookie requests carry ("" none)
}

func newEnv(t *testing.T, hosts ...string) *env {
	t.Helper()
	return newEnvWith(t, func(*Config) {}, hosts...)
}

func newEnvWith(t *testing.T, configure func(*Config), hosts ...string) *env {
	t.Helper()
	b, key := backend(t)
	e := &env{t: t, key: key, http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
	e.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(e.ts.Close)
	e.issuer = e.ts.URL
	cfg := Config{Issuer: e.ts.URL, Resource: e.ts.URL + "/mcp", RedirectHosts: hosts}
	configure(&cfg)
	e.srv = New(cfg, b)
	return e
}

func (e *env) do(req *http.Request) (int, map[string]any, http.Header, string) {
	e.t.Helper()
	if e.cookie != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: e.cookie})
	}
	res, err := e.http.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	return res.StatusCode, m, res.Header, string(body)
}

func (e *env) postForm(path string, form url.Values, basic ...string) (int, map[string]any, http.Header, string) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if len(basic) == 2 {
		req.SetBasicAuth(basic[0], basic[1])
	}
	return e.do(req)
}

func (e *env) get(path string) (int, map[string]any, http.Header, string) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
	return e.do(req)
}

// register registers a client and returns its registration answer.
func (e *env) register(meta map[string]any) (int, map[string]any) {
	e.t.Helper()
	b, _ := json.Marshal(meta)
	req, _ := http.NewRequest("POST", e.ts.URL+"/oauth/register", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	st, m, _, _ := e.do(req)
	return st, m
}

const testRedirect = "http://127.0.0.1:7777/callback"

// client is a registered public client with a PKCE pair.
type client struct {
	id                  string
	verifier, challenge string
}

func (e *env) publicClient(grants ...string) client {
	e.t.Helper()
	meta := map[string]any{"redirect_uris": []string{testRedirect}, "client_name": "Test Agent",
		"token_endpoint_auth_method": "none"}
	if len(grants) > 0 {
		meta["grant_types"] = grants
	}
	st, m := e.register(meta)
	if st != http.StatusCreated {
		e.t.Fatalf("register: %d %v", st, m)
	}
	v := "verifier-" + strings.Repeat("x", 50)
	return client{id: m["client_id"].(string), verifier: v, challenge: s256(v)}
}

func (e *env) authParams(c client, scope string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {c.id}, "redirect_uri": {testRedirect},
		"scope": {scope}, "state": {"st-1"}, "code_challenge": {c.challenge}, "code_challenge_method": {"S256"},
		"resource": {e.ts.URL + "/mcp"}, "nonce": {"n-1"}}
}

var ticketRE = regexp.MustCompile(`name="ticket" value="([^"]+)"`)

// authorize signs in and consents; it returns the redirect's query.
func (e *env) authorize(params url.Values, decision string) url.Values {
	e.t.Helper()
	if st, _, _, body := e.get("/oauth/authorize?" + params.Encode()); st != 200 || !strings.Contains(body, "api_key") {
		e.t.Fatalf("authorize page: %d %s", st, body)
	}
	form := url.Values{"step": {"signin"}, "api_key": {e.key}}
	for k, v := range params {
		form[k] = v
	}
	st, _, _, body := e.postForm("/oauth/authorize", form)
	m := ticketRE.FindStringSubmatch(body)
	if st != 200 || m == nil {
		e.t.Fatalf("sign-in: %d %s", st, body)
	}
	st, _, h, _ := e.postForm("/oauth/authorize", url.Values{"step": {"consent"}, "ticket": {m[1]}, "decision": {decision}})
	return e.redirected(st, h)
}

func (e *env) redirected(st int, h http.Header) url.Values {
	e.t.Helper()
	if st != http.StatusFound && st != http.StatusSeeOther {
		e.t.Fatalf("status %d, want a redirect", st)
	}
	u, err := url.Parse(h.Get("Location"))
	if err != nil || !strings.HasPrefix(u.String(), testRedirect) {
		e.t.Fatalf("redirect to %q", h.Get("Location"))
	}
	return u.Query()
}

func (e *env) exchange(c client, code, verifier string) (int, map[string]any) {
	e.t.Helper()
	st, m, _, _ := e.postForm("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {testRedirect}, "code_verifier": {verifier}, "client_id": {c.id}})
	return st, m
}

func TestMetadata(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		st, m, h, _ := e.get(path)
		if st != 200 || m["issuer"] != e.issuer || m["registration_endpoint"] != e.issuer+"/oauth/register" {
			t.Errorf("%s: %d %v", path, st, m)
		}
		if pk, _ := json.Marshal(m["code_challenge_methods_supported"]); string(pk) != `["S256"]` {
			t.Errorf("%s: PKCE methods %s", path, pk)
		}
		if h.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: no CORS header", path)
		}
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		st, m, _, _ := e.get(path)
		if st != 200 || m["resource"] != e.issuer+"/mcp" || m["authorization_servers"].([]any)[0] != e.issuer {
			t.Errorf("%s: %d %v", path, st, m)
		}
	}
	if st, m, _, _ := e.get("/oauth/nothing"); st != 404 || m["code"] != "NOT_FOUND" {
		t.Errorf("unknown path: %d %v", st, m)
	}
}

// TestRegistrationRateLimit: one address registers at most maxRegistrations
// clients per window; refused registrations store nothing and do not count.
func TestRegistrationRateLimit(t *testing.T) {
	e := newEnv(t)
	for range 30 {
		if st, _ := e.register(map[string]any{"client_name": "no redirect"}); st != http.StatusBadRequest {
			t.Fatalf("invalid registration: %d", st)
		}
	}
	valid := map[string]any{"redirect_uris": []string{testRedirect}, "token_endpoint_auth_method": "none"}
	for i := range maxRegistrations {
		if st, m := e.register(valid); st != http.StatusCreated {
			t.Fatalf("registration %d of %d: %d %v", i+1, maxRegistrations, st, m)
		}
	}
	b, _ := json.Marshal(valid)
	req, _ := http.NewRequest("POST", e.ts.URL+"/oauth/register", strings.NewReader(string(b)))
	st, m, h, _ := e.do(req)
	retry, _ := strconv.Atoi(h.Get("Retry-After"))
	if st != http.StatusTooManyRequests || m["error"] != "temporarily_unavailable" || retry < 1 || retry > int(registerWindow.Seconds())+1 {
		t.Fatalf("registration over the limit: %d %v, Retry-After %q", st, m, h.Get("Retry-After"))
	}
}

// Served over https (the issuer's scheme), every answer of the
// authorization server carries Strict-Transport-Security, as the
// console's do; over http none does.
func TestHSTSOverHTTPS(t *testing.T) {
	for _, issuer := range []string{"https://hebb.example.com", ""} {
		e := newEnvWith(t, func(c *Config) {
			if issuer != "" {
				c.Issuer = issuer
			}
		})
		for _, path := range []string{"/oauth/authorize?client_id=nobody", "/.well-known/oauth-authorization-server", "/oauth/jwks"} {
			req, _ := http.NewRequest("GET", e.ts.URL+path, nil)
			_, _, h, _ := e.do(req)
			if got := h.Get("Strict-Transport-Security"); (got == "max-age=31536000") != (issuer != "") || (got != "") != (issuer != "") {
				t.Errorf("issuer %q, %s: Strict-Transport-Security %q", issuer, path, got)
			}
		}
	}
}

func TestRegistration(t *testing.T) {
	e := newEnv(t, "claude.ai", "*.example.com")
	tests := []struct {
		name     string
		meta     map[string]any
		wantCode string // "" = registered
	}{
		{"loopback ip", map[string]any{"redirect_uris": []string{"http://127.0.0.1:33418/cb"}}, ""},
		{"localhost", map[string]any{"redirect_uris": []string{"http://localhost/cb"}}, ""},
		{"ipv6 loopback", map[string]any{"redirect_uris": []string{"http://[::1]:9/cb"}}, ""},
		{"allowlisted https", map[string]any{"redirect_uris": []string{"https://claude.ai/api/mcp/auth_callback"}}, ""},
		{"wildcard", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}}, ""},
		{"wildcard is not the apex", map[string]any{"redirect_uris": []string{"https://example.com/cb"}}, "invalid_redirect_uri"},
		{"disallowed host", map[string]any{"redirect_uris": []string{"https://evil.test/cb"}}, "invalid_redirect_uri"},
		{"plain http off loopback", map[string]any{"redirect_uris": []string{"http://claude.ai/cb"}}, "invalid_redirect_uri"},
		{"javascript", map[string]any{"redirect_uris": []string{"javascript:alert(1)"}}, "invalid_redirect_uri"},
		{"fragment", map[string]any{"redirect_uris": []string{"http://127.0.0.1/cb#x"}}, "invalid_redirect_uri"},
		{"ftp on an allowed host", map[string]any{"redirect_uris": []string{"ftp://claude.ai/cb"}}, "invalid_redirect_uri"},
		{"ws on an allowed host", map[string]any{"redirect_uris": []string{"ws://claude.ai/cb"}}, "invalid_redirect_uri"},
		{"private-use scheme", map[string]any{"redirect_uris": []string{"ai.claude.app://claude.ai/cb"}}, ""},
		{"relative", map[string]any{"redirect_uris": []string{"/cb"}}, "invalid_redirect_uri"},
		{"a user name before an allowed host", map[string]any{"redirect_uris": []string{"https://evil.test@app.example.com/cb"}},
			"invalid_redirect_uri"},
		{"an empty password before an allowed host", map[string]any{"redirect_uris": []string{"https://evil.test:@claude.ai/cb"}},
			"invalid_redirect_uri"},
		{"a user name before loopback", map[string]any{"redirect_uris": []string{"http://evil.test:80@localhost/cb"}},
			"invalid_redirect_uri"},
		{"none", map[string]any{"client_name": "x"}, "invalid_redirect_uri"},
		{"bad grant", map[string]any{"redirect_uris": []string{testRedirect}, "grant_types": []string{"password"}}, "invalid_client_metadata"},
		{"bad auth method", map[string]any{"redirect_uris": []string{testRedirect}, "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, m := e.register(tt.meta)
			if tt.wantCode == "" {
				if st != http.StatusCreated || m["client_id"] == nil {
					t.Fatalf("register: %d %v", st, m)
				}
				if m["token_endpoint_auth_method"] == "client_secret_basic" && m["client_secret"] == nil {
					t.Error("confidential client without a secret")
				}
				return
			}
			if st != http.StatusBadRequest || m["error"] != tt.wantCode {
				t.Errorf("register: %d %v, want %s", st, m, tt.wantCode)
			}
		})
	}
	// RFC 8252's hostless private-use form is refused with a reason a
	// developer can act on (it read "redirect host \"\" is not allowed").
	if st, m := e.register(map[string]any{"redirect_uris": []string{"com.example.app:/oauth2redirect"}}); st != http.StatusBadRequest ||
		!strings.Contains(fmt.Sprint(m["error_description"]), "names no host") {
		t.Errorf("hostless private-use redirect: %d %v", st, m)
	}
	// A body over the limit says so instead of that it is not JSON.
	uris := make([]string, 3000)
	for i := range uris {
		uris[i] = fmt.Sprintf("http://127.0.0.1:1/cb%d", i)
	}
	st, m := e.register(map[string]any{"redirect_uris": uris})
	if st != http.StatusRequestEntityTooLarge || m["error"] != "invalid_client_metadata" ||
		!strings.Contains(fmt.Sprint(m["error_description"]), "exceeds") {
		t.Errorf("register of a large body: %d %v", st, m)
	}
}

func TestAuthorizeErrors(t *testing.T) {
	e := newEnv(t)
	c := e.publicClient()
	t.Run("unknown client is a page", func(t *testing.T) {
		p := e.authParams(c, "memory:read")
		p.Set("client_id", "hcl_nobody")
		if st, _, _, body := e.get("/oauth/authorize?" + p.Encode()); st != 400 || !strings.Contains(body, "Unknown client") {
			t.Errorf("%d %s", st, body)
		}
	})
	t.Run("unregistered redirect is a page", func(t *testing.T) {
		p := e.authParams(c, "memory:read")
		p.Set("redirect_uri", "https://evil.test/cb")
		if st, _, h, _ := e.get("/oauth/authorize?" + p.Encode()); st != 400 || h.Get("Location") != "" {
			t.Errorf("%d, Location %q", st, h.Get("Location"))
		}
	})
	for _, uri := range []string{"http://127.0.0.1:1234/callback#x", "http://127.0.0.1:1234/callback#", "http://u:p@127.0.0.1:1234/callback"} {
		t.Run("loopback redirect with a fragment or userinfo is a page: "+uri, func(t *testing.T) {
			p := e.authParams(c, "memory:read")
			p.Set("redirect_uri", uri)
			if st, _, h, _ := e.get("/oauth/authorize?" + p.Encode()); st != 400 || h.Get("Location") != "" {
				t.Errorf("%d, Location %q", st, h.Get("Location"))
			}
		})
	}
	t.Run("loopback redirect on another port matches", func(t *testing.T) {
		p := e.authParams(c, "memory:read")
		p.Set("redirect_uri", "http://127.0.0.1:1234/callback")
		if st, _, _, _ := e.get("/oauth/authorize?" + p.Encode()); st != 200 {
			t.Errorf("status %d", st)
		}
	})
	redirected := []struct {
		name  string
		mod   func(url.Values)
		error string
	}{
		{"no PKCE", func(p url.Values) { p.Del("code_challenge") }, "invalid_request"},
		{"plain PKCE", func(p url.Values) { p.Set("code_challenge_method", "plain") }, "invalid_request"},
		{"token response type", func(p url.Values) { p.Set("response_type", "token") }, "unsupported_response_type"},
		{"unknown scope", func(p url.Values) { p.Set("scope", "memory:read admin") }, "invalid_scope"},
		{"other resource", func(p url.Values) { p.Set("resource", "https://other.test/mcp") }, "invalid_target"},
		// OpenID Connect Core §3.1.2.1: no page may be shown.
		{"prompt none, signed out", func(p url.Values) { p.Set("prompt", "none") }, "login_required"},
		{"prompt none with another value", func(p url.Values) { p.Set("prompt", "none consent") }, "invalid_request"},
		// RFC 6749 §3.1: the first of two values won.
		{"repeated state", func(p url.Values) { p.Add("state", "st-2") }, "invalid_request"},
		{"repeated challenge method", func(p url.Values) { p.Add("code_challenge_method", "plain") }, "invalid_request"},
	}
	for _, tt := range redirected {
		t.Run(tt.name, func(t *testing.T) {
			p := e.authParams(c, "memory:read")
			tt.mod(p)
			st, _, h, _ := e.get("/oauth/authorize?" + p.Encode())
			q := e.redirected(st, h)
			if q.Get("error") != tt.error || q.Get("state") != "st-1" || q.Get("iss") != e.issuer {
				t.Errorf("redirect query %v, want error %s", q, tt.error)
			}
		})
	}
	t.Run("repeated client_id is a page", func(t *testing.T) {
		p := e.authParams(c, "memory:read")
		p.Add("client_id", c.id)
		if st, _, h, _ := e.get("/oauth/authorize?" + p.Encode()); st != 400 || h.Get("Location") != "" {
			t.Errorf("%d, Location %q", st, h.Get("Location"))
		}
	})
	t.Run("wrong API key", func(t *testing.T) {
		form := e.authParams(c, "memory:read")
		form.Set("step", "signin")
		form.Set("api_key", "mk_live_"+strings.Repeat("A", 40))
		if st, _, _, body := e.postForm("/oauth/authorize", form); st != 401 || !strings.Contains(body, "not valid") {
			t.Errorf("%d %s", st, body)
		}
	})
	t.Run("forged ticket", func(t *testing.T) {
		st, _, _, body := e.postForm("/oauth/authorize", url.Values{"step": {"consent"}, "ticket": {"eyJ9.AAAA"}, "decision": {"allow"}})
		if st != 400 || !strings.Contains(body, "expired or is not valid") {
			t.Errorf("%d %s", st, body)
		}
	})
	t.Run("deny", func(t *testing.T) {
		q := e.authorize(e.authParams(c, "memory:read"), "deny")
		if q.Get("error") != "access_denied" || q.Get("code") != "" {
			t.Errorf("redirect query %v", q)
		}
	})
}

func TestTokenFlow(t *testing.T) {
	e := newEnv(t)
	c := e.publicClient("authorization_code", "refresh_token")
	q := e.authorize(e.authParams(c, "openid profile memory:read offline_access"), "allow")
	code := q.Get("code")
	if code == "" || q.Get("state") != "st-1" || q.Get("iss") != e.issuer {
		t.Fatalf("redirect query %v", q)
	}
	if st, m := e.exchange(c, code, "wrong-verifier-"+strings.Repeat("y", 40)); st != 400 || m["error"] != "invalid_grant" {
		t.Fatalf("wrong verifier: %d %v", st, m)
	}
	st, tok := e.exchange(c, code, c.verifier)
	if st != 200 || tok["token_type"] != "Bearer" || tok["refresh_token"] == nil || tok["id_token"] == nil {
		t.Fatalf("exchange: %d %v", st, tok)
	}
	access := tok["access_token"].(string)
	g, err := e.srv.Verify(context.Background(), access)
	if err != nil || g.OrgID != "org_test" || g.ClientName != "Test Agent" || len(g.Scopes) != 4 {
		t.Fatalf("Verify = %+v, %v", g, err)
	}
	e.checkIDToken(tok["id_token"].(string), c.id, "org_test")

	t.Run("userinfo", func(t *testing.T) {
		req, _ := http.NewRequest("GET", e.ts.URL+"/oauth/userinfo", nil)
		req.Header.Set("Authorization", "Bearer "+access)
		if st, m, _, _ := e.do(req); st != 200 || m["sub"] != "org_test" || m["name"] != "Test Org" {
			t.Errorf("userinfo: %d %v", st, m)
		}
		// No token: a challenge without an error code (RFC 6750 §3.1).
		req, _ = http.NewRequest("GET", e.ts.URL+"/oauth/userinfo", nil)
		if st, _, h, _ := e.do(req); st != 401 || h.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("userinfo without a token: %d %q", st, h.Get("WWW-Authenticate"))
		}
	})
	t.Run("redirect_uri at the token endpoint after the request left it out", func(t *testing.T) {
		// OAuth 2.1 §4.1.3: sending the client's only redirect URI is no
		// mismatch (it was refused with invalid_grant).
		p := e.authParams(c, "memory:read")
		p.Del("redirect_uri")
		q := e.authorize(p, "allow")
		if st, m := e.exchange(c, q.Get("code"), c.verifier); st != 200 || m["access_token"] == nil {
			t.Errorf("exchange: %d %v", st, m)
		}
	})
	t.Run("refresh rotates, reuse revokes", func(t *testing.T) {
		refresh := tok["refresh_token"].(string)
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {c.id}}
		st, next, _, _ := e.postForm("/oauth/token", form)
		if st != 200 || next["refresh_token"] == refresh || next["access_token"] == nil {
			t.Fatalf("refresh: %d %v", st, next)
		}
		if st, m, _, _ := e.postForm("/oauth/token", form); st != 400 || m["error"] != "invalid_grant" {
			t.Fatalf("reused refresh: %d %v", st, m)
		}
		if _, err := e.srv.Verify(context.Background(), next["access_token"].(string)); err == nil {
			t.Error("refresh-token reuse left the family's access token valid")
		}
	})
	t.Run("reused code", func(t *testing.T) {
		if st, m := e.exchange(c, code, c.verifier); st != 400 || m["error"] != "invalid_grant" {
			t.Errorf("reused code: %d %v", st, m)
		}
	})
}

// checkIDToken verifies an id_token's RS256 signature against the JWKS and
// its claims, and returns them.
func (e *env) checkIDToken(tok, clientID, sub string) map[string]any {
	e.t.Helper()
	_, jwks, _, _ := e.get("/oauth/jwks")
	k := jwks["keys"].([]any)[0].(map[string]any)
	n, _ := b64.DecodeString(k["n"].(string))
	ev, _ := b64.DecodeString(k["e"].(string))
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(ev).Int64())}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		e.t.Fatalf("id_token %q", tok)
	}
	sig, _ := b64.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		e.t.Fatalf("id_token signature: %v", err)
	}
	body, _ := b64.DecodeString(parts[1])
	var claims map[string]any
	_ = json.Unmarshal(body, &claims)
	if claims["iss"] != e.issuer || claims["sub"] != sub || claims["aud"] != clientID || claims["nonce"] != "n-1" ||
		claims["name"] != "Test Org" {
		e.t.Errorf("id_token claims %v", claims)
	}
	return claims
}

func TestTokenErrors(t *testing.T) {
	e := newEnv(t)
	pub := e.publicClient("authorization_code")
	st, conf := e.register(map[string]any{"redirect_uris": []string{testRedirect}, "client_name": "Confidential"})
	if st != 201 {
		t.Fatalf("register: %d %v", st, conf)
	}
	confID, confSecret := conf["client_id"].(string), conf["client_secret"].(string)
	tests := []struct {
		name   string
		form   url.Values
		basic  []string
		status int
		error  string
	}{
		{"unknown client", url.Values{"grant_type": {"authorization_code"}, "client_id": {"hcl_x"}}, nil, 401, "invalid_client"},
		{"confidential without secret", url.Values{"grant_type": {"authorization_code"}, "client_id": {confID}}, nil, 401, "invalid_client"},
		{"wrong secret", url.Values{"grant_type": {"authorization_code"}}, []string{confID, "hcs_wrong"}, 401, "invalid_client"},
		{"right secret, no code", url.Values{"grant_type": {"authorization_code"}}, []string{confID, confSecret}, 400, "invalid_request"},
		{"unsupported grant", url.Values{"grant_type": {"password"}, "client_id": {pub.id}}, nil, 400, "unsupported_grant_type"},
		{"refresh not registered", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"hrt_x"}, "client_id": {pub.id}}, nil, 400, "unauthorized_client"},
		{"unknown code", url.Values{"grant_type": {"authorization_code"}, "code": {"hac_x"}, "code_verifier": {pub.verifier},
			"client_id": {pub.id}}, nil, 400, "invalid_grant"},
		{"short verifier", url.Values{"grant_type": {"authorization_code"}, "code": {"hac_x"}, "code_verifier": {"a"},
			"client_id": {pub.id}}, nil, 400, "invalid_request"},
		{"verifier with a space", url.Values{"grant_type": {"authorization_code"}, "code": {"hac_x"},
			"code_verifier": {strings.Repeat("a", 42) + " "}, "client_id": {pub.id}}, nil, 400, "invalid_request"},
		{"other resource", url.Values{"grant_type": {"authorization_code"}, "code": {"hac_x"}, "code_verifier": {pub.verifier},
			"client_id": {pub.id}, "resource": {"https://evil.test/mcp"}}, nil, 400, "invalid_target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, m, _, _ := e.postForm("/oauth/token", tt.form, tt.basic...)
			if st != tt.status || m["error"] != tt.error {
				t.Errorf("%d %v, want %d %s", st, m, tt.status, tt.error)
			}
		})
	}
	t.Run("scope without offline_access gets no refresh token", func(t *testing.T) {
		q := e.authorize(e.authParams(pub, "memory:read"), "allow")
		// The connector's own resource may be named (RFC 8707), with or without its slash.
		st, tok, _, _ := e.postForm("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")},
			"redirect_uri": {testRedirect}, "code_verifier": {pub.verifier}, "client_id": {pub.id}, "resource": {e.ts.URL + "/mcp/"}})
		if st != 200 || tok["refresh_token"] != nil || tok["id_token"] != nil || tok["scope"] != "memory:read" {
			t.Errorf("exchange: %d %v", st, tok)
		}
		// Another client cannot revoke it (RFC 7009 refuses the request).
		other := e.publicClient("authorization_code")
		if st, m, _, _ := e.postForm("/oauth/revoke", url.Values{"token": {tok["access_token"].(string)}, "client_id": {other.id}}); st != 400 || m["error"] != "unauthorized_client" {
			t.Errorf("revoke by another client: %d %v", st, m)
		}
		if _, err := e.srv.Verify(context.Background(), tok["access_token"].(string)); err != nil {
			t.Errorf("another client's revocation took effect: %v", err)
		}
		// An unknown token answers 200, as the RFC asks.
		if st, _, _, _ := e.postForm("/oauth/revoke", url.Values{"token": {"hat_nosuchtoken"}, "client_id": {pub.id}}); st != 200 {
			t.Errorf("revoke of an unknown token: %d", st)
		}
		// Revocation (RFC 7009) ends the grant.
		if st, _, _, _ := e.postForm("/oauth/revoke", url.Values{"token": {tok["access_token"].(string)}, "client_id": {pub.id}}); st != 200 {
			t.Errorf("revoke: %d", st)
		}
		if _, err := e.srv.Verify(context.Background(), tok["access_token"].(string)); err == nil {
			t.Error("revoked token still valid")
		}
	})
}
