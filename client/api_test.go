package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hebbdb/hebb/client"
)

// TestAPISurface drives the endpoints the examples do not, against the
// in-process server, and checks the typed answers.
func TestAPISurface(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newTestClient(t, "surface")
	w, err := c.Write(ctx, client.WriteRequest{Content: "Grafana dashboards live in the ops folder", Domain: "ops",
		Concepts: []string{"grafana", "dashboards"}, ExternalRef: "ref-1", Fingerprint: "fp-1",
		Metadata: map[string]any{"team": "sre <ops> & co", "n": 12345678901234567}})
	if err != nil || !w.Stored {
		t.Fatalf("write: %v %+v", err, w)
	}

	t.Run("lookups", func(t *testing.T) {
		a, err := c.Atom(ctx, w.ID())
		if err != nil {
			t.Fatal(err)
		}
		if a.Domain != "ops" || a.AtomType != client.AtomEpisode || a.ExternalRef == nil || *a.ExternalRef != "ref-1" ||
			string(a.Metadata) != `{"n":12345678901234567,"team":"sre <ops> & co"}` || a.CreatedAt.IsZero() || a.SupersededBy != nil {
			t.Fatalf("atom %+v metadata %s", a, a.Metadata)
		}
		b, err := c.AtomByExternalRef(ctx, "ref-1")
		if err != nil || b.AtomID != w.ID() {
			t.Fatalf("by ref: %v %+v", err, b)
		}
		if _, err := c.Atom(ctx, "00000000-0000-0000-0000-000000000000"); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("unknown atom: %v", err)
		}
	})
	t.Run("reads", func(t *testing.T) {
		res, err := c.ReadBatch(ctx, []client.ReadRequest{{Query: "grafana dashboards", MinRelevance: client.Ptr(0.0)},
			{Query: "nothing", Fingerprint: "fp-1"}})
		if err != nil || len(res) != 2 || len(res[0].Items) == 0 || !res[1].EpisodicHit {
			t.Fatalf("read-batch: %v %+v", err, res)
		}
		q, err := c.Query(ctx, client.QueryRequest{Query: "grafana dashboards", Domains: []string{"ops"},
			MetadataFilter: []client.Condition{{Field: "team", Op: "eq", Value: "sre <ops> & co"}}, MinRelevance: client.Ptr(0.0)})
		if err != nil || len(q.Items) != 1 || q.Items[0].AtomID != w.ID() {
			t.Fatalf("query: %v %+v", err, q)
		}
		_, err = c.Query(ctx, client.QueryRequest{Query: "x", Domains: []string{"xroom:room_01ARZ3NDEKTSV4RRFFQ69G5FAV"}})
		if !errors.Is(err, client.ErrValidation) {
			t.Fatalf("query on a room: %v", err)
		}
	})
	t.Run("feedback and graph", func(t *testing.T) {
		fb, err := c.Feedback(ctx, client.FeedbackRequest{AtomIDs: []string{w.ID()}, Outcome: 1,
			QueryConcepts: []string{"monitoring"}})
		if err != nil || fb.UpdatedCount != 1 {
			t.Fatalf("feedback: %v %+v", err, fb)
		}
		g, err := c.Graph(ctx, client.GraphRequest{Seeds: []string{"grafana"}, MinWeight: client.Ptr(0.0)})
		if err != nil || len(g.Edges) == 0 || g.MinWeightApplied != 0 || g.Edges[0].UpdatedAt.IsZero() {
			t.Fatalf("graph: %v %+v", err, g)
		}
	})
	t.Run("stats and domains", func(t *testing.T) {
		st, err := c.Stats(ctx)
		if err != nil || st.TotalAtoms != 1 || st.Episodes != 1 || len(st.Domains) != 1 {
			t.Fatalf("stats: %v %+v", err, st)
		}
		d, err := c.Domains(ctx)
		if err != nil || len(d) != 1 || d[0] != "ops" {
			t.Fatalf("domains: %v %v", err, d)
		}
	})
	t.Run("health", func(t *testing.T) {
		h, err := c.Health(ctx)
		if err != nil || h.Status != "ok" || h.Version == "" {
			t.Fatalf("health: %v %+v", err, h)
		}
		r, err := c.Ready(ctx)
		if err != nil || !r.Ready || !r.Checks.Engine {
			t.Fatalf("ready: %v %+v", err, r)
		}
	})
	t.Run("idempotency key reused with another body", func(t *testing.T) {
		req := client.BatchWriteRequest{IdempotencyKey: "surface-key", Items: []client.WriteRequest{{Content: "batch one"}}}
		if _, err := c.WriteBatch(ctx, req); err != nil {
			t.Fatal(err)
		}
		req.Items[0].Content = "batch two"
		_, err := c.WriteBatch(ctx, req)
		if !errors.Is(err, client.ErrConflict) || client.ReasonOf(err) != "idempotency_key_reused" {
			t.Fatalf("reused key: %v", err)
		}
	})
	t.Run("deletes", func(t *testing.T) {
		d, err := c.DeleteAtom(ctx, w.ID())
		if err != nil || d.Deleted != 1 || d.HistoryDestroyed {
			t.Fatalf("delete atom: %v %+v", err, d)
		}
		if d, err = c.DeleteAtom(ctx, w.ID()); err != nil || d.Deleted != 0 {
			t.Fatalf("delete again: %v %+v", err, d)
		}
		dd, err := c.DeleteDomain(ctx, "general")
		if err != nil || dd.Domain != "general" || dd.Deleted != 1 {
			t.Fatalf("delete domain: %v %+v", err, dd)
		}
		if err := c.Reset(ctx); !errors.Is(err, client.ErrForbidden) {
			t.Fatalf("reset: %v", err)
		}
	})
	t.Run("a done context ends the call", func(t *testing.T) {
		done, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := c.Stats(done); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	})
}

func TestRoomsLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin, err := client.NewAdmin(rootURL, adminToken)
	if err != nil {
		t.Fatal(err)
	}
	guestOrg, err := admin.CreateOrg(ctx, "lifecycle-guest")
	if err != nil {
		t.Fatal(err)
	}
	owner := newTestClient(t, "lifecycle-owner")
	guest, _ := client.New(baseURL, guestOrg.APIKey)
	room, err := owner.CreateRoom(ctx, "ops room")
	if err != nil || room.Status != client.RoomActive || room.Address != client.RoomAddress(room.RoomID) {
		t.Fatalf("create: %v %+v", err, room)
	}
	inv, err := owner.CreateInvite(ctx, room.RoomID, client.InviteRequest{Scope: client.ScopeRead, MaxUses: 2, ExpiresInDays: 3})
	if err != nil || inv.MaxUses != 2 || inv.Scope != client.ScopeRead || inv.JoinURL == "" {
		t.Fatalf("invite: %v %+v", err, inv)
	}
	if list, err := owner.Invites(ctx, room.RoomID); err != nil || len(list) != 1 || list[0].Code != inv.Code {
		t.Fatalf("invites: %v %+v", err, list)
	}
	if _, err := guest.Invites(ctx, room.RoomID); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("guest lists invites: %v", err)
	}
	if _, err := guest.JoinRoom(ctx, inv.Code); err != nil {
		t.Fatal(err)
	}
	// A read member cannot write.
	_, err = guest.Write(ctx, client.WriteRequest{Content: "hello", Domain: room.Address})
	if !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("read member writes: %v", err)
	}
	// write_batch (underscore) mixes room and private items.
	b, err := owner.WriteBatchRooms(ctx, client.BatchWriteRequest{Items: []client.WriteRequest{
		{Content: "room fact", Domain: room.Address}, {Content: "private fact"}}})
	if err != nil || b.StoredCount != 2 {
		t.Fatalf("write_batch: %v %+v", err, b)
	}
	expires := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	m, err := owner.UpdateMember(ctx, room.RoomID, guestOrg.OrgID, client.MemberUpdate{ExpiresAt: client.Some(expires)})
	if err != nil || m.ExpiresAt == nil || !m.ExpiresAt.Equal(expires) {
		t.Fatalf("set expiry: %v %+v", err, m)
	}
	m, err = owner.UpdateMember(ctx, room.RoomID, guestOrg.OrgID, client.MemberUpdate{ExpiresAt: client.Null[time.Time]()})
	if err != nil || m.ExpiresAt != nil {
		t.Fatalf("clear expiry: %v %+v", err, m)
	}
	m, err = owner.UpdateMember(ctx, room.RoomID, guestOrg.OrgID, client.MemberUpdate{Scope: client.ScopeReadWrite})
	if err != nil || m.Scope != client.ScopeReadWrite || m.ExpiresAt != nil {
		t.Fatalf("scope only: %v %+v", err, m)
	}
	if m, err = owner.RevokeMember(ctx, room.RoomID, guestOrg.OrgID); err != nil || m.Status != client.MemberRevoked {
		t.Fatalf("revoke: %v %+v", err, m)
	}
	if _, err := guest.Read(ctx, client.ReadRequest{Query: "fact", Domain: room.Address}); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("revoked member reads: %v", err)
	}
	if r, err := owner.ArchiveRoom(ctx, room.RoomID); err != nil || r.Status != client.RoomArchived {
		t.Fatalf("archive: %v %+v", err, r)
	}
	if _, err := owner.Write(ctx, client.WriteRequest{Content: "late", Domain: room.Address}); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("write to archived room: %v", err)
	}
}

