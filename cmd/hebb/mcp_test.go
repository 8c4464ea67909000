package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	hebbclient "github.com/hebbdb/hebb/client"
	"golang.org/x/oauth2"
)

// stdioSession runs `hebb mcp` as the go-sdk client's command transport.
func stdioSession(t *testing.T, n *node, key string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(hebbBin, "mcp")
	cmd.Env = append(cleanEnv(), "MNEMOVERSE_API_KEY="+key, "HEBB_URL=http://"+n.httpAddr+"/api/v1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to hebb mcp: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// bearer adds an access token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// remoteSession signs in through the OAuth server by hand and connects the
// go-sdk client to POST /mcp with the access token.
func remoteSession(t *testing.T, n *node, key string) *mcp.ClientSession {
	t.Helper()
	base := "http://" + n.httpAddr
	_, tok := authorizeByHand(t, key, base)
	token := tok.AccessToken
	transport := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{token}, Timeout: 20 * time.Second}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "remote-test", Version: "1"}, nil).
		Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

var ticketRE = regexp.MustCompile(`name="ticket" value="([^"]+)"`)

// authorizeByHand registers a client, signs in with key (asking for
// offline_access too), consents and exchanges the code, sending the four
// steps to bases in turn (one base: all of them); it returns the client's
// id and the token answer.
func authorizeByHand(t *testing.T, key string, bases ...string) (clientID string, tok tokenAnswer) {
	t.Helper()
	const redirect = "http://127.0.0.1:47602/cb"
	base := func(step int) string { return bases[step%len(bases)] }
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Post(base(0)+"/oauth/register", "application/json",
		strings.NewReader(`{"redirect_uris":["`+redirect+`"],"client_name":"e2e","token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	_ = json.NewDecoder(res.Body).Decode(&reg)
	_ = res.Body.Close()
	verifier := oauth2.GenerateVerifier()
	form := url.Values{"step": {"signin"}, "api_key": {key}, "response_type": {"code"}, "client_id": {reg.ClientID},
		"redirect_uri": {redirect}, "scope": {"memory:read memory:write offline_access"}, "code_challenge_method": {"S256"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}}
	res, err = noFollow.PostForm(base(1)+"/oauth/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	m := ticketRE.FindStringSubmatch(string(page))
	if m == nil {
		t.Fatalf("sign-in: %d %s", res.StatusCode, page)
	}
	res, err = noFollow.PostForm(base(2)+"/oauth/authorize", url.Values{"step": {"consent"}, "ticket": {m[1]}, "decision": {"allow"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	tok = exchange(t, base(3), url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"redirect_uri": {redirect}, "code_verifier": {verifier}, "client_id": {reg.ClientID}})
	return reg.ClientID, tok
}

// tokenAnswer is the token endpoint's answer.
type tokenAnswer struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
}

// exchange posts form to base's token endpoint and returns the tokens.
func exchange(t *testing.T, base string, form url.Values) tokenAnswer {
	t.Helper()
	res, err := client.PostForm(base+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tok tokenAnswer
	_ = json.NewDecoder(res.Body).Decode(&tok)
	if tok.AccessToken == "" {
		t.Fatalf("token endpoint (%s): %d", form.Get("grant_type"), res.StatusCode)
	}
	return tok
}

// callTool returns a tool's structured content and whether it is an error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out, res.IsError
}

func mustTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	out, isErr := callTool(t, cs, name, args)
	if isErr {
		t.Fatalf("%s: tool error %v", name, out)
	}
	return out
}

func recentIDs(t *testing.T, cs *mcp.ClientSession) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	items, _ := mustTool(t, cs, "memory_list_recent", map[string]any{"limit": 50})["items"].([]any)
	for _, it := range items {
		out[fmt.Sprint(it.(map[string]any)["atom_id"])] = true
	}
	return out
}

// TestMCPSurfaces writes one atom through each surface (REST, the stdio
// tool server, the remote connector) and reads all three through each.
func TestMCPSurfaces(t *testing.T) {
	t.Parallel()
	n := start(t, spec{args: []string{"--embedder", "hash"}})
	key := n.printedKey()
	stdio := stdioSession(t, n, key)
	remote := remoteSession(t, n, key)

	ids := map[string]string{"rest": n.write(key, "Written through REST: the staging database is read-only on Fridays")}
	lib, err := hebbclient.New("http://"+n.httpAddr+"/api/v1", key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	wr, err := lib.Write(ctx, hebbclient.WriteRequest{Content: "Written through the Go client library: on-call rotates every Monday"})
	if err != nil || wr.AtomID == nil {
		t.Fatalf("client library write: %+v, %v", wr, err)
	}
	ids["client"] = *wr.AtomID
	for surface, cs := range map[string]*mcp.ClientSession{"stdio": stdio, "remote": remote} {
		w := mustTool(t, cs, "memory_write", map[string]any{
			"content": "Written through the " + surface + " tool: release notes go in CHANGELOG.md"})
		if w["stored"] != true {
			t.Fatalf("%s write: %v", surface, w)
		}
		ids[surface] = w["atom_id"].(string)
	}
	for reader, cs := range map[string]*mcp.ClientSession{"stdio": stdio, "remote": remote} {
		seen := recentIDs(t, cs)
		for writer, id := range ids {
			if !seen[id] {
				t.Errorf("%s tool does not see the atom written through %s", reader, writer)
			}
		}
	}
	for writer, id := range ids {
		n.mustGet(key, id) // REST sees every surface's atom
		if a, err := lib.Atom(ctx, id); err != nil || a.AtomID != id {
			t.Errorf("the client library does not see the atom written through %s: %v", writer, err)
		}
	}
	if r := mustTool(t, stdio, "memory_read", map[string]any{"query": "staging database read-only Fridays"}); !strings.Contains(fmt.Sprint(r["items"]), ids["rest"]) {
		t.Errorf("stdio memory_read misses the REST atom: %v", r)
	}
}

func TestMCPStdio(t *testing.T) {
	t.Parallel()
	n := start(t, spec{args: []string{"--embedder", "hash"}})
	key := n.printedKey()
	cs := stdioSession(t, n, key)

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 11 {
		t.Errorf("%d tools, want 11", len(tools.Tools))
	}
	t.Run("REST errors keep code and message", func(t *testing.T) {
		out, isErr := callTool(t, cs, "memory_read", map[string]any{"query": "x", "top_k": 501})
		if !isErr || out["code"] != "VALIDATION_ERROR" || out["message"] != "Request validation failed" {
			t.Errorf("out-of-bounds read: %v", out)
		}
		out, isErr = callTool(t, cs, "memory_join_room", map[string]any{"code": "mshare_nothing"})
		if !isErr || out["code"] != "NOT_FOUND" || out["message"] != "Invite not found" {
			t.Errorf("unknown share code: %v", out)
		}
	})
	t.Run("local invites are single-use", func(t *testing.T) {
		room := mustTool(t, cs, "memory_create_room", map[string]any{"name": "team"})
		inv := mustTool(t, cs, "memory_invite_to_room", map[string]any{"room_id": room["room_id"], "max_uses": 5})
		if inv["max_uses"] != 1.0 || !strings.HasPrefix(fmt.Sprint(inv["code"]), "mshare_") || inv["share_message"] == "" {
			t.Errorf("invite: %v", inv)
		}
		w := mustTool(t, cs, "memory_write", map[string]any{"content": "A room note", "domain": room["address"]})
		if w["stored"] != true {
			t.Errorf("room write: %v", w)
		}
	})
	t.Run("missing key", func(t *testing.T) {
		cmd := exec.Command(hebbBin, "mcp")
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "MNEMOVERSE_API_KEY") {
			t.Errorf("hebb mcp without a key: %v %s", err, out)
		}
	})
}
