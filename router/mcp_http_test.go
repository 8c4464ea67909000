package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

const mcpRedirect = "http://127.0.0.1:47601/callback"

var (
	mcpHiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
	mcpTicketRE = regexp.MustCompile(`name="ticket" value="([^"]+)"`)
	mcpCSRFRE   = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// consoleLook is in every page rendered in the console's layout.
const consoleLook = `href="/console/static/console.css`

// oauthBrowser is a person's browser: it keeps cookies and shows redirects
// instead of following them.
type oauthBrowser struct {
	http    *http.Client
	consent string // the last consent page it was shown
}

func newOAuthBrowser() *oauthBrowser {
	jar, _ := cookiejar.New(nil)
	return &oauthBrowser{http: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// shownPage is one answer the browser was shown.
type shownPage struct {
	status   int
	location string
	body     string
}

func (b *oauthBrowser) send(req *http.Request) (shownPage, error) {
	res, err := b.http.Do(req)
	if err != nil {
		return shownPage{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return shownPage{status: res.StatusCode, location: res.Header.Get("Location"), body: string(body)}, err
}

func (b *oauthBrowser) get(u string) (shownPage, error) {
	req, _ := http.NewRequest("GET", u, nil)
	return b.send(req)
}

func (b *oauthBrowser) post(u string, form url.Values) (shownPage, error) {
	req, _ := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.send(req)
}

// signInFunc signs the person in from the console's sign-in page at
// signInURL (which returns to the authorization URL authURL) and returns
// the page shown afterwards.
type signInFunc func(b *oauthBrowser, authURL, signInURL string) (shownPage, error)

// withKey takes the API-key fallback of the authorization step and signs
// in with key.
func withKey(key string) signInFunc {
	return func(b *oauthBrowser, authURL, _ string) (shownPage, error) {
		p, err := b.get(authURL + "&signin=key")
		if err != nil || p.status != 200 || !strings.Contains(p.body, consoleLook) || !strings.Contains(p.body, "Use an API key instead") {
			return p, fmt.Errorf("key sign-in page: %v %d %s", err, p.status, p.body)
		}
		form := url.Values{"api_key": {key}}
		for _, m := range mcpHiddenRE.FindAllStringSubmatch(p.body, -1) {
			form.Set(m[1], html.UnescapeString(m[2]))
		}
		return b.post(strings.SplitN(authURL, "?", 2)[0], form)
	}
}

// withPassword signs in to the console with e-mail and password and
// follows the console back to the authorization URL.
func withPassword(email, password string) signInFunc {
	return func(b *oauthBrowser, authURL, signInURL string) (shownPage, error) {
		p, err := b.get(signInURL)
		m := mcpCSRFRE.FindStringSubmatch(p.body)
		if err != nil || p.status != 200 || m == nil {
			return p, fmt.Errorf("console sign-in page: %v %d %s", err, p.status, p.body)
		}
		u, _ := url.Parse(signInURL)
		p, err = b.post(u.String(), url.Values{"csrf": {m[1]}, "email": {email}, "password": {password},
			"next": {u.Query().Get("next")}})
		if err != nil || p.status != http.StatusSeeOther {
			return p, fmt.Errorf("console sign-in: %v %d %s", err, p.status, p.body)
		}
		back, _ := u.Parse(p.location)
		if back.String() != authURL {
			return p, fmt.Errorf("console sign-in returned to %q, want %q", back, authURL)
		}
		return b.get(back.String())
	}
}

// authorize plays the person in the browser: it opens the authorization
// URL, signs in with signIn when sent to the console's sign-in, approves on
// the consent page and returns the redirect's query.
func (b *oauthBrowser) authorize(authURL string, signIn signInFunc) (url.Values, error) {
	p, err := b.get(authURL)
	if err != nil {
		return nil, err
	}
	if p.status == http.StatusFound {
		u, _ := url.Parse(authURL)
		to, _ := u.Parse(p.location)
		if to.Path != "/console/signin" || to.Query().Get("next") != u.RequestURI() {
			return nil, fmt.Errorf("authorize sent the browser to %q", p.location)
		}
		if p, err = signIn(b, authURL, to.String()); err != nil {
			return nil, err
		}
	}
	m := mcpTicketRE.FindStringSubmatch(p.body)
	if p.status != 200 || m == nil || !strings.Contains(p.body, consoleLook) {
		return nil, fmt.Errorf("consent page: %d %s", p.status, p.body)
	}
	b.consent = p.body
	p, err = b.post(strings.SplitN(authURL, "?", 2)[0], url.Values{"step": {"consent"}, "ticket": {m[1]}, "decision": {"allow"}})
	if err != nil {
		return nil, err
	}
	loc, err := url.Parse(p.location)
	if err != nil || p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, mcpRedirect) {
		return nil, fmt.Errorf("consent: %d %q %s", p.status, p.location, p.body)
	}
	return loc.Query(), nil
}

// signInAndConsent authorizes in a new browser with key.
func signInAndConsent(authURL, key string) (url.Values, error) {
	return newOAuthBrowser().authorize(authURL, withKey(key))
}

// recordingSource is the client's token source: it records every token and
// can be told to refresh before the access token expires.
type recordingSource struct {
	mu      sync.Mutex
	ctx     context.Context
	cfg     *oauth2.Config
	current *oauth2.Token
	tokens  []*oauth2.Token
	stale   bool
}

func (r *recordingSource) Token() (*oauth2.Token, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stale {
		t, err := r.cfg.TokenSource(r.ctx, &oauth2.Token{RefreshToken: r.current.RefreshToken}).Token()
		if err != nil {
			return nil, err
		}
		r.current, r.stale = t, false
		r.tokens = append(r.tokens, t)
	}
	return r.current, nil
}

func (r *recordingSource) expire() { r.mu.Lock(); r.stale = true; r.mu.Unlock() }

func (r *recordingSource) all() []*oauth2.Token {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*oauth2.Token(nil), r.tokens...)
}

// mcpOAuthClient connects the go-sdk client to the connector with the
// whole OAuth chain: 401, discovery, registration, PKCE authorization (the
// person in browser b signs in with signIn and approves), token.
func mcpOAuthClient(t *testing.T, baseURL string, b *oauthBrowser, signIn signInFunc) (*mcp.ClientSession, *recordingSource) {
	t.Helper()
	src := &recordingSource{}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{mcpRedirect}, ClientName: "Test Agent", TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}}},
		RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(_ context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			q, err := b.authorize(args.URL, signIn)
			if err != nil {
				return nil, err
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
		NewTokenSource: func(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			src.mu.Lock()
			src.ctx, src.cfg, src.current, src.tokens = ctx, cfg, tok, append(src.tokens, tok)
			src.mu.Unlock()
			return src, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	transport := &mcp.StreamableClientTransport{Endpoint: baseURL + "/mcp", OAuthHandler: h, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatalf("connect through OAuth: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, src
}

// mcpTool calls a tool and returns its structured content; a tool error
// fails the test.
func mcpTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	if res.IsError {
		t.Fatalf("%s: tool error %s", name, b)
	}
	return out
}

// mcpRaw posts one JSON-RPC message to /mcp with a bearer token.
func mcpRaw(t *testing.T, baseURL, token, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", baseURL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := testHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, res.Header, m
}

const listTools = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

func TestMCPRemoteOAuthChain(t *testing.T) {
	ts := newTestServer(t)

	st, h, body := mcpRaw(t, ts.URL, "", listTools)
	wantChallenge := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource"`, ts.URL)
	if st != 401 || h.Get("WWW-Authenticate") != wantChallenge || body["code"] != "UNAUTHORIZED" {
		t.Fatalf("unauthenticated POST: %d %q %v", st, h.Get("WWW-Authenticate"), body)
	}
	if r := ts.do("GET", "/mcp", "", nil); r.Status != 404 {
		t.Errorf("GET /mcp: %d", r.Status)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/openid-configuration"} {
		res, err := testHTTP.Get(ts.URL + path)
		if err != nil || res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %v %v", path, err, res)
		}
		if res != nil {
			_ = res.Body.Close()
		}
	}

	b := newOAuthBrowser()
	cs, src := mcpOAuthClient(t, ts.URL, b, withKey(ts.Key))
	if !strings.Contains(b.consent, "with its API key") || !strings.Contains(b.consent, ts.OrgID) {
		t.Errorf("consent page after the key sign-in:\n%s", b.consent)
	}
	w := mcpTool(t, cs, "memory_write", map[string]any{"content": "The deploy window is Tuesday 14:00 UTC", "domain": "ops"})
	id, _ := w["atom_id"].(string)
	if w["stored"] != true || id == "" {
		t.Fatalf("memory_write: %v", w)
	}
	// The token's account is the API key's: REST sees the atom.
	if r := ts.do("GET", "/memory/atoms/"+id, ts.Key, nil); r.Status != 200 || r.Body["domain"] != "ops" {
		t.Errorf("REST lookup of the tool's atom: %d %v", r.Status, r.Body)
	}
	if r := mcpTool(t, cs, "memory_read", map[string]any{"query": "deploy window Tuesday", "domain": "ops"}); !containsAtom(r["items"], id) {
		t.Errorf("memory_read: %v", r)
	}

	src.expire() // the next call refreshes (rotation)
	if r := mcpTool(t, cs, "memory_list_recent", map[string]any{"domain": "ops"}); !containsAtom(r["items"], id) {
		t.Errorf("memory_list_recent after refresh: %v", r)
	}
	toks := src.all()
	if len(toks) != 2 || toks[1].AccessToken == toks[0].AccessToken || toks[1].RefreshToken == toks[0].RefreshToken {
		t.Fatalf("want a rotated pair after refresh, got %d tokens", len(toks))
	}
	_ = cs.Close()

	// Revocation: the live access token is rejected afterwards.
	latest := toks[1]
	if st, _, _ := mcpRaw(t, ts.URL, latest.AccessToken, listTools); st != 200 {
		t.Fatalf("live token: %d", st)
	}
	res, err := testHTTP.PostForm(ts.URL+"/oauth/revoke", url.Values{"token": {latest.RefreshToken},
		"client_id": {src.cfg.ClientID}})
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("revoke: %v %v", err, res)
	}
	_ = res.Body.Close()
	for i, tok := range toks {
		st, h, _ := mcpRaw(t, ts.URL, tok.AccessToken, listTools)
		if st != 401 || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("token %d after revocation: %d %q", i, st, h.Get("WWW-Authenticate"))
		}
	}
}

// TestMCPRemoteConsoleSession: a person with a console user authorizes
// the connector without any API key — sent to the console's sign-in and
// back, approving on the console-styled consent page — and the tokens
// reach the org of the session.
func TestMCPRemoteConsoleSession(t *testing.T) {
	ts := newTestServer(t)
	org, orgKey := ts.newOrg("Ada Labs")
	const email, password = "ada@example.com", "correct horse battery"
	mustStatus(t, ts.admin("POST", "/admin/v1/users", map[string]any{"email": email, "password": password, "org_id": org}), 200)

	b := newOAuthBrowser()
	cs, _ := mcpOAuthClient(t, ts.URL, b, withPassword(email, password))
	for _, want := range []string{email, "Ada Labs (" + org + ")", "Allow Test Agent?", "(memory:write)", ">Approve<",
		">Deny<", "signin=key"} {
		if !strings.Contains(b.consent, want) {
			t.Errorf("consent page lacks %q:\n%s", want, b.consent)
		}
	}
	w := mcpTool(t, cs, "memory_write", map[string]any{"content": "Ada prefers tabs over spaces", "domain": "prefs"})
	id, _ := w["atom_id"].(string)
	if w["stored"] != true || id == "" {
		t.Fatalf("memory_write: %v", w)
	}
	if r := ts.do("GET", "/memory/atoms/"+id, orgKey, nil); r.Status != 200 {
		t.Errorf("the session's org does not see the tool's atom: %d %s", r.Status, r.Raw)
	}
	if r := ts.do("GET", "/memory/atoms/"+id, ts.Key, nil); r.Status != 404 {
		t.Errorf("another org sees the tool's atom: %d", r.Status)
	}

	// Signed in already: the next authorization goes straight to consent.
	authURL, clientID, verifier := rawAuthURL(t, ts, "memory:read memory:write offline_access")
	q, err := b.authorize(authURL, func(*oauthBrowser, string, string) (shownPage, error) {
		return shownPage{}, errors.New("sent to sign in again")
	})
	if err != nil || q.Get("code") == "" {
		t.Fatalf("second authorization: %v %v", err, q)
	}
	token := func(form url.Values) map[string]any {
		t.Helper()
		form.Set("client_id", clientID)
		res, err := testHTTP.PostForm(ts.URL+"/oauth/token", form)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		if res.StatusCode != 200 {
			t.Fatalf("token: %d %v", res.StatusCode, out)
		}
		return out
	}
	tok := token(url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {mcpRedirect},
		"code_verifier": {verifier}})
	if !strings.Contains(str(tok["scope"]), "memory:write") {
		t.Fatalf("an owner's token: %v", tok)
	}
	// Made a member, the person's next token holds no memory:write, and
	// the answer says so (RFC 6749 §5.1; it still listed memory:write).
	mustStatus(t, ts.admin("POST", "/admin/v1/users", map[string]any{"email": email, "password": password, "org_id": org,
		"role": "member"}), 200)
	next := token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {str(tok["refresh_token"])}})
	if strings.Contains(str(next["scope"]), "memory:write") || !strings.Contains(str(next["scope"]), "memory:read") {
		t.Fatalf("a member's refreshed token: scope %q", next["scope"])
	}
}