func TestAdminSurface(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := client.NewAdmin(baseURL, adminToken) // the /api/v1 suffix is dropped
	if err != nil {
		t.Fatal(err)
	}
	org, err := admin.CreateOrg(ctx, "admin-surface")
	if err != nil {
		t.Fatal(err)
	}
	orgs, err := admin.Orgs(ctx)
	if err != nil || len(orgs) == 0 {
		t.Fatalf("orgs: %v %v", err, orgs)
	}
	key, err := admin.CreateKey(ctx, org.OrgID, "second")
	if err != nil || key.APIKey == "" {
		t.Fatalf("key: %v %+v", err, key)
	}
	set, err := admin.UpdateSettings(ctx, org.OrgID, client.SettingsUpdate{Plan: &client.PlanUpdate{AtomLimit: client.Ptr[int64](1)}})
	if err != nil || set.Plan.AtomLimit != 1 {
		t.Fatalf("settings: %v %+v", err, set)
	}
	if got, err := admin.Settings(ctx, org.OrgID); err != nil || *got != *set {
		t.Fatalf("get settings: %v %+v", err, got)
	}
	c, _ := client.New(baseURL, key.APIKey)
	if _, err := c.Write(ctx, client.WriteRequest{Content: "one"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Write(ctx, client.WriteRequest{Content: "two"})
	if ae := client.AsAPIError(err); ae == nil || ae.StatusCode != 429 || ae.Reason != "atom_limit" || ae.Retryable {
		t.Fatalf("atom limit: %v", err)
	}
	cl, err := admin.Cluster(ctx)
	if err != nil || len(cl.Nodes) != 1 || len(cl.Groups) != 2 || cl.Meta.LeaderNodeID == nil {
		t.Fatalf("cluster: %v %+v", err, cl)
	}
	p, err := admin.Placement(ctx, org.OrgID)
	if err != nil || p.Tenant != org.OrgID || p.GroupID == 0 {
		t.Fatalf("placement: %v %+v", err, p)
	}
	u, err := admin.CreateUser(ctx, client.UserRequest{Email: "surface@example.com", Password: "a long password 1",
		OrgID: org.OrgID, Role: "member"})
	if err != nil || u.UserID == "" || u.OrgID != org.OrgID || u.Role != "member" || u.Email != "surface@example.com" {
		t.Fatalf("create user: %v %+v", err, u)
	}
	if _, err := admin.CreateUser(ctx, client.UserRequest{Email: "surface@example.com", Password: "not the password",
		OrgID: org.OrgID}); client.AsAPIError(err) == nil || client.AsAPIError(err).StatusCode != 409 {
		t.Fatalf("taken address, wrong password: %v", err)
	}
	if pc, err := admin.SetPassword(ctx, "surface@example.com", "another long password"); err != nil || pc.UserID != u.UserID || !pc.PasswordChanged {
		t.Fatalf("set password: %v %+v", err, pc)
	}
	if _, err := admin.SetPassword(ctx, "surface@example.com", "short"); !errors.Is(err, client.ErrValidation) {
		t.Fatalf("short password: %v", err)
	}
	gone, err := admin.RemoveUser(ctx, "surface@example.com", org.OrgID)
	if err != nil || gone.UserID != u.UserID || gone.OrgID != org.OrgID || !gone.Removed {
		t.Fatalf("remove user: %v %+v", err, gone)
	}
	if _, err := admin.RemoveUser(ctx, u.UserID, org.OrgID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("remove again: %v", err)
	}
	bad, _ := client.NewAdmin(rootURL, "wrong")
	if _, err := bad.Orgs(ctx); !errors.Is(err, client.ErrUnauthorized) {
		t.Fatalf("wrong token: %v", err)
	}
}
