package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hebbdb/hebb/cluster"
	"github.com/hebbdb/hebb/router/console"
	"github.com/hebbdb/hebb/router/ratelimit"
)

const pw = "correct horse battery"

func mustStatus(t *testing.T, what string, p page, want int) {
	t.Helper()
	if p.Status != want {
		t.Fatalf("%s: status %d, want %d\n%s", what, p.Status, want, mainOf(p.Body))
	}
}

func mustContain(t *testing.T, what string, p page, parts ...string) {
	t.Helper()
	for _, s := range parts {
		if !strings.Contains(p.Body, s) {
			t.Fatalf("%s: page lacks %q\n%s", what, s, mainOf(p.Body))
		}
	}
}

var keyRE = regexp.MustCompile(`<code id="new-key-value">(mk_live_[A-Za-z0-9_-]+)</code>`)

// createKey creates a key in the browser's org and returns it.
func (b *browser) createKey(label string) string {
	b.t.Helper()
	p := b.submit("/console/keys", "/console/keys", url.Values{"label": {label}})
	mustStatus(b.t, "create key", p, http.StatusOK)
	m := keyRE.FindStringSubmatch(p.Body)
	if m == nil {
		b.t.Fatalf("new key not shown\n%s", p.Body)
	}
	return m[1]
}

func TestSignUpSignInSignOut(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	b := n.browser(t)
	t.Run("signed out goes to sign-in and back", func(t *testing.T) {
		p := b.get("/console/keys")
		mustStatus(t, "keys signed out", p, http.StatusSeeOther)
		if p.Location != "/console/signin?next=%2Fconsole%2Fkeys" {
			t.Fatalf("redirect to %q", p.Location)
		}
	})
	t.Run("sign-up validates", func(t *testing.T) {
		tests := []struct {
			name, email, pw, pw2, want string
		}{
			{"bad email", "nope", pw, pw, "e-mail address"},
			{"short password", "ann@example.com", "short", "short", "at least 10"},
			{"passwords differ", "ann@example.com", pw, pw + "x", "differ"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				p := b.submit("/console/signup", "/console/signup", url.Values{"email": {tc.email}, "password": {tc.pw}, "password2": {tc.pw2}})
				mustStatus(t, "sign-up", p, http.StatusBadRequest)
				mustContain(t, "sign-up", p, tc.want)
			})
		}
	})
	b.signUp("Ann@Example.com", pw, "Ann's lab")
	t.Run("signed in after sign-up", func(t *testing.T) {
		p := b.follow("/console")
		mustStatus(t, "overview", p, http.StatusOK)
		mustContain(t, "overview", p, "ann@example.com", "Ann&#39;s lab", "Queries today", "Memories stored")
	})
	t.Run("cookie attributes", func(t *testing.T) {
		p := n.browser(t).signIn("ann@example.com", pw)
		mustStatus(t, "sign-in", p, http.StatusSeeOther)
		sc := strings.Join(p.Header.Values("Set-Cookie"), "\n")
		for _, want := range []string{"hebb_console=hcs_", "HttpOnly", "SameSite=Lax", "Path=/"} {
			if !strings.Contains(sc, want) {
				t.Fatalf("Set-Cookie lacks %q: %s", want, sc)
			}
		}
	})
	t.Run("second account with the same address refused", func(t *testing.T) {
		other := n.browser(t)
		p := other.submit("/console/signup", "/console/signup", url.Values{"email": {"ann@example.com"}, "password": {pw}, "password2": {pw}})
		mustStatus(t, "duplicate sign-up", p, http.StatusConflict)
	})
	t.Run("wrong password", func(t *testing.T) {
		other := n.browser(t)
		p := other.signIn("ann@example.com", "wrong password!")
		mustStatus(t, "wrong password", p, http.StatusUnauthorized)
		mustContain(t, "wrong password", p, "do not match")
	})
	t.Run("sign out ends the session", func(t *testing.T) {
		tok := b.cookie("hebb_console")
		p := b.submit("/console", "/console/signout", nil)
		mustStatus(t, "sign out", p, http.StatusSeeOther)
		mustStatus(t, "after sign out", b.get("/console"), http.StatusSeeOther)
		replay := n.browser(t)
		u, _ := url.Parse(n.URL)
		replay.jar.SetCookies(u, []*http.Cookie{{Name: "hebb_console", Value: tok, Path: "/"}})
		mustStatus(t, "replayed cookie", replay.get("/console"), http.StatusSeeOther)
	})
}