func containsAtom(items any, id string) bool {
	l, _ := items.([]any)
	for _, it := range l {
		if m, _ := it.(map[string]any); m["atom_id"] == id {
			return true
		}
	}
	return false
}

// rawAuthURL registers a public client by hand and returns the
// authorization URL of a request for scope, the client and the PKCE
// verifier.
func rawAuthURL(t *testing.T, ts *testServer, scope string) (authURL, clientID, verifier string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"redirect_uris": []string{mcpRedirect}, "client_name": "Raw",
		"token_endpoint_auth_method": "none"})
	res, err := testHTTP.Post(ts.URL+"/oauth/register", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	_ = json.NewDecoder(res.Body).Decode(&reg)
	_ = res.Body.Close()
	clientID, verifier = str(reg["client_id"]), oauth2.GenerateVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {mcpRedirect},
		"scope": {scope}, "state": {"s"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)},
		"code_challenge_method": {"S256"}}
	return ts.URL + "/oauth/authorize?" + q.Encode(), clientID, verifier
}

// oauthToken runs the authorization code flow by hand for scope, signing
// in with the API key, and returns the token response.
func oauthToken(t *testing.T, ts *testServer, scope string) map[string]any {
	t.Helper()
	tok, st, _ := oauthTokenWith(t, ts, ts.Key, scope, nil)
	if st != 200 {
		t.Fatalf("token: %d %v", st, tok)
	}
	return tok
}

