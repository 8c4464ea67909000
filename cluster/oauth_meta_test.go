package cluster

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// oauthFixture is a meta state with an org, a client and one issued code.
type oauthFixture struct {
	m   *Meta
	now time.Time
}

const (
	fxClient   = "client_1"
	fxRedirect = "http://127.0.0.1:9999/cb"
	fxCode     = "code_hash_1"
	fxVerifier = "challenge_1"
)

func newOAuthFixture(t *testing.T, scopes ...string) *oauthFixture {
	t.Helper()
	f := &oauthFixture{m: NewMeta(), now: t0}
	applyAll(t, f.m,
		EncodeCreateOrg(CreateOrg{OrgID: "org_a", Name: "Alpha", CreatedAt: t0}),
		EncodeOAuthRegisterClient(OAuthRegisterClient{Now: t0, Client: OAuthClient{ClientID: fxClient,
			Name: "Test client", RedirectURIs: []string{fxRedirect}, GrantTypes: []string{"authorization_code"},
			AuthMethod: "none", CreatedAt: t0}}),
		f.issueCode(fxCode, scopes...))
	return f
}

func (f *oauthFixture) issueCode(hash string, scopes ...string) []byte {
	return EncodeOAuthIssueCode(OAuthIssueCode{Now: f.now, Code: OAuthCode{Hash: hash, ClientID: fxClient,
		OrgID: "org_a", RedirectURI: fxRedirect, Scopes: scopes, Challenge: fxVerifier, Nonce: "n1",
		AuthTime: f.now, ExpiresAt: f.now.Add(10 * time.Minute)}})
}

func (f *oauthFixture) apply(cmd []byte) any {
	return f.m.Apply(f.m.AppliedIndex()+1, cmd)
}

func tok(hash string, at time.Time) NewOAuthToken { return NewOAuthToken{Hash: hash, ExpiresAt: at} }

func (f *oauthFixture) redeem(code, family, access, refresh string) any {
	return f.apply(EncodeOAuthRedeemCode(OAuthRedeemCode{CodeHash: code, ClientID: fxClient, RedirectURI: fxRedirect,
		Challenge: fxVerifier, Family: family, Access: tok(access, f.now.Add(time.Hour)),
		Refresh: tok(refresh, f.now.Add(30*24*time.Hour)), Now: f.now}))
}

func (f *oauthFixture) refresh(old, access, refresh string) any {
	return f.apply(EncodeOAuthRefresh(OAuthRefresh{RefreshHash: old, ClientID: fxClient,
		Access: tok(access, f.now.Add(time.Hour)), Refresh: tok(refresh, f.now.Add(30*24*time.Hour)), Now: f.now}))
}

func (f *oauthFixture) valid(access string) bool {
	_, ok := f.m.OAuthAccess(access, f.now)
	return ok
}

func wantGrantErr(t *testing.T, res any, fragment string) {
	t.Helper()
	err, _ := res.(error)
	if !errors.Is(err, ErrOAuthInvalidGrant) || !strings.Contains(err.Error(), fragment) {
		t.Fatalf("result %v, want invalid grant mentioning %q", res, fragment)
	}
}

func TestOAuthRedeemChecks(t *testing.T) {
	tests := []struct {
		name string
		mod  func(c *OAuthRedeemCode)
		want string
	}{
		{"unknown code", func(c *OAuthRedeemCode) { c.CodeHash = "nope" }, "unknown or expired"},
		{"expired code", func(c *OAuthRedeemCode) { c.Now = t0.Add(11 * time.Minute) }, "unknown or expired"},
		{"other client", func(c *OAuthRedeemCode) { c.ClientID = "client_2" }, "another client"},
		{"other redirect", func(c *OAuthRedeemCode) { c.RedirectURI = "http://127.0.0.1:1/cb" }, "redirect_uri"},
		{"wrong verifier", func(c *OAuthRedeemCode) { c.Challenge = "other" }, "code_verifier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOAuthFixture(t, "memory:read")
			c := OAuthRedeemCode{CodeHash: fxCode, ClientID: fxClient, RedirectURI: fxRedirect, Challenge: fxVerifier,
				Family: "fam_1", Access: tok("at_1", t0.Add(time.Hour)), Now: t0}
			tt.mod(&c)
			wantGrantErr(t, f.apply(EncodeOAuthRedeemCode(c)), tt.want)
			if c.Now != t0 {
				return // the later command swept the expired code
			}
			// A refused redemption leaves the code redeemable.
			if res := f.redeem(fxCode, "fam_1", "at_1", ""); res == nil {
				t.Fatal("nil result")
			} else if _, ok := res.(OAuthIssued); !ok {
				t.Fatalf("redeem after refusal: %v", res)
			}
		})
	}
}

