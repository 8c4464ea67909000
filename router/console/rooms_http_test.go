package console_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var roomLinkRE = regexp.MustCompile(`/console/rooms/(room_[A-Z0-9]+)`)

// createRoom creates a room in the browser's org and returns its ID.
func (b *browser) createRoom(name string) string {
	b.t.Helper()
	p := b.submit("/console/rooms", "/console/rooms", url.Values{"name": {name}})
	mustStatus(b.t, "create room", p, http.StatusSeeOther)
	m := roomLinkRE.FindStringSubmatch(p.Location)
	if m == nil {
		b.t.Fatalf("create room went to %q", p.Location)
	}
	return m[1]
}

func TestHideReplacedMemories(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	b := n.browser(t)
	b.signUp("hide@example.com", pw, "")
	key := b.createKey("agent")
	_, old := n.api(key, http.MethodPost, "/memory/write", map[string]any{"content": "Deploys happen on Fridays", "domain": "ops"})
	oldID := old["atom_id"].(string)
	st, out := n.api(key, http.MethodPost, "/memory/write", map[string]any{"content": "Deploys happen on Tuesdays now",
		"domain": "ops", "supersedes": []string{oldID}})
	if st != http.StatusOK {
		t.Fatalf("superseding write: %d %v", st, out)
	}
	newID := out["atom_id"].(string)
	p := b.follow("/console/memories")
	mustContain(t, "feed before", p, "Deploys happen on Fridays", "Deploys happen on Tuesdays now", "Replaced")
	t.Run("detail shows the chain", func(t *testing.T) {
		p := b.follow("/console/memories/" + oldID)
		mustStatus(t, "detail", p, http.StatusOK)
		mustContain(t, "detail", p, "Revisions", "Head", "/console/memories/"+newID)
	})
	mustStatus(t, "save", b.submit("/console/settings", "/console/settings", url.Values{"hide_replaced": {"on"}}), http.StatusSeeOther)
	p = b.follow("/console/memories")
	mustContain(t, "feed after", p, "Deploys happen on Tuesdays now")
	if strings.Contains(p.Body, "Deploys happen on Fridays") {
		t.Fatal("replaced memory still in the feed")
	}
	t.Run("search honours it; include_history brings it back", func(t *testing.T) {
		p := b.follow("/console/memories?q=" + url.QueryEscape("when do deploys happen") + "&min_relevance=0")
		if strings.Contains(p.Body, "on Fridays") {
			t.Fatal("replaced memory in search")
		}
		p = b.follow("/console/memories?s=1&associations=on&include_history=on&min_relevance=0&q=" + url.QueryEscape("when do deploys happen"))
		mustContain(t, "search with history", p, "on Fridays")
		// "Show timings" shows them (the box was read and sent, and the
		// answer's timings never shown).
		p = b.follow("/console/memories?s=1&timings=on&min_relevance=0&q=" + url.QueryEscape("when do deploys happen"))
		mustContain(t, "search with timings", p, "Embedding ", "vector load")
	})
	t.Run("delete asks first", func(t *testing.T) {
		p := b.submit("/console/memories/"+newID, "/console/memories/"+newID+"/delete", nil)
		mustStatus(t, "unconfirmed", p, http.StatusSeeOther)
		mustContain(t, "confirmation", b.follow(p.Location), "Delete this memory?", "Delete permanently")
		p = b.submit("/console/memories/"+newID, "/console/memories/"+newID+"/delete", url.Values{"confirm": {"yes"}})
		mustStatus(t, "confirmed", p, http.StatusSeeOther)
		mustStatus(t, "gone", b.follow("/console/memories/"+newID), http.StatusNotFound)
	})
}

func TestFeedPages(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	b := n.browser(t)
	b.signUp("feed@example.com", pw, "")
	key := b.createKey("bulk")
	items := make([]map[string]any, 25)
	for i := range items {
		items[i] = map[string]any{"content": "Bulk memory number " + strings.Repeat("x", i) + " about topic " + string(rune('A'+i))}
	}
	if st, out := n.api(key, http.MethodPost, "/memory/write_batch", map[string]any{"items": items}); st != http.StatusOK {
		t.Fatalf("batch: %d %v", st, out)
	}
	p := b.follow("/console/memories")
	next := regexp.MustCompile(`data-next="([^"]+)"`).FindStringSubmatch(p.Body)
	if next == nil {
		t.Fatal("no next page")
	}
	frag := b.get(strings.ReplaceAll(next[1], "&amp;", "&"))
	mustStatus(t, "fragment", frag, http.StatusOK)
	if strings.Contains(frag.Body, "<html") || strings.Count(frag.Body, "<article") != 5 {
		t.Fatalf("fragment: %d memories\n%s", strings.Count(frag.Body, "<article"), frag.Body)
	}
}

