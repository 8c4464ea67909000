package console_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser tests drive Debian's chromium through chromedp. They skip
// when no browser is installed (.ci/run installs one). Each saves its
// screenshots under its temp dir, and also under $HEBB_CONSOLE_SCREENSHOTS
// when set (how docs/console/ is made).

// browserGuard bounds one step in the browser; it is not a performance
// assertion.
const browserGuard = 30 * time.Second

func chromiumPath() string {
	if p := os.Getenv("HEBB_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startChromium starts a headless browser for the test, or skips it.
func startChromium(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("no chromium binary found (install Debian's chromium, or set HEBB_CHROMIUM): browser tests skipped")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	)
	ctx, cancel := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("cannot start %s: %v", path, err)
	}
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// tab is a new, isolated browser context (its own cookies): one person.
func tab(t *testing.T, browserCtx context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("new tab: %v", err)
	}
	return ctx
}

// run runs steps in ctx within the guard.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, browserGuard)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		shot(t, ctx, "failed-"+strings.ReplaceAll(what, " ", "-"))
		t.Fatalf("%s: %v", what, err)
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, browserGuard)
	defer cancel()
	s, err := chromedp.Run(c, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// shot saves a full-page screenshot named name.png.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, browserGuard)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	dirs := []string{shotDir(t)}
	if d := os.Getenv("HEBB_CONSOLE_SCREENSHOTS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, name+".png"), png, 0o644); err != nil {
			t.Errorf("save screenshot: %v", err)
		}
	}
}

var shotDirs = map[*testing.T]string{}

func shotDir(t *testing.T) string {
	root := t
	if d, ok := shotDirs[root]; ok {
		return d
	}
	d := t.TempDir()
	shotDirs[root] = d
	t.Logf("screenshots in %s", d)
	return d
}

func navigate(n *node, path string) chromedp.Action[chromedp.Void] {
	return chromedp.Navigate(n.URL + path)
}

func fill(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), value)
}

func click(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(sel))
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}