func TestSignInRateLimited(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	n.browser(t).signUp("rate@example.com", pw, "")
	b := n.browser(t)
	for i := range 5 {
		mustStatus(t, "failed sign-in", b.signIn("rate@example.com", "wrong password "+string(rune('a'+i))), http.StatusUnauthorized)
	}
	p := b.signIn("rate@example.com", pw)
	mustStatus(t, "sign-in after the limit", p, http.StatusTooManyRequests)
	mustContain(t, "limited", p, "Too many failed sign-ins")
}

// TestSignInRateLimitedInParallel: attempts sent at once are counted
// before their passwords are checked, so no more of them are checked than
// the limit allows (counted after the check, 100 at once from one address
// all got their 401 against a limit of 30, each hashing 19 MiB).
func TestSignInRateLimitedInParallel(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	n.browser(t).signUp("burst@example.com", pw, "")
	const attempts = 15 // maxEmailFails is 5
	forms := make([]func() page, attempts)
	for i := range forms {
		b := n.browser(t)
		form := url.Values{"email": {"burst@example.com"}, "password": {fmt.Sprintf("wrong password %d", i)},
			"csrf": {b.csrf("/console/signin")}}
		forms[i] = func() page { return b.post("/console/signin", form) }
	}
	statuses := make(chan int, attempts)
	for _, f := range forms {
		go func() { statuses <- f().Status }()
	}
	got := map[int]int{}
	for range attempts {
		got[<-statuses]++
	}
	if got[http.StatusUnauthorized] != 5 || got[http.StatusTooManyRequests] != attempts-5 {
		t.Fatalf("answers by status %v, want 5 checked (401) and %d refused (429)", got, attempts-5)
	}
}

// TestSignInLockoutPerAddress: failures from one client address do not
// lock the account for another address (anyone who knew an e-mail address
// could lock its owner out with five wrong passwords); failures spread
// over many addresses still reach the account's own limit. Not parallel:
// it sets the trusted proxies and maxAccountFails.
func TestSignInLockoutPerAddress(t *testing.T) {
	defer console.SetMaxAccountFails(8)()
	ratelimit.TrustProxies([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})
	defer ratelimit.TrustProxies(nil)
	n := startNode(t, nodeOpts{})
	n.browser(t).signUp("victim@example.com", pw, "")
	signIn := func(from, password string) page {
		b := n.browser(t)
		form := url.Values{"email": {"victim@example.com"}, "password": {password}, "csrf": {b.csrf("/console/signin")}}
		return b.post("/console/signin", form, "X-Forwarded-For", from)
	}
	for i := range 5 {
		mustStatus(t, "attacker's failed sign-in", signIn("203.0.113.7", fmt.Sprintf("wrong password %d", i)), http.StatusUnauthorized)
	}
	mustStatus(t, "attacker after 5 failures", signIn("203.0.113.7", pw), http.StatusTooManyRequests)
	mustStatus(t, "the owner from another address", signIn("198.51.100.9", pw), http.StatusSeeOther)

	for i := range 3 { // 8 failures in all for the account
		mustStatus(t, "failed sign-in from a third address", signIn("192.0.2.1", fmt.Sprintf("guess %d", i)), http.StatusUnauthorized)
	}
	p := signIn("192.0.2.99", pw)
	mustStatus(t, "any address once the account's limit is reached", p, http.StatusTooManyRequests)
	mustContain(t, "account limited", p, "Too many failed sign-ins")
}

// TestSignUpProbesLimited: asking the sign-up form whether an address has
// an account counts against the client's sign-ups (it answered 409 without
// limit, each after a 19 MiB password hash).
func TestSignUpProbesLimited(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	n.browser(t).signUp("taken@example.com", pw, "") // one of the client's maxSignUps
	b := n.browser(t)
	probe := func() page {
		return b.submit("/console/signup", "/console/signup", url.Values{"email": {"taken@example.com"},
			"password": {pw}, "password2": {pw}})
	}
	for range 9 { // maxSignUps is 10
		mustStatus(t, "taken address", probe(), http.StatusConflict)
	}
	mustStatus(t, "probe past the limit", probe(), http.StatusTooManyRequests)
}

