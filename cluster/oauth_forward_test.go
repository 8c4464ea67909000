package cluster

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestOAuthThroughFollower: OAuth commands proposed through a node that
// does not lead the meta group travel to its leader over the node
// transport, and come back with their results and errors as on the
// leader. Their result types were not registered for the transport, so
// the answer never arrived (EOF): OAuth sign-in worked only through the
// meta group's leader.
func TestOAuthThroughFollower(t *testing.T) {
	t.Parallel()
	nodes := startNodes(t, 0, "of1", "of2")
	var via *Cluster
	waitUntil(t, "a meta leader", func() bool {
		for _, n := range nodes {
			if n.metaG.IsLeader() {
				via = nodes[0]
				if n == nodes[0] {
					via = nodes[1]
				}
				return true
			}
		}
		return false
	})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	propose := func(cmd []byte) any {
		t.Helper()
		res, err := via.ProposeMeta(ctx, cmd)
		if err != nil {
			t.Fatalf("ProposeMeta through the follower: %v", err)
		}
		return res
	}
	wantErr := func(res any, sentinel error) {
		t.Helper()
		if err, _ := res.(error); !errors.Is(err, sentinel) {
			t.Fatalf("result %v, want %v", res, sentinel)
		}
	}
	if k, ok := propose(EncodeOAuthSetKey(OAuthSetKey{Key: OAuthKey{KID: "k1", PrivateKey: []byte("sealed"),
		CreatedAt: t0}})).(OAuthKey); !ok || k.KID != "k1" {
		t.Fatalf("set key: %v", k)
	}
	client := OAuthClient{ClientID: fxClient, Name: "Test client", RedirectURIs: []string{fxRedirect},
		GrantTypes: []string{"authorization_code"}, AuthMethod: "none", CreatedAt: t0}
	register := EncodeOAuthRegisterClient(OAuthRegisterClient{Now: t0, Client: client})
	if c, ok := propose(register).(OAuthClient); !ok || c.ClientID != fxClient {
		t.Fatalf("register client: %v", c)
	}
	wantErr(propose(register), ErrOAuthClientExists)
	f := &oauthFixture{now: t0}
	if _, err := via.ProposeMeta(ctx, EncodeCreateOrg(CreateOrg{OrgID: "org_a", Name: "Alpha", CreatedAt: t0})); err != nil {
		t.Fatal(err)
	}
	if res := propose(f.issueCode(fxCode)); res != nil {
		t.Fatalf("issue code: %v", res)
	}
	redeem := OAuthRedeemCode{CodeHash: fxCode, ClientID: fxClient, RedirectURI: fxRedirect, Challenge: fxVerifier,
		Family: "fam1", Access: tok("acc1", t0.Add(time.Hour)), Refresh: tok("ref1", t0.Add(time.Hour)), Now: t0}
	bad := redeem
	bad.CodeHash = "nope"
	wantErr(propose(EncodeOAuthRedeemCode(bad)), ErrOAuthInvalidGrant)
	if iss, ok := propose(EncodeOAuthRedeemCode(redeem)).(OAuthIssued); !ok || iss.Nonce != "n1" {
		t.Fatalf("redeem code: %v", iss)
	}
}
