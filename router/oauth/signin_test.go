package oauth

import (
	"context"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hebbdb/hebb/cluster"
)

// sessionCookie carries the test host's session: "org|user".
const sessionCookie = "test_session"

// hostMarker is in every page the test host's layout renders.
const hostMarker = `<div class="host-layout">`

// newSessionEnv is a server whose host signs people in with sessions and
// renders the pages in its layout, as the router does with the console.
func newSessionEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, func(c *Config) {
		c.Session = func(r *http.Request) (string, string, bool) {
			ck, err := r.Cookie(sessionCookie)
			if err != nil {
				return "", "", false
			}
			org, user, ok := strings.Cut(ck.Value, "|")
			return org, user, ok
		}
		c.SignInURL = func(next string) string { return "/signin?next=" + url.QueryEscape(next) }
		c.Render = func(w http.ResponseWriter, _ *http.Request, status int, title string, body template.HTML) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(status)
			_, _ = w.Write([]byte("<title>" + template.HTMLEscapeString(title) + "</title>" + hostMarker + string(body) + "</div>"))
		}
	})
}

// consentTicket opens the authorization URL with the env's session and
// returns the consent page's ticket.
func (e *env) consentTicket(params url.Values) string {
	e.t.Helper()
	st, _, h, body := e.get("/oauth/authorize?" + params.Encode())
	m := ticketRE.FindStringSubmatch(body)
	if st != 200 || m == nil || !strings.Contains(body, hostMarker) || h.Get("Content-Security-Policy") != hostCSP {
		e.t.Fatalf("consent page: %d %q %s", st, h.Get("Content-Security-Policy"), body)
	}
	return m[1]
}

func (e *env) decide(ticket, decision string) (int, http.Header, string) {
	e.t.Helper()
	st, _, h, body := e.postForm("/oauth/authorize", url.Values{"step": {"consent"}, "ticket": {ticket}, "decision": {decision}})
	return st, h, body
}

func TestSessionSignIn(t *testing.T) {
	e := newSessionEnv(t)
	c := e.publicClient()
	params := e.authParams(c, "openid memory:read")

	t.Run("signed out goes to the sign-in and back", func(t *testing.T) {
		e.cookie = ""
		st, _, h, _ := e.get("/oauth/authorize?" + params.Encode())
		loc, err := url.Parse(h.Get("Location"))
		if st != http.StatusFound || err != nil || loc.Path != "/signin" ||
			loc.Query().Get("next") != "/oauth/authorize?"+params.Encode() {
			t.Fatalf("%d, Location %q", st, h.Get("Location"))
		}
	})
	t.Run("invalid request is a page, not a sign-in", func(t *testing.T) {
		e.cookie = ""
		p := e.authParams(c, "memory:read")
		p.Set("client_id", "hcl_nobody")
		st, _, h, body := e.get("/oauth/authorize?" + p.Encode())
		if st != 400 || h.Get("Location") != "" || !strings.Contains(body, hostMarker) || !strings.Contains(body, "Unknown client") {
			t.Errorf("%d %q %s", st, h.Get("Location"), body)
		}
	})
	t.Run("signed in: consent names the person, workspace, client and scopes", func(t *testing.T) {
		e.cookie = "org_test|" + testUser
		_, _, _, body := e.get("/oauth/authorize?" + params.Encode())
		for _, want := range []string{"<title>Allow access</title>", testEmail, "Test Org (org_test)", "Allow Test Agent?",
			"(memory:read)", "(openid)", `value="allow"`, `value="deny"`, "signin=key"} {
			if !strings.Contains(body, want) {
				t.Errorf("consent page lacks %q:\n%s", want, body)
			}
		}
	})
	t.Run("approve issues a code for the session's org", func(t *testing.T) {
		e.cookie = "org_test|" + testUser
		st, h, _ := e.decide(e.consentTicket(params), "allow")
		q := e.redirected(st, h)
		st, tok := e.exchange(c, q.Get("code"), c.verifier)
		if st != 200 || q.Get("state") != "st-1" {
			t.Fatalf("exchange: %d %v (redirect %v)", st, tok, q)
		}
		if g, err := e.srv.Verify(context.Background(), tok["access_token"].(string)); err != nil || g.OrgID != "org_test" {
			t.Errorf("Verify = %+v, %v", g, err)
		}
	})
	t.Run("the person is the subject", func(t *testing.T) {
		// Every person of a workspace had the workspace's subject, so the
		// chat surface, signing people in through hebb, took them for one.
		e.cookie = "org_test|" + testUser
		p := e.authParams(c, "openid profile email memory:read")
		st, h, _ := e.decide(e.consentTicket(p), "allow")
		st, tok := e.exchange(c, e.redirected(st, h).Get("code"), c.verifier)
		if st != 200 {
			t.Fatalf("exchange: %d %v", st, tok)
		}
		if claims := e.checkIDToken(tok["id_token"].(string), c.id, testUser); claims["email"] != testEmail {
			t.Errorf("id_token email %v", claims["email"])
		}
		req, _ := http.NewRequest("GET", e.ts.URL+"/oauth/userinfo", nil)
		req.Header.Set("Authorization", "Bearer "+tok["access_token"].(string))
		if st, m, _, _ := e.do(req); st != 200 || m["sub"] != testUser || m["email"] != testEmail || m["name"] != "Test Org" {
			t.Errorf("userinfo: %d %v", st, m)
		}
	})
	t.Run("deny", func(t *testing.T) {
		e.cookie = "org_test|" + testUser
		st, h, _ := e.decide(e.consentTicket(params), "deny")
		if q := e.redirected(st, h); q.Get("error") != "access_denied" || q.Get("code") != "" {
			t.Errorf("redirect query %v", q)
		}
	})
	changed := []struct{ name, cookie string }{
		{"signed out since", ""},
		{"another workspace since", "org_other|" + testUser},
		{"another person since", "org_test|usr_bob"},
	}
	for _, tt := range changed {
		t.Run("approve refused: "+tt.name, func(t *testing.T) {
			e.cookie = "org_test|" + testUser
			ticket := e.consentTicket(params)
			e.cookie = tt.cookie
			if st, h, body := e.decide(ticket, "allow"); st != 400 || h.Get("Location") != "" || !strings.Contains(body, "signed out or switched") {
				t.Errorf("%d %q %s", st, h.Get("Location"), body)
			}
		})
	}
}