func TestSessionFixationRefused(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	n.browser(t).signUp("fix@example.com", pw, "")
	b := n.browser(t)
	planted := "hcs_attacker-chosen-value-0123456789abcdef"
	u, _ := url.Parse(n.URL)
	b.jar.SetCookies(u, []*http.Cookie{{Name: "hebb_console", Value: planted, Path: "/"}})
	mustStatus(t, "sign-in", b.signIn("fix@example.com", pw), http.StatusSeeOther)
	got := b.cookie("hebb_console")
	if got == "" || got == planted {
		t.Fatalf("session cookie after sign-in: %q", got)
	}
	attacker := n.browser(t)
	attacker.jar.SetCookies(u, []*http.Cookie{{Name: "hebb_console", Value: planted, Path: "/"}})
	mustStatus(t, "planted cookie", attacker.get("/console"), http.StatusSeeOther)
	mustStatus(t, "victim", b.get("/console"), http.StatusOK)
}

func TestCSRFRefused(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	b := n.browser(t)
	b.signUp("csrf@example.com", pw, "")
	tok := b.csrf("/console/keys")
	keys := func() int { return len(n.cl.Meta().Keys(orgOf(t, n, "csrf@example.com"))) }
	before := keys()
	tests := []struct {
		name    string
		form    url.Values
		headers []string
	}{
		{"no token", url.Values{"label": {"x"}}, nil},
		{"wrong token", url.Values{"label": {"x"}, "csrf": {"forged"}}, nil},
		{"cross-site fetch", url.Values{"label": {"x"}, "csrf": {tok}}, []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}},
		{"cross-site fetch, no origin", url.Values{"label": {"x"}, "csrf": {tok}}, []string{"Sec-Fetch-Site", "cross-site", "Origin", ""}},
		{"foreign origin", url.Values{"label": {"x"}, "csrf": {tok}}, []string{"Sec-Fetch-Site", "", "Origin", "https://evil.example"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := b.post("/console/keys", tc.form, tc.headers...)
			mustStatus(t, tc.name, p, http.StatusForbidden)
		})
	}
	t.Run("signed-out forms need their token", func(t *testing.T) {
		other := n.browser(t)
		p := other.post("/console/signin", url.Values{"email": {"csrf@example.com"}, "password": {pw}})
		mustStatus(t, "sign-in without token", p, http.StatusForbidden)
	})
	if after := keys(); after != before {
		t.Fatalf("a refused request created a key: %d -> %d", before, after)
	}
	p := b.post("/console/keys", url.Values{"label": {"ok"}, "csrf": {tok}})
	mustStatus(t, "with the token", p, http.StatusOK)
}

// mainOf is the <main> of a page (the whole body when it has none), for
// failure messages.
func mainOf(body string) string {
	if i := strings.Index(body, "<main"); i >= 0 {
		body = body[i:]
	}
	if len(body) > 2500 {
		body = body[:2500]
	}
	return body
}

func orgNamed(t *testing.T, n *node, name string) string {
	t.Helper()
	for _, o := range n.cl.Meta().Orgs() {
		if o.Name == name {
			return o.ID
		}
	}
	t.Fatalf("no org %s", name)
	return ""
}

func orgOf(t *testing.T, n *node, email string) string {
	t.Helper()
	u, ok := n.cl.Meta().ConsoleUserByEmail(email)
	if !ok {
		t.Fatalf("no user %s", email)
	}
	return u.Orgs[0].OrgID
}