func TestOAuthCodeReuseRevokesGrant(t *testing.T) {
	f := newOAuthFixture(t, "memory:read", "memory:write")
	res, ok := f.redeem(fxCode, "fam_1", "at_1", "rt_1").(OAuthIssued)
	if !ok || res.Grant.OrgID != "org_a" || res.Nonce != "n1" || res.Refresh {
		t.Fatalf("redeem = %+v (refresh must need offline_access)", res)
	}
	if !f.valid("at_1") {
		t.Fatal("issued access token does not validate")
	}
	wantGrantErr(t, f.redeem(fxCode, "fam_2", "at_2", ""), "already used")
	if f.valid("at_1") || f.valid("at_2") {
		t.Error("a reused code left its tokens valid")
	}
}

func TestOAuthRefreshRotation(t *testing.T) {
	f := newOAuthFixture(t, "memory:read", ScopeOfflineAccess)
	if res, ok := f.redeem(fxCode, "fam_1", "at_1", "rt_1").(OAuthIssued); !ok || !res.Refresh {
		t.Fatalf("redeem = %v", res)
	}
	if _, ok := f.m.OAuthAccess("rt_1", f.now); ok {
		t.Error("a refresh token validates as an access token")
	}
	f.now = f.now.Add(30 * time.Minute)
	wider := EncodeOAuthRefresh(OAuthRefresh{RefreshHash: "rt_1", ClientID: fxClient, Scopes: []string{"memory:write"},
		Access: tok("x", f.now.Add(time.Hour)), Refresh: tok("y", f.now.Add(time.Hour)), Now: f.now})
	if err, _ := f.apply(wider).(error); !errors.Is(err, ErrOAuthInvalidScope) {
		t.Fatalf("refresh asking for more scope: %v", err)
	}
	if res, ok := f.refresh("rt_1", "at_2", "rt_2").(OAuthIssued); !ok || res.Grant.Family != "fam_1" {
		t.Fatalf("refresh = %v", res)
	}
	if !f.valid("at_1") || !f.valid("at_2") {
		t.Error("rotation invalidated a live access token")
	}
	wantGrantErr(t, f.refresh("rt_1", "at_3", "rt_3"), "already used")
	for _, h := range []string{"at_1", "at_2", "at_3"} {
		if f.valid(h) {
			t.Errorf("%s valid after refresh-token reuse", h)
		}
	}
	wantGrantErr(t, f.refresh("rt_2", "at_4", "rt_4"), "unknown, expired or revoked")
}

// TestOAuthRefreshNarrows asks a refresh for fewer scopes than granted:
// the new access token holds only those (RFC 6749 §6), the grant keeps
// the rest for the next refresh. The full scope was issued instead.
func TestOAuthRefreshNarrows(t *testing.T) {
	f := newOAuthFixture(t, "memory:read", "memory:write", ScopeOfflineAccess)
	f.redeem(fxCode, "fam_1", "at_1", "rt_1")
	narrow := EncodeOAuthRefresh(OAuthRefresh{RefreshHash: "rt_1", ClientID: fxClient, Scopes: []string{"memory:read"},
		Access: tok("at_2", f.now.Add(time.Hour)), Refresh: tok("rt_2", f.now.Add(time.Hour)), Now: f.now})
	res, ok := f.apply(narrow).(OAuthIssued)
	if !ok || strings.Join(res.Grant.Scopes, " ") != "memory:read" {
		t.Fatalf("narrowed refresh = %+v", res)
	}
	if g, ok := f.m.OAuthAccess("at_2", f.now); !ok || strings.Join(g.Scopes, " ") != "memory:read" {
		t.Errorf("narrowed access token resolves to scopes %v (ok %v)", g.Scopes, ok)
	}
	if g, _ := f.m.OAuthAccess("at_1", f.now); len(g.Scopes) != 3 {
		t.Errorf("the first access token lost scopes: %v", g.Scopes)
	}
	res, ok = f.refresh("rt_2", "at_3", "rt_3").(OAuthIssued)
	if g, _ := f.m.OAuthAccess("at_3", f.now); !ok || len(res.Grant.Scopes) != 3 || len(g.Scopes) != 3 {
		t.Errorf("a refresh asking for no scope gets the grant's: issued %v, token %v", res.Grant.Scopes, g.Scopes)
	}
}

