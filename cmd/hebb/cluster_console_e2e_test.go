package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestE2EClusterConsole: an operator's calls and a person's console
// session go to whichever node a load balancer picks, each call right
// after the last: an org created through one node gets a console user
// through a second, a key and settings through a third, reads its settings
// back through another; the person signs in through one node and the
// session works on the next at once.
func TestE2EClusterConsole(t *testing.T) {
	t.Parallel()
	c := startCluster(t, 3)
	base := func(i int) string { return "http://" + c.nodes[i].httpAddr }
	const email, password = "ada@example.com", "correct horse battery"
	st, org := adminJSON(t, base(0), "POST", "/admin/v1/orgs", map[string]any{"name": "Ada Labs"})
	if st != 200 {
		t.Fatalf("create org: %d %v", st, org)
	}
	orgID, _ := org["org_id"].(string)
	if st, body := adminJSON(t, base(1), "POST", "/admin/v1/users",
		map[string]any{"email": email, "password": password, "org_id": orgID}); st != 200 {
		t.Fatalf("create console user through node 2: %d %v", st, body)
	}
	if st, body := adminJSON(t, base(2), "POST", "/admin/v1/orgs/"+orgID+"/keys", map[string]any{}); st != 200 {
		t.Fatalf("create a key through node 3: %d %v", st, body)
	}
	if st, body := adminJSON(t, base(2), "PATCH", "/admin/v1/orgs/"+orgID+"/settings",
		map[string]any{"hide_replaced": true}); st != 200 {
		t.Fatalf("settings through node 3: %d %v", st, body)
	}
	if st, body := adminJSON(t, base(1), "GET", "/admin/v1/orgs/"+orgID+"/settings", nil); st != 200 || body["hide_replaced"] != true {
		t.Fatalf("settings read back through node 2: %d %v", st, body)
	}

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page := func(res *http.Response, err error) (int, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	st, signin := page(browser.Get(base(1) + "/console/signin"))
	csrf := csrfRE.FindStringSubmatch(signin)
	if st != 200 || csrf == nil {
		t.Fatalf("sign-in page on node 2: %d", st)
	}
	if st, body := page(browser.PostForm(base(1)+"/console/signin",
		url.Values{"csrf": {csrf[1]}, "email": {email}, "password": {password}, "next": {"/console"}})); st != http.StatusSeeOther {
		t.Fatalf("sign-in on node 2: %d %s", st, body)
	}
	st, overview := page(browser.Get(base(2) + "/console"))
	if st != 200 || !strings.Contains(overview, email) {
		t.Fatalf("the console on node 3 with the session from node 2: %d %.300s", st, overview)
	}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// adminJSON sends one admin API request to base with the cluster's token.
func adminJSON(t *testing.T, base, method, path string, body any) (int, map[string]any) {
	t.Helper()
	return sendJSON(t, method, base+path, "X-Admin-Token", clusterAdmin, body)
}