// TestBrowserConsole walks the console as two people would: sign up, sign
// in, create a key and use it, hide replaced memories, invite by e-mail and
// accept, redeem a join link, revoke.
func TestBrowserConsole(t *testing.T) {
	browserCtx := startChromium(t)
	n := startNode(t, nodeOpts{vault: true})
	owner := tab(t, browserCtx)
	const ownerPW = "a long owner password"

	run(t, owner, "sign up",
		navigate(n, "/console/signup"), visible("#signup-title"),
		fill("#email", "ann@example.com"), fill("#org_name", "Ann's research lab"),
		fill("#password", ownerPW), fill("#password2", ownerPW))
	shot(t, owner, "signup")
	run(t, owner, "submit sign-up", click("form button[type=submit]"), visible("#overview"))

	run(t, owner, "sign out", click(`form[action="/console/signout"] button`), visible("#signin-title"))
	shot(t, owner, "signin")
	run(t, owner, "sign in", fill("#email", "ann@example.com"), fill("#password", ownerPW),
		click("form button[type=submit]"), visible("#overview"))

	run(t, owner, "create key", navigate(n, "/console/keys"), fill("#label", "research agent"),
		click(`form[action="/console/keys"] button[type=submit]`), visible("#new-key-value"))
	key := text(t, owner, "#new-key-value")
	shot(t, owner, "keys")
	if !strings.HasPrefix(key, "mk_live_") {
		t.Fatalf("key shown: %q", key)
	}
	oldID, newID := seedMemories(t, n, key)

	run(t, owner, "memories", navigate(n, "/console/memories"), visible("[data-feed]"))
	if feed := text(t, owner, "[data-feed]"); !strings.Contains(feed, "standup is at 9:30") {
		t.Fatalf("replaced memory missing before the switch:\n%s", feed)
	}
	run(t, owner, "hide replaced", navigate(n, "/console/settings"), click("label.switch-row"), click("#save-settings"),
		visible(".notice.ok"))
	shot(t, owner, "settings")
	run(t, owner, "memories again", navigate(n, "/console/memories"), visible("[data-feed]"))
	if feed := text(t, owner, "[data-feed]"); strings.Contains(feed, "standup is at 9:30") || !strings.Contains(feed, "standup moved to 10:00") {
		t.Fatalf("feed after hiding replaced memories:\n%s", feed)
	}
	shot(t, owner, "memories")
	run(t, owner, "memory", navigate(n, "/console/memories/"+oldID), visible("#atom-content"))
	shot(t, owner, "memory")
	run(t, owner, "search", navigate(n, "/console/memories?q=when+is+the+standup&min_relevance=0"), visible("#results-title"))
	shot(t, owner, "search")
	_ = newID

	run(t, owner, "create room", navigate(n, "/console/rooms"), fill("#room-name", "Design decisions"),
		click(`form[action="/console/rooms"] button[type=submit]`), visible("#room-title"))
	run(t, owner, "invite", fill("#invite-email", "bob@example.com"), click(`input[name=scope][value=read]`),
		click(`form[action$="/invitations"] button[type=submit]`), visible(".notice.ok"))
	msg := n.Mail.wait(t)
	link := linkRE.FindString(msg.Text)
	if link == "" || strings.Contains(msg.Text, "Design decisions") {
		t.Fatalf("invitation mail:\n%s", msg.Text)
	}

	guest := tab(t, browserCtx)
	const guestPW = "a long guest password"
	run(t, guest, "open invitation", chromedp.Navigate(link), visible("#inv-title"))
	shot(t, guest, "invitation")
	if body := text(t, guest, "main"); strings.Contains(body, "Design decisions") {
		t.Fatal("room name shown before acceptance")
	}
	run(t, guest, "sign up from the invitation", click(`a[href^="/console/signup"]`), visible("#signup-title"),
		fill("#password", guestPW), fill("#password2", guestPW), click("form button[type=submit]"), visible("#accept"))
	run(t, guest, "accept", click("#accept"), visible("#joined-address"))
	shot(t, guest, "accepted")
	if body := text(t, guest, "main"); !strings.Contains(body, "Design decisions") {
		t.Fatalf("room name not shown after acceptance:\n%s", body)
	}

	ops := mintRoom(t, n, key, "Ops runbook")
	code := mintCode(t, n, key, ops)
	run(t, guest, "join link", navigate(n, "/console/join/"+code), visible("#join"))
	shot(t, guest, "join")
	run(t, guest, "redeem", click("#join"), visible("#room-title"))

	run(t, owner, "room page", navigate(n, "/console/rooms/"+ops), visible("#members-title"))
	shot(t, owner, "room")
	run(t, owner, "revoke", click(`form[action$="/revoke"] button`), visible("#confirm-dialog[open]"),
		click("[data-confirm-ok]"), visible(".notice.ok"))
	if members := text(t, owner, "table.members"); !strings.Contains(members, "revoked") {
		t.Fatalf("member not revoked:\n%s", members)
	}
	run(t, guest, "rooms after revoke", navigate(n, "/console/rooms"), visible("#rooms-title"))
	if rooms := text(t, guest, "main"); strings.Contains(rooms, "Ops runbook") || !strings.Contains(rooms, "Design decisions") {
		t.Fatalf("guest's rooms after the revocation:\n%s", rooms)
	}

	run(t, owner, "vault", navigate(n, "/console/vault"), fill("#alias", "github.token"), fill("#value", "ghp_not_a_real_token"),
		fill("#context", "Release agent pushes tags"), click(`form[action="/console/vault"] button[type=submit]`), visible(".notice.ok"))
	if body := text(t, owner, "main"); strings.Contains(body, "ghp_not_a_real_token") || !strings.Contains(body, "github.token") {
		t.Fatalf("vault page:\n%s", body)
	}
	shot(t, owner, "vault")
	run(t, owner, "rooms", navigate(n, "/console/rooms"), visible("#rooms-title"))
	shot(t, owner, "rooms")
	run(t, owner, "overview", navigate(n, "/console"), visible("#overview"))
	shot(t, owner, "overview")
	run(t, owner, "dark", chromedp.Evaluate[chromedp.Void](`localStorage.setItem("hebb-theme","dark")`),
		navigate(n, "/console/memories/"+oldID), visible("#atom-content"))
	shot(t, owner, "memory-dark")
	run(t, owner, "dark overview", navigate(n, "/console"), visible("#overview"))
	shot(t, owner, "overview-dark")
	run(t, owner, "narrow", chromedp.EmulateViewport(390, 844), navigate(n, "/console/memories"), visible("[data-feed]"))
	shot(t, owner, "memories-mobile")
	run(t, owner, "wide again", chromedp.EmulateViewport(1280, 860))

	operator := tab(t, browserCtx)
	if st, out := n.admin(http.MethodPost, "/admin/v1/users", map[string]any{"email": "ops@example.com",
		"password": ownerPW, "org_id": n.OrgID, "operator": true}); st != http.StatusOK {
		t.Fatalf("create operator: %d %v", st, out)
	}
	run(t, operator, "operator", navigate(n, "/console/signin"), fill("#email", "ops@example.com"), fill("#password", ownerPW),
		click("form button[type=submit]"), visible("#overview"), navigate(n, "/console/cluster"), visible("#nodes-title"))
	shot(t, operator, "cluster")
}