func TestSessionKeyFallback(t *testing.T) {
	e := newSessionEnv(t)
	c := e.publicClient()
	params := e.authParams(c, "memory:read")
	keyParams := e.authParams(c, "memory:read")
	keyParams.Set(keySignInParam, "key")

	st, _, h, body := e.get("/oauth/authorize?" + keyParams.Encode())
	signIn := "/signin?next=" + url.QueryEscape("/oauth/authorize?"+params.Encode())
	for _, want := range []string{hostMarker, `name="api_key"`, "Use an API key instead", `class="btn ghost"`,
		template.HTMLEscapeString(signIn)} {
		if !strings.Contains(body, want) {
			t.Errorf("key sign-in page lacks %q:\n%s", want, body)
		}
	}
	if st != 200 || h.Get("Content-Security-Policy") != hostCSP || h.Get("X-Frame-Options") != "DENY" {
		t.Errorf("key sign-in page: %d %v", st, h)
	}

	form := url.Values{"step": {"signin"}, "api_key": {"mk_live_" + strings.Repeat("A", 40)}}
	for k, v := range params {
		form[k] = v
	}
	if st, _, _, body := e.postForm("/oauth/authorize", form); st != 401 || !strings.Contains(body, "not valid") ||
		!strings.Contains(body, "<details class=\"advanced\" open>") {
		t.Errorf("wrong key: %d %s", st, body)
	}
	form.Set("api_key", e.key)
	st, _, _, body = e.postForm("/oauth/authorize", form)
	m := ticketRE.FindStringSubmatch(body)
	if st != 200 || m == nil || !strings.Contains(body, "with its API key") || strings.Contains(body, testEmail) {
		t.Fatalf("key sign-in: %d %s", st, body)
	}
	// A key's ticket needs no session.
	st, h, _ = e.decide(m[1], "allow")
	if q := e.redirected(st, h); q.Get("code") == "" {
		t.Errorf("redirect query %v", q)
	}
}