func TestOAuthRevoke(t *testing.T) {
	f := newOAuthFixture(t, ScopeOfflineAccess)
	f.redeem(fxCode, "fam_1", "at_1", "rt_1")
	if res := f.apply(EncodeOAuthRevoke(OAuthRevoke{TokenHash: "at_1", ClientID: "client_2", Now: f.now})); res != OAuthRevokeForeign {
		t.Errorf("revoke by another client = %v", res)
	}
	if !f.valid("at_1") {
		t.Fatal("another client's revocation took effect")
	}
	if res := f.apply(EncodeOAuthRevoke(OAuthRevoke{TokenHash: "rt_1", ClientID: fxClient, Now: f.now})); res != OAuthRevoked {
		t.Errorf("revoke = %v", res)
	}
	if f.valid("at_1") {
		t.Error("revoking the refresh token left the access token valid")
	}
	if res := f.apply(EncodeOAuthRevoke(OAuthRevoke{TokenHash: "rt_1", ClientID: fxClient, Now: f.now})); res != OAuthRevokeUnknown {
		t.Errorf("second revoke = %v", res)
	}
}

func TestOAuthExpiryAndSweep(t *testing.T) {
	f := newOAuthFixture(t, "memory:read")
	f.redeem(fxCode, "fam_1", "at_1", "")
	if _, ok := f.m.OAuthAccess("at_1", t0.Add(time.Hour)); ok {
		t.Error("token valid at its expiry")
	}
	f.apply(EncodeOAuthRegisterClient(OAuthRegisterClient{Now: t0, Client: OAuthClient{ClientID: "idle",
		RedirectURIs: []string{fxRedirect}, CreatedAt: t0}}))
	// A command two days later sweeps the token, its grant, the used code
	// and the client that never authorized; the used client stays.
	f.now = t0.Add(48 * time.Hour)
	f.apply(EncodeOAuthRevoke(OAuthRevoke{TokenHash: "none", Now: f.now}))
	o := f.m.st.oauth
	if len(o.tokens) != 0 || len(o.grants) != 0 || len(o.codes) != 0 {
		t.Errorf("after sweep: %d tokens, %d grants, %d codes", len(o.tokens), len(o.grants), len(o.codes))
	}
	if _, ok := f.m.OAuthClient("idle"); ok {
		t.Error("a never-used client survived its TTL")
	}
	if _, ok := f.m.OAuthClient(fxClient); !ok {
		t.Error("a used client was swept")
	}
}