// seedMemories writes a few memories with key, one replacing another, and
// returns the replaced and the replacing IDs.
func seedMemories(t *testing.T, n *node, key string) (string, string) {
	t.Helper()
	write := func(body map[string]any) string {
		st, out := n.api(key, http.MethodPost, "/memory/write", body)
		if st != http.StatusOK {
			t.Fatalf("write: %d %v", st, out)
		}
		id, _ := out["atom_id"].(string)
		return id
	}
	write(map[string]any{"content": "Prefers concise answers with code first, explanation after.", "domain": "preferences",
		"concepts": []string{"style", "code"}})
	write(map[string]any{"content": "Chose Postgres over DynamoDB for the billing service: we need multi-row transactions.",
		"domain": "decisions", "concepts": []string{"postgres", "billing", "transactions"}})
	write(map[string]any{"content": "Flaky CI on arm64 came from a race in the retry helper; run tests with -race before merging.",
		"domain": "lessons", "concepts": []string{"ci", "race", "testing"}})
	old := write(map[string]any{"content": "The team standup is at 9:30 in the small room.", "domain": "team",
		"concepts": []string{"standup", "schedule"}})
	replacing := write(map[string]any{"content": "The team standup moved to 10:00, online only.", "domain": "team",
		"concepts": []string{"standup", "schedule"}, "supersedes": []string{old}})
	return old, replacing
}

func mintRoom(t *testing.T, n *node, key, name string) string {
	t.Helper()
	st, out := n.api(key, http.MethodPost, "/memory/rooms", map[string]any{"name": name})
	if st != http.StatusOK {
		t.Fatalf("create room: %d %v", st, out)
	}
	return out["room_id"].(string)
}

func mintCode(t *testing.T, n *node, key, room string) string {
	t.Helper()
	st, out := n.api(key, http.MethodPost, "/memory/rooms/"+room+"/invites", map[string]any{"scope": "read_write"})
	if st != http.StatusOK {
		t.Fatalf("mint invite: %d %v", st, out)
	}
	return out["code"].(string)
}

// TestBrowserFeedAfterSessionEnds: a feed scrolled after the session ended
// goes to the sign-in page; the fragment route's redirect put the sign-in
// page into the feed.
func TestBrowserFeedAfterSessionEnds(t *testing.T) {
	browserCtx := startChromium(t)
	n := startNode(t, nodeOpts{})
	const pass = "a long enough password"
	if st, out := n.admin(http.MethodPost, "/admin/v1/users", map[string]any{"email": "scroll@example.com", "password": pass,
		"org_id": n.OrgID}); st != http.StatusOK {
		t.Fatalf("create user: %d %v", st, out)
	}
	for i := range 25 { // more than a page of the feed (20)
		if st, out := n.api(n.Key, http.MethodPost, "/memory/write", map[string]any{
			"content": fmt.Sprintf("Feed entry %d about the quarterly planning topic %d", i, i*7919)}); st != http.StatusOK {
			t.Fatalf("write %d: %d %v", i, st, out)
		}
	}
	b := tab(t, browserCtx)
	run(t, b, "sign in", navigate(n, "/console/signin"), fill("#email", "scroll@example.com"), fill("#password", pass),
		click("form button[type=submit]"), visible("#overview"))
	run(t, b, "memories", navigate(n, "/console/memories"), visible("[data-feed] [data-next]"))
	if st, out := n.admin(http.MethodPut, "/admin/v1/users/scroll@example.com/password",
		map[string]any{"password": "another long password"}); st != http.StatusOK { // ends every session
		t.Fatalf("set password: %d %v", st, out)
	}
	run(t, b, "scroll", chromedp.ScrollIntoView("[data-feed] [data-next]"))
	// The page itself moves to the sign-in form (the old script put that
	// form inside the feed, where #signin-title showed as well).
	run(t, b, "sign-in form", visible("#signin-title"))
	c, cancel := context.WithTimeout(b, browserGuard)
	defer cancel()
	if path, err := chromedp.Run(c, chromedp.Evaluate[string]("location.pathname")); err != nil || path != "/console/signin" {
		t.Fatalf("the page after the feed's next page: %q, %v (want the sign-in page, not a feed holding it)", path, err)
	}
}