func TestEmailInvitationAndJoinLink(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	owner, guest := n.browser(t), n.browser(t)
	owner.signUp("owner@example.com", pw, "Owner Co")
	room := owner.createRoom("Design decisions")
	p := owner.submit("/console/rooms/"+room, "/console/rooms/"+room+"/invitations", url.Values{"email": {"Guest@Example.com"}, "scope": {"read"}})
	mustStatus(t, "invite", p, http.StatusSeeOther)
	msg := n.Mail.wait(t)
	if msg.To != "guest@example.com" || strings.Contains(msg.Text+msg.HTML+msg.Subject, "Design decisions") {
		t.Fatalf("message to %q names the room or goes astray:\n%s", msg.To, msg.Text)
	}
	link := linkRE.FindString(msg.Text)
	if link == "" {
		t.Fatalf("no link in\n%s", msg.Text)
	}
	path := strings.TrimPrefix(link, n.URL)
	mustContain(t, "pending", owner.follow("/console/rooms/"+room), "guest@example.com", "Pending invitations")

	t.Run("signed out: no room name", func(t *testing.T) {
		p := guest.get(path)
		mustStatus(t, "invitation", p, http.StatusOK)
		mustContain(t, "invitation", p, "owner@example.com", "read-only", "Sign in to accept")
		if strings.Contains(p.Body, "Design decisions") {
			t.Fatal("room name shown before acceptance")
		}
	})
	t.Run("another account cannot accept", func(t *testing.T) {
		other := n.browser(t)
		other.signUp("other@example.com", pw, "")
		p := other.follow(path)
		mustContain(t, "mismatch", p, "This invitation is for guest@example.com")
		mustStatus(t, "accept", other.submit(path, path, nil), http.StatusForbidden)
	})
	var guestOrg string
	t.Run("accept", func(t *testing.T) {
		guest.signUp("guest@example.com", pw, "Guest Co")
		guestOrg = orgOf(t, n, "guest@example.com")
		p := guest.follow(path)
		if strings.Contains(p.Body, "Design decisions") {
			t.Fatal("room name shown before acceptance")
		}
		p = guest.submit(path, path, nil)
		mustStatus(t, "accept", p, http.StatusOK)
		mustContain(t, "accepted", p, "You joined", "Design decisions", "xroom:"+room)
		mustContain(t, "guest's room", guest.follow("/console/rooms/"+room), "read only")
		mustContain(t, "owner sees the member", owner.follow("/console/rooms/"+room), guestOrg, "Guest Co")
		mustStatus(t, "second use", n.browser(t).get(path), http.StatusNotFound)
	})
	t.Run("member changes", func(t *testing.T) {
		p := owner.submit("/console/rooms/"+room, "/console/rooms/"+room+"/members/"+guestOrg, url.Values{"scope": {"read_write"}, "expires": {"2999-01-31"}})
		mustStatus(t, "update", p, http.StatusSeeOther)
		p = owner.follow("/console/rooms/" + room)
		mustContain(t, "updated", p, `value="2999-01-31"`)
		p = owner.submit("/console/rooms/"+room, "/console/rooms/"+room+"/members/"+guestOrg, url.Values{"scope": {"read"}, "expires": {"2001-01-01"}})
		mustStatus(t, "past expiry", p, http.StatusBadRequest)
		// A change of access alone keeps an expiry set to the minute
		// through the API (it became 23:59:59 of its day).
		const exact = "2999-03-04T10:00:00Z"
		key := owner.createKey("expiry")
		if st, out := n.api(key, http.MethodPatch, "/memory/rooms/"+room+"/members/"+guestOrg, map[string]any{"expires_at": exact}); st != http.StatusOK {
			t.Fatalf("api expiry: %d %v", st, out)
		}
		mustContain(t, "shown", owner.follow("/console/rooms/"+room), `name="expires_shown" value="2999-03-04"`)
		p = owner.submit("/console/rooms/"+room, "/console/rooms/"+room+"/members/"+guestOrg,
			url.Values{"scope": {"read_write"}, "expires": {"2999-03-04"}, "expires_shown": {"2999-03-04"}})
		mustStatus(t, "access only", p, http.StatusSeeOther)
		if st, out := n.api(key, http.MethodGet, "/memory/rooms/"+room+"/members", nil); st != http.StatusOK || !strings.Contains(fmt.Sprint(out), "2999-03-04T10:00:00") {
			t.Fatalf("expiry after an access change: %d %v", st, out)
		}
		mustStatus(t, "guest cannot manage", guest.submit("/console/rooms/"+room, "/console/rooms/"+room+"/archive", nil), http.StatusForbidden)
	})
	t.Run("join link", func(t *testing.T) {
		ops := owner.createRoom("Ops runbook")
		st, out := n.api(n.Key, http.MethodGet, "/memory/rooms", nil)
		_ = st
		_ = out
		ownerKey := owner.createKey("minting")
		st, out = n.api(ownerKey, http.MethodPost, "/memory/rooms/"+ops+"/invites", map[string]any{"scope": "read_write"})
		if st != http.StatusOK {
			t.Fatalf("mint: %d %v", st, out)
		}
		code := out["code"].(string)
		joinPath := "/console/join/" + code
		signedOut := n.browser(t)
		p := signedOut.get(joinPath)
		mustStatus(t, "join signed out", p, http.StatusSeeOther)
		if !strings.Contains(p.Location, url.QueryEscape(joinPath)) {
			t.Fatalf("sign-in does not come back: %s", p.Location)
		}
		p = guest.follow(joinPath)
		mustContain(t, "preview", p, "Ops runbook", "read &amp; write")
		p = guest.submit(joinPath, joinPath, nil)
		mustStatus(t, "join", p, http.StatusSeeOther)
		mustContain(t, "joined", guest.follow("/console/rooms"), "Ops runbook")
		mustStatus(t, "used code", guest.follow(joinPath), http.StatusNotFound)
		t.Run("revoke", func(t *testing.T) {
			st, out := n.api(ownerKey, http.MethodPost, "/memory/rooms/"+ops+"/invites", map[string]any{"max_uses": 5})
			if st != http.StatusOK {
				t.Fatalf("mint: %d %v", st, out)
			}
			before := "/console/join/" + out["code"].(string)
			p := owner.submit("/console/rooms/"+ops, "/console/rooms/"+ops+"/members/"+guestOrg+"/revoke", nil)
			mustStatus(t, "revoke", p, http.StatusSeeOther)
			page := owner.follow("/console/rooms/" + ops)
			mustContain(t, "revoked", page, "revoked")
			if strings.Contains(page.Body, `id="m-`+guestOrg+`"`) {
				t.Fatal("a revoked member still has the access form (only an active membership changes)")
			}
			if strings.Contains(guest.follow("/console/rooms").Body, "Ops runbook") {
				t.Fatal("revoked room still listed")
			}
			mustStatus(t, "revoked member's room page", guest.follow("/console/rooms/"+ops), http.StatusNotFound)
			// A code minted before the revocation does not undo it, and the
			// page says why (it said "Not an active member of this room").
			p = guest.submit(before, before, nil)
			mustStatus(t, "old code", p, http.StatusForbidden)
			mustContain(t, "old code", p, "ask the room&#39;s owner for a new code")
		})
	})
	t.Run("cancel by another org refused", func(t *testing.T) {
		owner.submit("/console/rooms/"+room, "/console/rooms/"+room+"/invitations", url.Values{"email": {"late@example.com"}, "scope": {"read"}})
		n.Mail.wait(t)
		invID := regexp.MustCompile(`/invitations/(inv_[A-Z0-9]+)/cancel`).FindStringSubmatch(owner.follow("/console/rooms/" + room).Body)
		if invID == nil {
			t.Fatal("no pending invitation")
		}
		p := guest.submit("/console/rooms", "/console/rooms/"+room+"/invitations/"+invID[1]+"/cancel", nil)
		mustStatus(t, "foreign cancel", p, http.StatusForbidden)
		mustStatus(t, "owner cancels", owner.submit("/console/rooms/"+room, "/console/rooms/"+room+"/invitations/"+invID[1]+"/cancel", nil), http.StatusSeeOther)
	})
}

