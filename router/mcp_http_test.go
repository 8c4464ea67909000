package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

const mcpRedirect = "http://127.0.0.1:47601/callback"

// noRedirect is an HTTP client that shows redirects instead of following.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

var (
	mcpHiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
	mcpTicketRE = regexp.MustCompile(`name="ticket" value="([^"]+)"`)
)

// signInAndConsent plays the account owner in a browser: it opens the
// authorization URL, submits the sign-in form with key, then the consent
// form, and returns the redirect's query.
func signInAndConsent(authURL, key string) (url.Values, error) {
	res, err := noRedirect.Get(authURL)
	if err != nil {
		return nil, err
	}
	page, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("authorize page: %d %s", res.StatusCode, page)
	}
	form := url.Values{"api_key": {key}}
	for _, m := range mcpHiddenRE.FindAllStringSubmatch(string(page), -1) {
		form.Set(m[1], htmlUnescape(m[2]))
	}
	action := strings.SplitN(authURL, "?", 2)[0]
	res, err = noRedirect.PostForm(action, form)
	if err != nil {
		return nil, err
	}
	page, _ = io.ReadAll(res.Body)
	_ = res.Body.Close()
	m := mcpTicketRE.FindStringSubmatch(string(page))
	if res.StatusCode != 200 || m == nil {
		return nil, fmt.Errorf("sign-in: %d %s", res.StatusCode, page)
	}
	res, err = noRedirect.PostForm(action, url.Values{"step": {"consent"}, "ticket": {m[1]}, "decision": {"allow"}})
	if err != nil {
		return nil, err
	}
	_ = res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("consent: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	return loc.Query(), nil
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&#43;", "+", "&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">").Replace(s)
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
// forms submitted with key), token.
func mcpOAuthClient(t *testing.T, baseURL, key string) (*mcp.ClientSession, *recordingSource) {
	t.Helper()
	src := &recordingSource{}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{mcpRedirect}, ClientName: "Test Agent", TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}}},
		RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(_ context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			q, err := signInAndConsent(args.URL, key)
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

	cs, src := mcpOAuthClient(t, ts.URL, ts.Key)
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

func containsAtom(items any, id string) bool {
	l, _ := items.([]any)
	for _, it := range l {
		if m, _ := it.(map[string]any); m["atom_id"] == id {
			return true
		}
	}
	return false
}

// oauthToken runs the authorization code flow by hand for scope and
// returns the token response.
func oauthToken(t *testing.T, ts *testServer, scope string) map[string]any {
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
	verifier := oauth2.GenerateVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {reg["client_id"].(string)}, "redirect_uri": {mcpRedirect},
		"scope": {scope}, "state": {"s"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)},
		"code_challenge_method": {"S256"}}
	back, err := signInAndConsent(ts.URL+"/oauth/authorize?"+q.Encode(), ts.Key)
	if err != nil {
		t.Fatal(err)
	}
	res, err = testHTTP.PostForm(ts.URL+"/oauth/token", url.Values{"grant_type": {"authorization_code"},
		"code": {back.Get("code")}, "redirect_uri": {mcpRedirect}, "code_verifier": {verifier},
		"client_id": {reg["client_id"].(string)}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tok map[string]any
	_ = json.NewDecoder(res.Body).Decode(&tok)
	if res.StatusCode != 200 {
		t.Fatalf("token: %d %v", res.StatusCode, tok)
	}
	return tok
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