func TestOAuthCommandErrors(t *testing.T) {
	f := newOAuthFixture(t)
	cases := []struct {
		name string
		cmd  []byte
		want error
	}{
		{"duplicate client", EncodeOAuthRegisterClient(OAuthRegisterClient{Now: t0,
			Client: OAuthClient{ClientID: fxClient, RedirectURIs: []string{fxRedirect}}}), ErrOAuthClientExists},
		{"client without redirect", EncodeOAuthRegisterClient(OAuthRegisterClient{Now: t0,
			Client: OAuthClient{ClientID: "c2"}}), ErrInvalidCommand},
		{"code of unknown client", EncodeOAuthIssueCode(OAuthIssueCode{Now: t0,
			Code: OAuthCode{Hash: "h", ClientID: "c9", OrgID: "org_a"}}), ErrUnknownOAuthClient},
		{"duplicate code", f.issueCode(fxCode), ErrInvalidCommand},
		{"key without kid", EncodeOAuthSetKey(OAuthSetKey{Key: OAuthKey{PrivateKey: []byte{1}}}), ErrInvalidCommand},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if err, _ := f.apply(tt.cmd).(error); !errors.Is(err, tt.want) {
				t.Errorf("result %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("first key wins", func(t *testing.T) {
		k1 := OAuthKey{KID: "k1", PrivateKey: []byte{1, 2}, CreatedAt: t0}
		if got := f.apply(EncodeOAuthSetKey(OAuthSetKey{Key: k1})); got.(OAuthKey).KID != "k1" {
			t.Fatalf("set key = %v", got)
		}
		got := f.apply(EncodeOAuthSetKey(OAuthSetKey{Key: OAuthKey{KID: "k2", PrivateKey: []byte{3}}}))
		if k, _ := f.m.OAuthKey(); got.(OAuthKey).KID != "k1" || k.KID != "k1" {
			t.Errorf("second key replaced the first: %v", got)
		}
	})
}

// TestOAuthSnapshotRoundTrip restores a state holding every OAuth record and
// checks the replica answers and writes the same snapshot.
func TestOAuthSnapshotRoundTrip(t *testing.T) {
	f := newOAuthFixture(t, "memory:read", ScopeOfflineAccess)
	f.apply(EncodeOAuthSetKey(OAuthSetKey{Key: OAuthKey{KID: "k1", PrivateKey: []byte{1, 2, 3}, CreatedAt: t0}}))
	f.redeem(fxCode, "fam_1", "at_1", "rt_1")
	f.refresh("rt_1", "at_2", "rt_2")
	f.apply(f.issueCode("code_hash_2", "memory:write"))
	snap := snapshotBytes(t, f.m)
	r := restored(t, snap)
	if again := snapshotBytes(t, r); !bytes.Equal(again, snap) {
		t.Fatalf("snapshot of the restored state differs:\n got %s\nwant %s", again, snap)
	}
	if _, ok := r.OAuthAccess("at_2", f.now); !ok {
		t.Error("restored replica rejects a live token")
	}
	// The restored replica and the original apply the same command alike.
	cmd := EncodeOAuthRefresh(OAuthRefresh{RefreshHash: "rt_1", ClientID: fxClient, Access: tok("x", t0.Add(time.Hour)),
		Refresh: tok("y", t0.Add(time.Hour)), Now: f.now})
	f.m.Apply(100, cmd)
	r.Apply(100, cmd)
	if a, b := snapshotBytes(t, f.m), snapshotBytes(t, r); !bytes.Equal(a, b) {
		t.Errorf("replicas diverged:\n%s\n%s", a, b)
	}
	if !bytes.Contains(snap, []byte(`"oauth"`)) {
		t.Error("snapshot lacks the oauth section")
	}
	if bytes.Contains(snapshotBytes(t, NewMeta()), []byte(`"oauth"`)) {
		t.Error("an empty state writes an oauth section")
	}
}

func TestOAuthRestoreDuplicates(t *testing.T) {
	base := `{"version":1,"applied_index":1,"cluster":null,"orgs":[],"keys":[],"oauth":`
	for name, oauth := range map[string]string{
		"duplicate client": `{"clients":[{"client_id":"a","redirect_uris":["x"]},{"client_id":"a","redirect_uris":["x"]}]}`,
		"token without id": `{"tokens":[{"hash":""}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			if err := NewMeta().Restore(strings.NewReader(base + oauth + "}")); !errors.Is(err, ErrCorruptSnapshot) {
				t.Errorf("Restore = %v, want corrupt snapshot", err)
			}
		})
	}
}

// TestOAuthGrantsEndWithMembership: removing a person from an org revokes
// the grants they signed in to it for and drops their codes not yet
// redeemed (a refresh kept minting tokens, a code still redeemed, and
// re-adding the person brought the old access tokens back); a grant or
// code of a person no longer a member is refused even when it was missed.
func TestOAuthGrantsEndWithMembership(t *testing.T) {
	f := newOAuthFixture(t)
	applyAll(t, f.m, EncodeConsoleCreateUser(ConsoleCreateUser{User: consoleUser("usr_1", "ann@example.com", "org_a",
		ConsoleRoleOwner), Now: t0}))
	issue := func(hash string) []byte {
		return EncodeOAuthIssueCode(OAuthIssueCode{Now: f.now, Code: OAuthCode{Hash: hash, ClientID: fxClient,
			OrgID: "org_a", RedirectURI: fxRedirect, Scopes: []string{"memory:read", ScopeOfflineAccess},
			Challenge: fxVerifier, UserID: "usr_1", AuthTime: f.now, ExpiresAt: f.now.Add(10 * time.Minute)}})
	}
	setRole := func(role string) {
		t.Helper()
		applyAll(t, f.m, EncodeConsoleSetRole(ConsoleSetRole{UserID: "usr_1", OrgID: "org_a", Role: role, Now: f.now}))
	}
	applyAll(t, f.m, issue("code_user"), issue("code_later"))
	if _, ok := f.redeem("code_user", "fam_u", "at_u", "rt_u").(OAuthIssued); !ok || !f.valid("at_u") {
		t.Fatal("the person's code did not redeem")
	}
	setRole("")
	if f.valid("at_u") {
		t.Error("an access token outlived its person's membership")
	}
	wantGrantErr(t, f.refresh("rt_u", "at_2", "rt_2"), "unknown, expired or revoked")
	wantGrantErr(t, f.redeem("code_later", "fam_l", "at_l", "rt_l"), "unknown or expired")
	setRole(ConsoleRoleMember)
	if f.valid("at_u") {
		t.Error("re-adding the person brought an old access token back")
	}

	// A code and a grant the removal missed (made by a replica of an
	// older version) are refused by the membership check itself.
	applyAll(t, f.m, issue("code_next"))
	if _, ok := f.redeem("code_next", "fam_n", "at_n", "rt_n").(OAuthIssued); !ok {
		t.Fatal("a member's code did not redeem")
	}
	applyAll(t, f.m, issue("code_missed"))
	cs := &f.m.st.console
	u := cs.users["usr_1"]
	u.Orgs = nil // the membership gone without the revocation
	cs.users["usr_1"] = u
	wantGrantErr(t, f.refresh("rt_n", "at_3", "rt_3"), "no longer a member")
	wantGrantErr(t, f.redeem("code_missed", "fam_m", "at_m", "rt_m"), "no longer a member")
}

// TestOAuthGrantsEndWithPassword: a new password ends what the old one let
// anyone start, the OAuth grants an AI client was let in with included.
func TestOAuthGrantsEndWithPassword(t *testing.T) {
	f := newOAuthFixture(t)
	applyAll(t, f.m, EncodeConsoleCreateUser(ConsoleCreateUser{User: consoleUser("usr_1", "ann@example.com", "org_a",
		ConsoleRoleOwner), Now: t0}))
	applyAll(t, f.m, EncodeOAuthIssueCode(OAuthIssueCode{Now: f.now, Code: OAuthCode{Hash: "code_user", ClientID: fxClient,
		OrgID: "org_a", RedirectURI: fxRedirect, Scopes: []string{"memory:read", ScopeOfflineAccess},
		Challenge: fxVerifier, UserID: "usr_1", AuthTime: f.now, ExpiresAt: f.now.Add(10 * time.Minute)}}))
	if _, ok := f.redeem("code_user", "fam_u", "at_u", "rt_u").(OAuthIssued); !ok || !f.valid("at_u") {
		t.Fatal("the person's code did not redeem")
	}
	applyAll(t, f.m, EncodeConsoleSetPassword(ConsoleSetPassword{UserID: "usr_1", PasswordHash: "$argon2id$new", Now: f.now}))
	if f.valid("at_u") {
		t.Error("an access token outlived the password it was granted under")
	}
	wantGrantErr(t, f.refresh("rt_u", "at_2", "rt_2"), "unknown, expired or revoked")
	if u, _ := f.m.ConsoleUser("usr_1"); u.PasswordHash != "$argon2id$new" || len(u.Orgs) != 1 {
		t.Errorf("user after the new password: %+v", u)
	}
}