// oauthTokenWith signs in with key, consents to scope, runs between (when
// not nil) and redeems the code: the token answer, its status and the
// client's ID.
func oauthTokenWith(t *testing.T, ts *testServer, key, scope string, between func()) (map[string]any, int, string) {
	t.Helper()
	authURL, clientID, verifier := rawAuthURL(t, ts, scope)
	back, err := signInAndConsent(authURL, key)
	if err != nil {
		t.Fatal(err)
	}
	if between != nil {
		between()
	}
	tok, st := tokenPost(t, ts, url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")},
		"redirect_uri": {mcpRedirect}, "code_verifier": {verifier}, "client_id": {clientID}})
	return tok, st, clientID
}

func tokenPost(t *testing.T, ts *testServer, form url.Values) (map[string]any, int) {
	t.Helper()
	res, err := testHTTP.PostForm(ts.URL+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tok map[string]any
	_ = json.NewDecoder(res.Body).Decode(&tok)
	return tok, res.StatusCode
}

// A grant made by signing in with an API key ends with the key: its access
// token, its refresh token and a code not yet redeemed.
func TestMCPGrantEndsWithItsKey(t *testing.T) {
	ts := newTestServer(t)
	orgID, _ := ts.newOrg("keyed")
	newKey := func() (key, id string) {
		r := ts.admin("POST", "/admin/v1/orgs/"+orgID+"/keys", nil)
		mustStatus(t, r, 200)
		return str(r.Body["api_key"]), str(r.Body["key_id"])
	}
	key, kid := newKey()
	tok, st, clientID := oauthTokenWith(t, ts, key, "memory:read offline_access", nil)
	if st != 200 {
		t.Fatalf("token: %d %v", st, tok)
	}
	access, refresh := str(tok["access_token"]), str(tok["refresh_token"])
	if st, _, body := mcpRaw(t, ts.URL, access, toolCall("memory_stats", `{}`)); st != 200 {
		t.Fatalf("before the revocation: %d %v", st, body)
	}
	other, _ := newKey() // a grant of another key of the org stays
	kept, st, _ := oauthTokenWith(t, ts, other, "memory:read", nil)
	if st != 200 {
		t.Fatalf("token: %d %v", st, kept)
	}
	mustStatus(t, ts.admin("DELETE", "/admin/v1/keys/"+kid, nil), 200)
	if st, _, body := mcpRaw(t, ts.URL, access, toolCall("memory_stats", `{}`)); st != 401 {
		t.Errorf("access token after its key's revocation: %d %v", st, body)
	}
	if ans, st := tokenPost(t, ts, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh},
		"client_id": {clientID}}); st != 400 || ans["error"] != "invalid_grant" {
		t.Errorf("refresh after the key's revocation: %d %v", st, ans)
	}
	if st, _, body := mcpRaw(t, ts.URL, str(kept["access_token"]), toolCall("memory_stats", `{}`)); st != 200 {
		t.Errorf("another key's grant: %d %v", st, body)
	}
	late, lateID := newKey()
	ans, st, _ := oauthTokenWith(t, ts, late, "memory:read", func() {
		mustStatus(t, ts.admin("DELETE", "/admin/v1/keys/"+lateID, nil), 200)
	})
	if st != 400 || ans["error"] != "invalid_grant" {
		t.Errorf("a code redeemed after its key's revocation: %d %v", st, ans)
	}
}