// TestInvitationsLimited: the operator's mail server sends invitations
// naming an inviter nobody verified, so one person sends at most 20 a
// window (anyone who signed up could mail any address without limit).
func TestInvitationsLimited(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{})
	b := n.browser(t)
	b.signUp("inviter@example.com", pw, "")
	room := b.createRoom("Invitations")
	invite := func(i int) page {
		return b.submit("/console/rooms/"+room, "/console/rooms/"+room+"/invitations",
			url.Values{"email": {fmt.Sprintf("person%d@example.com", i)}, "scope": {"read"}})
	}
	for i := range 20 {
		mustStatus(t, "invite", invite(i), http.StatusSeeOther)
	}
	p := invite(20)
	mustStatus(t, "invite past the limit", p, http.StatusTooManyRequests)
	mustContain(t, "limited", p, "Too many invitations sent")
}

func TestMailOffAndVault(t *testing.T) {
	t.Parallel()
	n := startNode(t, nodeOpts{noMail: true})
	b := n.browser(t)
	b.signUp("nomail@example.com", pw, "")
	room := b.createRoom("Quiet room")
	p := b.follow("/console/rooms/" + room)
	mustContain(t, "room", p, "E-mail is not configured")
	p = b.submit("/console/rooms/"+room, "/console/rooms/"+room+"/invitations", url.Values{"email": {"x@example.com"}, "scope": {"read"}})
	mustStatus(t, "invite without mail", p, http.StatusServiceUnavailable)
	t.Run("vault without a master key", func(t *testing.T) {
		p := b.submit("/console/vault", "/console/vault", url.Values{"alias": {"gh.token"}, "value": {"s3cret-value"}, "context": {"CI"}})
		mustStatus(t, "store", p, http.StatusServiceUnavailable)
		if strings.Contains(p.Body, "s3cret-value") {
			t.Fatal("secret value echoed")
		}
	})
}