func TestKeysAndCrossOrgAccess(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	a, bob := n.browser(t), n.browser(t)
	a.signUp("a@example.com", pw, "A")
	bob.signUp("b@example.com", pw, "B")
	key := a.createKey("laptop")
	st, out := n.api(key, http.MethodPost, "/memory/write", map[string]any{"content": "A's private plan"})
	if st != http.StatusOK {
		t.Fatalf("write with the new key: %d %v", st, out)
	}
	atomID, _ := out["atom_id"].(string)
	keyID := ""
	for _, k := range n.cl.Meta().Keys(orgOf(t, n, "a@example.com")) {
		if k.Label == "laptop" {
			keyID = k.KeyID
		}
	}
	t.Run("key listed with last use", func(t *testing.T) {
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, ok := n.cl.Meta().ConsoleKeyLastUsed(keyID); ok {
				break
			}
		}
		p := a.follow("/console/keys")
		mustContain(t, "keys", p, "laptop", keyID, `<time datetime="`) // a <time> of text needs its datetime
		if strings.Contains(p.Body, `<span class="muted">never</span>`) {
			t.Fatal("the key's use is not shown")
		}
		if strings.Contains(p.Body, key) {
			t.Fatal("raw key shown again")
		}
	})
	t.Run("labels are counted in characters and shown as written", func(t *testing.T) {
		// 60 é are 120 bytes: refused as over 100 characters before.
		mustStatus(t, "accented label", a.submit("/console/keys", "/console/keys", url.Values{"label": {strings.Repeat("é", 60)}}),
			http.StatusOK)
		for _, label := range []string{strings.Repeat("é", 101), "\u202egnp.exe", "two\nlines"} {
			mustStatus(t, "label "+label, a.submit("/console/keys", "/console/keys", url.Values{"label": {label}}), http.StatusBadRequest)
		}
	})
	t.Run("other org cannot revoke the key", func(t *testing.T) {
		p := bob.submit("/console/keys", "/console/keys/"+keyID+"/revoke", nil)
		mustStatus(t, "foreign revoke", p, http.StatusNotFound)
		if st, _ := n.api(key, http.MethodGet, "/memory/stats", nil); st != http.StatusOK {
			t.Fatalf("key stopped working: %d", st)
		}
	})
	t.Run("other org cannot see the memory", func(t *testing.T) {
		mustStatus(t, "foreign atom", bob.follow("/console/memories/"+atomID), http.StatusNotFound)
		mustStatus(t, "foreign delete", bob.submit("/console", "/console/memories/"+atomID+"/delete",
			url.Values{"confirm": {"yes"}}), http.StatusSeeOther)
		mustStatus(t, "atom still there", a.follow("/console/memories/"+atomID), http.StatusOK)
		if p := bob.follow("/console/memories"); strings.Contains(p.Body, "private plan") {
			t.Fatal("B's feed shows A's memory")
		}
	})
	t.Run("revoke", func(t *testing.T) {
		p := a.submit("/console/keys", "/console/keys/"+keyID+"/revoke", nil)
		mustStatus(t, "revoke", p, http.StatusSeeOther)
		st, out := n.api(key, http.MethodGet, "/memory/stats", nil)
		if st != http.StatusUnauthorized {
			t.Fatalf("revoked key: %d %v", st, out)
		}
	})
}