func toolCall(name string, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, args)
}

func TestMCPRemoteScopesAndKeys(t *testing.T) {
	ts := newTestServer(t)
	readOnly := oauthToken(t, ts, "memory:read")["access_token"].(string)

	st, h, body := mcpRaw(t, ts.URL, readOnly, toolCall("memory_write", `{"content":"x"}`))
	if st != 403 || !strings.Contains(h.Get("WWW-Authenticate"), `error="insufficient_scope", scope="memory:write"`) ||
		obj(body["details"])["reason"] != "insufficient_scope" {
		t.Errorf("write with a read-only token: %d %q %v", st, h.Get("WWW-Authenticate"), body)
	}
	// The SDK reads "name" as written; a "Name" after it does not hide the
	// write from the scope check (encoding/json matched it to a field
	// without regard to case, and the last one won).
	disguised := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_write","Name":"memory_read","arguments":{"content":"x"}}}`
	if st, _, body := mcpRaw(t, ts.URL, readOnly, disguised); st != 403 || obj(body["details"])["reason"] != "insufficient_scope" {
		t.Errorf("a write named twice with a read-only token: %d %v", st, body)
	}
	st, _, body = mcpRaw(t, ts.URL, readOnly, toolCall("memory_stats", `{}`))
	if result := obj(body["result"]); st != 200 || result["isError"] == true || obj(result["structuredContent"])["total_atoms"] == nil {
		t.Errorf("read with a read-only token: %d %v", st, body)
	}
	for _, bad := range []string{"hat_not-a-token", "mk_live_" + strings.Repeat("Z", 30)} {
		st, h, body := mcpRaw(t, ts.URL, bad, listTools)
		if st != 401 || !strings.Contains(h.Get("WWW-Authenticate"), `resource_metadata=`) || body["code"] != "UNAUTHORIZED" {
			t.Errorf("credential %.12s: %d %q %v", bad, st, h.Get("WWW-Authenticate"), body)
		}
	}

	// An API key is accepted as well and reaches the same account.
	st, _, body = mcpRaw(t, ts.URL, ts.Key, toolCall("memory_write", `{"content":"Written with the API key over /mcp"}`))
	id := str(obj(obj(body["result"])["structuredContent"])["atom_id"])
	if st != 200 || id == "" {
		t.Fatalf("write with the API key: %d %v", st, body)
	}
	if r := ts.do("GET", "/memory/atoms/"+id, ts.Key, nil); r.Status != 200 {
		t.Errorf("REST lookup: %d", r.Status)
	}
	// Messages that are not JSON-RPC 2.0 get a JSON-RPC error, not the
	// SDK's plain text echoing them, and an id only as the SDK keeps it.
	for body, want := range map[string]struct {
		code float64
		id   any
	}{
		`{bad`: {-32700, nil}, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`: {-32600, nil},
		`{"jsonrpc":"2.0","id":7}`: {-32600, 7.0}, `{"jsonrpc":"1.0","id":"a","method":"ping"}`: {-32600, "a"},
		`"ping"`: {-32600, nil}, `[]`: {-32600, nil}, `[1]`: {-32600, nil},
		// Refused by the SDK in plain text: answered in JSON-RPC too.
		`{"jsonrpc":"2.0","id":3,"method":"nope"}`:       {-32601, 3.0},
		`{"jsonrpc":"2.0","id":4,"method":"tools/call"}`: {-32602, 4.0},
	} {
		st, h, got := mcpRaw(t, ts.URL, ts.Key, body)
		if st != 400 || h.Get("Content-Type") != "application/json" || got["jsonrpc"] != "2.0" ||
			got["id"] != want.id || obj(got["error"])["code"] != want.code {
			t.Errorf("%s: %d %q %v", body, st, h.Get("Content-Type"), got)
		}
	}
	// Params the SDK cannot decode: its own words (Go types, the input
	// echoed, code 0 on initialize) become the neutral -32602 hebb mcp
	// answers on stdio.
	for _, body := range []string{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"x"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[1]}`} {
		_, _, got := mcpRaw(t, ts.URL, ts.Key, body)
		e := obj(got["error"])
		if text := fmt.Sprint(e); e["code"] != -32602.0 || strings.Contains(text, "mcp.") || strings.Contains(text, "unmarshal") {
			t.Errorf("%s: %v", body, got)
		}
	}
	// The SDK's other plain-text refusals (415 for a body not sent as JSON,
	// 406 for an Accept without both types) are answered in JSON-RPC too.
	for name, hdr := range map[string][2]string{
		"no Content-Type":  {"", "application/json, text/event-stream"},
		"text/plain body":  {"text/plain", "application/json, text/event-stream"},
		"Accept text/html": {"application/json", "text/html"},
	} {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(listTools))
		if hdr[0] != "" {
			req.Header.Set("Content-Type", hdr[0])
		}
		req.Header.Set("Accept", hdr[1])
		req.Header.Set("Authorization", "Bearer "+ts.Key)
		res, err := testHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		_ = json.NewDecoder(res.Body).Decode(&got)
		_ = res.Body.Close()
		if res.StatusCode < 400 || res.Header.Get("Content-Type") != "application/json" || got["jsonrpc"] != "2.0" ||
			got["id"] != 1.0 || obj(got["error"])["code"] != -32600.0 {
			t.Errorf("%s: %d %q %v", name, res.StatusCode, res.Header.Get("Content-Type"), got)
		}
	}
	// A REST error reaches the tool with its code and message.
	st, _, body = mcpRaw(t, ts.URL, ts.Key, toolCall("memory_read", `{"query":"x","top_k":501}`))
	result := obj(body["result"])
	if env := obj(result["structuredContent"]); st != 200 || result["isError"] != true || env["code"] != "VALIDATION_ERROR" ||
		env["message"] != "Request validation failed" {
		t.Errorf("out-of-bounds read: %d %v", st, body)
	}
}

// TestInternalOrgHeader: the header that carries an in-process org between
// nodes authenticates nothing when a client sends it, and only ServeRaw
// (the node transport) honours it.
func TestInternalOrgHeader(t *testing.T) {
	ts := newTestServer(t)
	r := ts.doH("GET", "/memory/stats", http.Header{"X-Hebb-Internal-Org": {ts.OrgID}}, nil)
	checkEnvelope(t, r, 401, "UNAUTHORIZED")
	raw := "GET /api/v1/memory/stats HTTP/1.1\r\nHost: node\r\nX-Hebb-Forwarded: 1\r\nX-Hebb-Internal-Org: " + ts.OrgID + "\r\n\r\n"
	if out := string(ts.srv.ServeRaw([]byte(raw))); !strings.HasPrefix(out, "HTTP/1.1 200") {
		t.Errorf("forwarded in-process request: %.200s", out)
	}
}
