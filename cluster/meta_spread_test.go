package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A key revocation answers only once every other node's meta replica has
// applied it: each node authenticates from its own replica, and the revoked
// key was still accepted through the others for a few milliseconds.
func TestRevocationInEffectEverywhereWhenAnswered(t *testing.T) {
	nodes, ctx, at := threeMetaReplicas(t)
	if _, err := nodes[0].ProposeMeta(ctx, EncodeCreateOrg(CreateOrg{OrgID: "org_a", Name: "A", CreatedAt: at})); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		raw := "mk_live_" + string(rune('a'+i)) + "bcdefghijklmnopqrstuvwxyz012345"
		key, err := NewKeyRecord(raw, "org_a", "t", at)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nodes[0].ProposeMeta(ctx, EncodeCreateKey(CreateKey{NewKey: key})); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "the key on every node", func() bool {
			for _, n := range nodes {
				if _, _, err := n.Meta().Authenticate(raw); err != nil {
					return false
				}
			}
			return true
		})
		via := nodes[i%3]
		if _, err := via.ProposeMeta(ctx, EncodeRevokeKey(RevokeKey{KeyID: key.KeyID, At: at})); err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			if _, _, err := n.Meta().Authenticate(raw); !errors.Is(err, ErrRevokedKey) {
				t.Fatalf("revocation %d through %s: %s still authenticates the key (%v)", i, via.cfg.NodeID, n.cfg.NodeID, err)
			}
		}
	}
}

// An embedded node without gossip has no one to spread to: a write that
// takes access away answers as before (it dereferenced the absent
// membership, and PATCH settings answered 500).
func TestRestrictingWriteWithoutGossip(t *testing.T) {
	cfg := testConfig(t, "solo")
	cfg.GossipAddr = ""
	c := startWith(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	at := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	if _, err := c.ProposeMeta(ctx, EncodeCreateOrg(CreateOrg{OrgID: "org_a", Name: "A", CreatedAt: at})); err != nil {
		t.Fatal(err)
	}
	limit := int64(5)
	if _, err := c.ProposeMeta(ctx, EncodeUpdateSettings(UpdateSettings{OrgID: "org_a", AtomLimit: &limit})); err != nil {
		t.Fatal(err)
	}
}

// What a meta write adds is on every node once it answers too: a key
// created through one node and revoked at once in another's console was
// refused there as unknown, and pages listed the org's keys without it.
func TestMetaCreationInEffectEverywhereWhenAnswered(t *testing.T) {
	nodes, ctx, at := threeMetaReplicas(t)
	for i := range 20 {
		via := nodes[i%3]
		org := fmt.Sprintf("org_%d", i)
		if _, err := via.ProposeMeta(ctx, EncodeCreateOrg(CreateOrg{OrgID: org, Name: org, CreatedAt: at})); err != nil {
			t.Fatal(err)
		}
		raw := "mk_live_" + string(rune('a'+i)) + "bcdefghijklmnopqrstuvwxyz012345"
		key, err := NewKeyRecord(raw, org, "t", at)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := via.ProposeMeta(ctx, EncodeCreateKey(CreateKey{NewKey: key})); err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			if _, ok := n.Meta().Org(org); !ok {
				t.Fatalf("org %d created through %s: missing on %s", i, via.cfg.NodeID, n.cfg.NodeID)
			}
			if _, ok := n.Meta().Key(key.KeyID); !ok || len(n.Meta().Keys(org)) != 1 {
				t.Fatalf("key %d created through %s: missing on %s", i, via.cfg.NodeID, n.cfg.NodeID)
			}
		}
	}
}

// A chat user's new name is read back through every node once the change
// answers: a node reads users from its own meta replica and syncs only for
// one it does not hold, so a renamed user was served under the old name.
func TestChatProfileInEffectEverywhereWhenAnswered(t *testing.T) {
	nodes, ctx, at := threeMetaReplicas(t)
	guest := ChatUser{ID: "user_guest1", Name: "Guest", Anonymous: true, CreatedAt: at, UpdatedAt: at}
	sess := ChatSession{ID: "sess_1", Hash: "h1", UserID: guest.ID, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	if _, err := nodes[0].ProposeMeta(ctx, EncodeChatSignIn(ChatSignIn{User: guest, Session: sess, Now: at})); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		name := fmt.Sprintf("Name %d", i)
		via := nodes[i%3]
		if _, err := via.ProposeMeta(ctx, EncodeChatUpdateUser(ChatUpdateUser{UserID: guest.ID, Name: &name, Now: at})); err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			if u, ok := n.Meta().ChatUser(guest.ID); !ok || u.Name != name {
				t.Fatalf("rename %d through %s: %s reads %q (%v)", i, via.cfg.NodeID, n.cfg.NodeID, u.Name, ok)
			}
		}
	}
}

// threeMetaReplicas starts three nodes and waits until each holds a meta
// replica; it returns them, a context ending with the test, and a time
// for the commands.
func threeMetaReplicas(t *testing.T) ([]*Cluster, context.Context, time.Time) {
	nodes := startNodes(t, 0, "n1", "n2", "n3")
	waitUntil(t, "three meta replicas", func() bool {
		v, nv, err := nodes[0].metaG.Voters()
		return err == nil && len(v)+len(nv) == 3
	})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return nodes, ctx, time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
}

// A node that does not confirm a meta write is not waited for again until
// spreadBackoff has passed (each write waited metaSpreadWait for a stuck
// node, sign-ins included), and is logged once for it.
func TestSpreadSkipsAStuckNode(t *testing.T) {
	var s spreadSkips
	t0 := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	if !s.ask("n2", t0) {
		t.Fatal("a node never asked is skipped")
	}
	if s.answered("n2", nil, t0) || !s.ask("n2", t0) {
		t.Fatal("a node that confirmed is skipped or logged")
	}
	stuck := errors.New("context deadline exceeded")
	if !s.answered("n2", stuck, t0) {
		t.Fatal("the first failure is not logged")
	}
	if s.answered("n2", stuck, t0.Add(time.Second)) {
		t.Fatal("a second failure within the backoff is logged again")
	}
	if s.ask("n2", t0.Add(spreadBackoff-time.Millisecond)) || !s.ask("n3", t0) {
		t.Fatal("the backoff does not hold for n2 alone")
	}
	if !s.ask("n2", t0.Add(spreadBackoff)) {
		t.Fatal("n2 is still skipped after the backoff")
	}
	if s.answered("n2", nil, t0.Add(spreadBackoff)); !s.ask("n2", t0.Add(spreadBackoff)) {
		t.Fatal("n2 skipped after it confirmed")
	}
}