func TestAdminCreateUser(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	tests := []struct {
		name string
		body map[string]any
		want int
	}{
		{"owner of the default org", map[string]any{"email": "op@example.com", "password": pw, "org_id": n.OrgID, "operator": true}, 200},
		{"unknown org", map[string]any{"email": "x@example.com", "password": pw, "org_id": "org_nope"}, 404},
		{"short password", map[string]any{"email": "y@example.com", "password": "short"}, 400},
		{"taken without org", map[string]any{"email": "op@example.com", "password": pw}, 409},
		{"new org", map[string]any{"email": "z@example.com", "password": pw, "org_name": "Zed"}, 200},
		{"existing user joins an org", map[string]any{"email": "z@example.com", "password": pw, "org_id": n.OrgID, "role": "member"}, 200},
		// Someone who signed up first under the address: the operator's
		// password does not match, so the account gets no role (it became
		// owner of the org the operator meant for the person).
		{"existing user with another password", map[string]any{"email": "z@example.com", "password": pw + "-other",
			"org_id": n.OrgID, "role": "owner"}, 409},
		{"unknown field", map[string]any{"email": "w@example.com", "password": pw, "nope": 1}, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if st, out := n.admin(http.MethodPost, "/admin/v1/users", tc.body); st != tc.want {
				t.Fatalf("status %d, want %d: %v", st, tc.want, out)
			}
		})
	}
	u, _ := n.cl.Meta().ConsoleUserByEmail("z@example.com")
	if u.Role(n.OrgID) != cluster.ConsoleRoleMember || len(u.Orgs) != 2 {
		t.Fatalf("memberships: %+v", u.Orgs)
	}
	b := n.browser(t)
	mustStatus(t, "operator signs in", b.signIn("op@example.com", pw), http.StatusSeeOther)
	p := b.follow("/console/cluster")
	mustStatus(t, "cluster page", p, http.StatusOK)
	mustContain(t, "cluster page", p, "Nodes", "Groups")
	member := n.browser(t)
	member.signIn("z@example.com", pw)
	mustStatus(t, "cluster page for a non-operator", member.follow("/console/cluster"), http.StatusNotFound)
	t.Run("a member cannot change the org", func(t *testing.T) {
		// z@example.com leaves its own org, so it signs in to the default
		// org, where it is a member.
		for _, o := range u.Orgs {
			if o.OrgID == n.OrgID {
				continue
			}
			if _, err := console.SetRole(context.Background(), n.cl, u.ID, o.OrgID, ""); err != nil {
				t.Fatal(err)
			}
		}
		m := n.browser(t)
		mustStatus(t, "member signs in", m.signIn("z@example.com", pw), http.StatusSeeOther)
		mustContain(t, "member", m.follow("/console/settings"), "Only an owner can change settings.")
		mustStatus(t, "member creates a key", m.submit("/console/keys", "/console/keys", url.Values{"label": {"x"}}), http.StatusForbidden)
		mustStatus(t, "member hides", m.submit("/console/settings", "/console/settings", url.Values{"hide_replaced": {"on"}}), http.StatusForbidden)
		// Joining a room makes the workspace a member of it: an owner's
		// change (a member joined theirs to rooms by code or invitation).
		st, out := n.api(n.Key, http.MethodPost, "/memory/rooms", map[string]any{"name": "Joined by a member?"})
		if st != http.StatusOK {
			t.Fatalf("room: %d %v", st, out)
		}
		st, out = n.api(n.Key, http.MethodPost, "/memory/rooms/"+out["room_id"].(string)+"/invites", map[string]any{})
		if st != http.StatusOK {
			t.Fatalf("mint: %d %v", st, out)
		}
		join := "/console/join/" + out["code"].(string)
		// The page offers no button that can only fail.
		if p := m.follow(join); strings.Contains(p.Body, `id="join"`) || !strings.Contains(p.Body, "Only an owner") {
			t.Fatalf("join page for a member:\n%s", p.Body)
		}
		mustStatus(t, "member joins by code", m.submit("/console/rooms", join, nil), http.StatusForbidden)
		mustStatus(t, "member accepts an invitation", m.submit("/console/rooms", "/console/invitations/any-token", nil), http.StatusForbidden)
	})
	t.Run("operator removes a person from an org", func(t *testing.T) {
		// There was no way to take access away: a departing member kept
		// their sessions (14 days) and could sign in again.
		m := n.browser(t)
		mustStatus(t, "member signs in", m.signIn("z@example.com", pw), http.StatusSeeOther)
		mustStatus(t, "to the default org", m.submit("/console", "/console/org", url.Values{"org_id": {n.OrgID}}), http.StatusSeeOther)
		mustStatus(t, "member's page", m.follow("/console/memories"), http.StatusOK)
		path := "/admin/v1/users/" + u.ID + "/orgs/" + n.OrgID
		// Named by e-mail address, in any case.
		if st, out := n.admin(http.MethodDelete, "/admin/v1/users/Z@example.com/orgs/"+n.OrgID, nil); st != http.StatusOK ||
			out["removed"] != true || out["user_id"] != u.ID {
			t.Fatalf("remove: %d %v", st, out)
		}
		if p := m.get("/console/memories"); p.Status == http.StatusOK {
			t.Fatalf("the removed person's session still works: %d", p.Status)
		}
		if got, _ := n.cl.Meta().ConsoleUser(u.ID); got.Role(n.OrgID) != "" {
			t.Fatalf("still in the org: %+v", got.Orgs)
		}
		for _, p := range []string{path, "/admin/v1/users/usr_nobody/orgs/" + n.OrgID} {
			if st, out := n.admin(http.MethodDelete, p, nil); st != http.StatusNotFound {
				t.Errorf("DELETE %s: %d %v", p, st, out)
			}
		}
	})
	t.Run("operator sets a new password", func(t *testing.T) {
		// A person who forgot theirs had no way back in: no route set one.
		st, out := n.admin(http.MethodPost, "/admin/v1/users", map[string]any{"email": "forgot@example.com", "password": pw,
			"org_id": n.OrgID, "role": "member"})
		if st != http.StatusOK {
			t.Fatalf("create: %d %v", st, out)
		}
		b := n.browser(t)
		mustStatus(t, "signs in", b.signIn("forgot@example.com", pw), http.StatusSeeOther)
		const fresh = "a brand new passphrase"
		for _, tc := range []struct {
			user string
			body map[string]any
			want int
		}{
			{"forgot@example.com", map[string]any{"password": "short"}, http.StatusBadRequest},
			{"forgot@example.com", map[string]any{}, http.StatusBadRequest},
			{"nobody@example.com", map[string]any{"password": fresh}, http.StatusNotFound},
			{"FORGOT@example.com", map[string]any{"password": fresh}, http.StatusOK},
		} {
			if st, out := n.admin(http.MethodPut, "/admin/v1/users/"+tc.user+"/password", tc.body); st != tc.want {
				t.Fatalf("set password %v for %s: %d %v", tc.body, tc.user, st, out)
			}
		}
		if p := b.get("/console/memories"); p.Status == http.StatusOK {
			t.Fatal("a session from before the new password still works")
		}
		mustContain(t, "old password", n.browser(t).signIn("forgot@example.com", pw), "do not match")
		mustStatus(t, "new password", n.browser(t).signIn("forgot@example.com", fresh), http.StatusSeeOther)
	})
	t.Run("a person in no workspace is told so", func(t *testing.T) {
		// With the right password they were told it was wrong, each try
		// counted towards the lockout, and sign-up said to sign in.
		st, out := n.admin(http.MethodPost, "/admin/v1/users", map[string]any{"email": "gone@example.com", "password": pw,
			"org_id": n.OrgID, "role": "member"})
		if st != http.StatusOK {
			t.Fatalf("create: %d %v", st, out)
		}
		if st, out := n.admin(http.MethodDelete, "/admin/v1/users/gone@example.com/orgs/"+n.OrgID, nil); st != http.StatusOK {
			t.Fatalf("remove: %d %v", st, out)
		}
		b := n.browser(t)
		mustContain(t, "wrong password", b.signIn("gone@example.com", "not the password"), "do not match")
		for range 6 { // past the five failures a lockout takes
			p := b.signIn("gone@example.com", pw)
			mustStatus(t, "right password", p, http.StatusForbidden)
			mustContain(t, "right password", p, "belongs to no workspace")
		}
	})
	t.Run("no directory listing", func(t *testing.T) {
		mustStatus(t, "static dir", n.browser(t).get("/console/static/"), http.StatusNotFound)
	})
	t.Run("switch org", func(t *testing.T) {
		mustStatus(t, "become owner of Zed again", func() page {
			st, out := n.admin(http.MethodPost, "/admin/v1/users", map[string]any{"email": "z@example.com", "password": pw,
				"org_id": orgNamed(t, n, "Zed"), "role": "owner"})
			return page{Status: st, Body: fmt.Sprint(out)}
		}(), http.StatusOK)
		m := n.browser(t)
		m.signIn("z@example.com", pw)
		p := m.submit("/console", "/console/org", url.Values{"org_id": {orgNamed(t, n, "Zed")}})
		mustStatus(t, "switch", p, http.StatusSeeOther)
		mustContain(t, "switched", m.follow("/console/settings"), `id="save-settings"`)
		mustStatus(t, "switch to a foreign org", m.submit("/console", "/console/org", url.Values{"org_id": {"org_nope"}}), http.StatusNotFound)
	})
}

// TestQuotaPage: a workspace past its daily query quota is told what
// happened and when it ends, not a bare "Daily query quota exhausted".
func TestQuotaPage(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	b := n.browser(t)
	b.signUp("quota@example.com", pw, "Quota")
	org := orgOf(t, n, "quota@example.com")
	if st, out := n.admin(http.MethodPatch, "/admin/v1/orgs/"+org+"/settings",
		map[string]any{"plan": map[string]any{"daily_query_quota": 1}}); st != http.StatusOK {
		t.Fatalf("settings: %d %v", st, out)
	}
	mustStatus(t, "first feed", b.follow("/console/memories"), http.StatusOK)
	p := b.follow("/console/memories")
	mustStatus(t, "second feed", p, http.StatusTooManyRequests)
	mustContain(t, "quota page", p, "daily query quota is used up", "midnight UTC")
}