// TestStandalonePages: without a host layout the pages are the package's
// own, with only inline styles allowed.
func TestStandalonePages(t *testing.T) {
	e := newEnv(t)
	c := e.publicClient()
	st, _, h, body := e.get("/oauth/authorize?" + e.authParams(c, "memory:read").Encode())
	if st != 200 || h.Get("Content-Security-Policy") != standaloneCSP || !strings.HasPrefix(body, "<!doctype html>") ||
		strings.Contains(body, "Use an API key instead") || !strings.Contains(body, `class="btn primary"`) {
		t.Errorf("%d %q %s", st, h.Get("Content-Security-Policy"), body)
	}
}

// roleRuns counts runs of TestSessionRoleBoundsScopes.
var roleRuns atomic.Int64

// roleUsers names the member and the owner one run of
// TestSessionRoleBoundsScopes creates. The meta state is shared by every
// test and every run (-count=2), and creating a user who exists fails, so
// each run's names are its own.
func roleUsers() (member, owner string) {
	n := roleRuns.Add(1)
	return fmt.Sprintf("usr_mem%d", n), fmt.Sprintf("usr_own%d", n)
}

// TestSessionRoleBoundsScopes: a workspace member looks and does not
// change (README, "Console"), so a member's consent grants no
// memory:write; an owner's token loses it when the owner is made a member,
// and stops working when they leave the workspace. A member's consent
// gave an AI client write access to the workspace.
func TestSessionRoleBoundsScopes(t *testing.T) {
	e := newSessionEnv(t)
	b, _ := backend(t)
	newUser := func(id, role string) {
		t.Helper()
		res, _ := b.ProposeMeta(context.Background(), cluster.EncodeConsoleCreateUser(cluster.ConsoleCreateUser{
			User: cluster.ConsoleUser{ID: id, Email: id + "@example.com", PasswordHash: "unused",
				Orgs: []cluster.ConsoleMembership{{OrgID: "org_test", Role: role}}}, Now: time.Now()}))
		if _, failed := res.(error); failed || res == nil {
			t.Fatalf("create %s: %v", id, res)
		}
	}
	mem, own := roleUsers()
	newUser(mem, cluster.ConsoleRoleMember)
	newUser(own, cluster.ConsoleRoleOwner)
	c := e.publicClient()
	params := e.authParams(c, "memory:read memory:write")
	token := func(user string) (string, string) {
		t.Helper()
		e.cookie = "org_test|" + user
		ticket := e.consentTicket(params)
		st, h, _ := e.decide(ticket, "allow")
		st, tok := e.exchange(c, e.redirected(st, h).Get("code"), c.verifier)
		if st != 200 {
			t.Fatalf("exchange: %d %v", st, tok)
		}
		return tok["access_token"].(string), tok["scope"].(string)
	}
	scopes := func(access string) string {
		t.Helper()
		g, err := e.srv.Verify(context.Background(), access)
		if err != nil {
			return "invalid"
		}
		return strings.Join(g.Scopes, " ")
	}

	e.cookie = "org_test|" + mem
	if _, _, _, body := e.get("/oauth/authorize?" + params.Encode()); strings.Contains(body, "(memory:write)") {
		t.Errorf("a member's consent page offers memory:write:\n%s", body)
	}
	access, scope := token(mem)
	if scope != "memory:read" || scopes(access) != "memory:read" {
		t.Errorf("member's token: scope %q, verified %q", scope, scopes(access))
	}

	access, scope = token(own)
	if scope != "memory:read memory:write" || scopes(access) != "memory:read memory:write" {
		t.Fatalf("owner's token: scope %q, verified %q", scope, scopes(access))
	}
	set := func(role string) {
		t.Helper()
		if res, _ := b.ProposeMeta(context.Background(), cluster.EncodeConsoleSetRole(cluster.ConsoleSetRole{
			UserID: own, OrgID: "org_test", Role: role, Now: time.Now()})); res != nil {
			if err, ok := res.(error); ok {
				t.Fatalf("set role %q: %v", role, err)
			}
		}
	}
	set(cluster.ConsoleRoleMember)
	if got := scopes(access); got != "memory:read" {
		t.Errorf("owner made a member: token verifies with %q", got)
	}
	set("") // leaves the workspace
	if got := scopes(access); got != "invalid" {
		t.Errorf("a person who left the workspace: token verifies with %q", got)
	}
}
