package cluster

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)

// testRawKey returns a well-formed key whose public prefix is derived from n.
func testRawKey(n int) string {
	return fmt.Sprintf("%s%012dQwErTyUiOpAsDfGhJk", KeyPrefix, n)
}

func testKey(t testing.TB, n int, orgID string) (string, NewKey) {
	t.Helper()
	raw := testRawKey(n)
	k, err := NewKeyRecord(raw, orgID, fmt.Sprintf("label %d", n), t0.Add(time.Duration(n)*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return raw, k
}

func ptr[T any](v T) *T { return &v }

// applyAll applies cmds at consecutive indexes after the current one and
// fails on an error result.
func applyAll(t testing.TB, m *Meta, cmds ...[]byte) {
	t.Helper()
	for _, c := range cmds {
		if err, ok := m.Apply(m.AppliedIndex()+1, c).(error); ok {
			t.Fatalf("setup command %d failed: %v", c[0], err)
		}
	}
}

// stateOf returns the state of m without its applied index.
func stateOf(m *Meta) snapshotV1 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := m.st.snapshot()
	s.AppliedIndex = 0
	return s
}

func TestApplyCommands(t *testing.T) {
	_, k1 := testKey(t, 1, "org_a")
	_, k2 := testKey(t, 2, "org_b")
	k1NoOrg := k1
	k1NoOrg.OrgID = ""
	badPrefix := k2
	badPrefix.Prefix = "short"
	oddPrefix := k2
	oddPrefix.Prefix = "ab+cdefghijk"
	noID := k2
	noID.KeyID = ""
	plus1 := time.FixedZone("plus1", 3600)
	info := ClusterInfo{ClusterID: "c1", Embedder: "hash", Dim: 384, Groups: 8, CreatedAt: t0}
	initCmd := EncodeInitCluster(InitCluster{ClusterID: "c1", Embedder: "hash", Dim: 384, Groups: 8, CreatedAt: t0.In(plus1)})
	orgA := EncodeCreateOrg(CreateOrg{OrgID: "org_a", Name: "A", CreatedAt: t0})
	orgAWithKey := EncodeCreateOrg(CreateOrg{OrgID: "org_a", Name: "A", CreatedAt: t0, Key: &k1})
	orgB := EncodeCreateOrg(CreateOrg{OrgID: "org_b", Name: "B", CreatedAt: t0})
	keyInfo2 := KeyInfo{KeyID: k2.KeyID, OrgID: "org_b", Label: k2.Label, Prefix: k2.Prefix, CreatedAt: k2.CreatedAt}
	revoked2 := keyInfo2
	revoked2.Revoked, revoked2.RevokedAt = true, t0.Add(time.Hour)

	tests := []struct {
		name    string
		setup   [][]byte
		cmd     []byte
		want    any   // result when wantErr is nil
		wantErr error // expected failure; the state must not change
	}{
		{name: "init cluster", cmd: initCmd, want: info},
		{name: "init cluster again keeps the first", setup: [][]byte{initCmd},
			cmd:  EncodeInitCluster(InitCluster{ClusterID: "c2", Embedder: "builtin", Dim: 8, Groups: 2, CreatedAt: t0.Add(time.Hour)}),
			want: info},
		{name: "init cluster without dim", cmd: EncodeInitCluster(InitCluster{ClusterID: "c", Embedder: "hash", Groups: 8}),
			wantErr: ErrInvalidCommand},
		{name: "init cluster without groups", cmd: EncodeInitCluster(InitCluster{ClusterID: "c", Embedder: "hash", Dim: 8}),
			wantErr: ErrInvalidCommand},
		{name: "init cluster without id", cmd: EncodeInitCluster(InitCluster{Embedder: "hash", Dim: 8, Groups: 1}),
			wantErr: ErrInvalidCommand},
		{name: "init cluster without embedder", cmd: EncodeInitCluster(InitCluster{ClusterID: "c", Dim: 8, Groups: 1}),
			wantErr: ErrInvalidCommand},

		{name: "create org", cmd: orgA, want: Org{ID: "org_a", Name: "A", CreatedAt: t0}},
		{name: "create org with key", cmd: orgAWithKey, want: Org{ID: "org_a", Name: "A", CreatedAt: t0}},
		{name: "create org with key of no org",
			cmd:  EncodeCreateOrg(CreateOrg{OrgID: "org_a", Name: "A", CreatedAt: t0.In(plus1), Key: &k1NoOrg}),
			want: Org{ID: "org_a", Name: "A", CreatedAt: t0}},
		{name: "create org twice", setup: [][]byte{orgA}, cmd: orgA, wantErr: ErrOrgExists},
		{name: "create org without id", cmd: EncodeCreateOrg(CreateOrg{Name: "x"}), wantErr: ErrInvalidCommand},
		{name: "create org with key of another org", cmd: EncodeCreateOrg(CreateOrg{OrgID: "org_b", Key: &k1}),
			wantErr: ErrInvalidCommand},
		{name: "create org with taken key id", setup: [][]byte{orgAWithKey},
			cmd:     EncodeCreateOrg(CreateOrg{OrgID: "org_c", Key: &NewKey{KeyID: k1.KeyID, Prefix: k1.Prefix}}),
			wantErr: ErrKeyExists},
		{name: "create org with bad key prefix", cmd: EncodeCreateOrg(CreateOrg{OrgID: "org_b", Key: &badPrefix}),
			wantErr: ErrInvalidCommand},

		{name: "create key", setup: [][]byte{orgB}, cmd: EncodeCreateKey(CreateKey{k2}), want: keyInfo2},
		{name: "create key of unknown org", cmd: EncodeCreateKey(CreateKey{k2}), wantErr: ErrUnknownOrg},
		{name: "create key twice", setup: [][]byte{orgB, EncodeCreateKey(CreateKey{k2})},
			cmd: EncodeCreateKey(CreateKey{k2}), wantErr: ErrKeyExists},
		{name: "create key with short prefix", setup: [][]byte{orgB}, cmd: EncodeCreateKey(CreateKey{badPrefix}),
			wantErr: ErrInvalidCommand},
		{name: "create key with non url-safe prefix", setup: [][]byte{orgB}, cmd: EncodeCreateKey(CreateKey{oddPrefix}),
			wantErr: ErrInvalidCommand},
		{name: "create key without id", setup: [][]byte{orgB}, cmd: EncodeCreateKey(CreateKey{noID}),
			wantErr: ErrInvalidCommand},

		{name: "revoke key", setup: [][]byte{orgB, EncodeCreateKey(CreateKey{k2})},
			cmd: EncodeRevokeKey(RevokeKey{KeyID: k2.KeyID, At: t0.Add(time.Hour).In(plus1)}), want: revoked2},
		{name: "revoke key again keeps the first time",
			setup: [][]byte{orgB, EncodeCreateKey(CreateKey{k2}), EncodeRevokeKey(RevokeKey{KeyID: k2.KeyID, At: t0.Add(time.Hour)})},
			cmd:   EncodeRevokeKey(RevokeKey{KeyID: k2.KeyID, At: t0.Add(2 * time.Hour)}), want: revoked2},
		{name: "revoke unknown key", cmd: EncodeRevokeKey(RevokeKey{KeyID: "key_nope", At: t0}), wantErr: ErrUnknownKey},

		{name: "update settings", setup: [][]byte{orgA},
			cmd:  EncodeUpdateSettings(UpdateSettings{OrgID: "org_a", HideReplaced: ptr(true), AtomLimit: ptr[int64](0)}),
			want: SettingsOverride{HideReplaced: ptr(true), AtomLimit: ptr[int64](0)}},
		{name: "update settings merges",
			setup: [][]byte{orgA, EncodeUpdateSettings(UpdateSettings{OrgID: "org_a", HideReplaced: ptr(true), AtomLimit: ptr[int64](7)})},
			cmd:   EncodeUpdateSettings(UpdateSettings{OrgID: "org_a", HideReplaced: ptr(false), DailyQueryQuota: ptr[int64](50)}),
			want:  SettingsOverride{HideReplaced: ptr(false), DailyQueryQuota: ptr[int64](50), AtomLimit: ptr[int64](7)}},
		{name: "update settings with nothing", setup: [][]byte{orgA},
			cmd: EncodeUpdateSettings(UpdateSettings{OrgID: "org_a"}), want: SettingsOverride{}},
		{name: "update settings of unknown org", cmd: EncodeUpdateSettings(UpdateSettings{OrgID: "org_x", HideReplaced: ptr(true)}),
			wantErr: ErrUnknownOrg},
		{name: "update settings with negative quota", setup: [][]byte{orgA},
			cmd:     EncodeUpdateSettings(UpdateSettings{OrgID: "org_a", HideReplaced: ptr(true), DailyQueryQuota: ptr[int64](-1)}),
			wantErr: ErrInvalidCommand},
		{name: "update settings with negative atom limit", setup: [][]byte{orgA},
			cmd: EncodeUpdateSettings(UpdateSettings{OrgID: "org_a", AtomLimit: ptr[int64](-3)}), wantErr: ErrInvalidCommand},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMeta()
			applyAll(t, m, tt.setup...)
			before := stateOf(m)
			got := m.Apply(100, tt.cmd)
			if m.AppliedIndex() != 100 {
				t.Errorf("AppliedIndex() = %d, want 100", m.AppliedIndex())
			}
			if tt.wantErr != nil {
				err, _ := got.(error)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Apply = %v, want error %v", got, tt.wantErr)
				}
				if after := stateOf(m); !reflect.DeepEqual(before, after) {
					t.Errorf("failed command changed the state:\nbefore %+v\nafter  %+v", before, after)
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Apply = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestApplyNormalisesTimesToUTC(t *testing.T) {
	m := NewMeta()
	zone := time.FixedZone("minus7", -7*3600)
	_, k := testKey(t, 1, "org_a")
	k.CreatedAt = t0.In(zone)
	applyAll(t, m,
		EncodeInitCluster(InitCluster{ClusterID: "c", Embedder: "hash", Dim: 8, Groups: 1, CreatedAt: t0.In(zone)}),
		EncodeCreateOrg(CreateOrg{OrgID: "org_a", CreatedAt: t0.In(zone), Key: &k}),
		EncodeRevokeKey(RevokeKey{KeyID: k.KeyID, At: t0.In(zone)}),
	)
	ci, _ := m.ClusterInfo()
	org, _ := m.Org("org_a")
	key, _ := m.Key(k.KeyID)
	for name, ts := range map[string]time.Time{"cluster": ci.CreatedAt, "org": org.CreatedAt, "key": key.CreatedAt, "revoked": key.RevokedAt} {
		if ts.Location() != time.UTC || !ts.Equal(t0) {
			t.Errorf("%s time = %v, want %v in UTC", name, ts, t0)
		}
	}
}

func TestApplyPanicsOnUndecodableCommand(t *testing.T) {
	tests := []struct {
		name string
		cmd  []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"type zero", []byte{0, '{', '}'}},
		{"unknown type", append([]byte{99}, "{}"...)},
		{"no payload", []byte{cmdCreateOrg}},
		{"bad json", append([]byte{cmdCreateOrg}, `{"org_id":`...)},
		{"trailing garbage", append([]byte{cmdRevokeKey}, `{"key_id":"k"} x`...)},
		{"wrong field type", append([]byte{cmdInitCluster}, `{"dim":"eight"}`...)},
		{"bad time", append([]byte{cmdCreateOrg}, `{"org_id":"o","created_at":"yesterday"}`...)},
		{"short hash", append([]byte{cmdCreateKey}, `{"hash":"abc"}`...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMeta()
			defer func() {
				if recover() == nil {
					t.Errorf("Apply(%q) did not panic", tt.cmd)
				}
			}()
			m.Apply(1, tt.cmd)
		})
	}
}

func TestAuthenticate(t *testing.T) {
	m := NewMeta()
	rawA, kA := testKey(t, 1, "org_a")
	rawB, kB := testKey(t, 2, "org_a")
	rawC, kC := testKey(t, 3, "org_c")
	applyAll(t, m,
		EncodeCreateOrg(CreateOrg{OrgID: "org_a", CreatedAt: t0, Key: &kA}),
		EncodeCreateKey(CreateKey{kB}),
		EncodeRevokeKey(RevokeKey{KeyID: kB.KeyID, At: t0}),
		EncodeCreateOrg(CreateOrg{OrgID: "org_c", CreatedAt: t0, Key: &kC}),
	)
	samePrefixOtherKey := rawA[:len(rawA)-1] + "X"
	tests := []struct {
		name          string
		raw           string
		reason        string
		wantOrg, want string
	}{
		{name: "missing", raw: "", reason: ReasonMissingKey},
		{name: "placeholder", raw: "YOUR_API_KEY", reason: ReasonPlaceholderKey},
		{name: "placeholder with prefix", raw: "mk_live_xxxxxxxxxxxxxxxxxxxxxxxxxxxx", reason: ReasonPlaceholderKey},
		{name: "malformed", raw: "abc", reason: ReasonMalformedKey},
		{name: "malformed short", raw: "mk_live_short", reason: ReasonMalformedKey},
		{name: "unknown", raw: testRawKey(4), reason: ReasonInvalidKey},
		{name: "known prefix wrong key", raw: samePrefixOtherKey, reason: ReasonInvalidKey},
		{name: "revoked", raw: rawB, reason: ReasonRevokedKey},
		{name: "valid", raw: rawA, wantOrg: "org_a", want: kA.KeyID},
		{name: "valid other org", raw: rawC, wantOrg: "org_c", want: kC.KeyID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			org, key, err := m.Authenticate(tt.raw)
			if tt.reason == "" {
				if err != nil || org != tt.wantOrg || key != tt.want {
					t.Fatalf("Authenticate = %q, %q, %v; want %q, %q", org, key, err, tt.wantOrg, tt.want)
				}
				return
			}
			var ae *AuthError
			if !errors.As(err, &ae) || ae.Reason != tt.reason {
				t.Fatalf("Authenticate = %v, want reason %s", err, tt.reason)
			}
			if org != "" || key != "" {
				t.Errorf("Authenticate returned %q, %q with an error", org, key)
			}
			if strings.Contains(err.Error(), tt.raw) && tt.raw != "" {
				t.Errorf("error %q contains the key", err)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	def := Plan{DailyQueryQuota: 1000, AtomLimit: 500}
	tests := []struct {
		name    string
		updates []UpdateSettings
		org     string
		want    Settings
	}{
		{name: "unknown org", org: "org_x", want: Settings{Plan: def}},
		{name: "no override", org: "org_a", want: Settings{Plan: def}},
		{name: "hide replaced only", org: "org_a",
			updates: []UpdateSettings{{OrgID: "org_a", HideReplaced: ptr(true)}},
			want:    Settings{HideReplaced: true, Plan: def}},
		{name: "quota only", org: "org_a",
			updates: []UpdateSettings{{OrgID: "org_a", DailyQueryQuota: ptr[int64](5)}},
			want:    Settings{Plan: Plan{DailyQueryQuota: 5, AtomLimit: 500}}},
		{name: "zero overrides to unlimited", org: "org_a",
			updates: []UpdateSettings{{OrgID: "org_a", DailyQueryQuota: ptr[int64](0), AtomLimit: ptr[int64](0)}},
			want:    Settings{Plan: Plan{}}},
		{name: "later update keeps earlier fields", org: "org_a",
			updates: []UpdateSettings{
				{OrgID: "org_a", HideReplaced: ptr(true), AtomLimit: ptr[int64](9)},
				{OrgID: "org_a", DailyQueryQuota: ptr[int64](3)},
				{OrgID: "org_a", HideReplaced: ptr(false)},
			},
			want: Settings{Plan: Plan{DailyQueryQuota: 3, AtomLimit: 9}}},
		{name: "other org untouched", org: "org_b",
			updates: []UpdateSettings{{OrgID: "org_a", HideReplaced: ptr(true), AtomLimit: ptr[int64](9)}},
			want:    Settings{Plan: def}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMeta()
			applyAll(t, m, EncodeCreateOrg(CreateOrg{OrgID: "org_a"}), EncodeCreateOrg(CreateOrg{OrgID: "org_b"}))
			for _, u := range tt.updates {
				applyAll(t, m, EncodeUpdateSettings(u))
			}
			if got := m.Settings(tt.org, def); got != tt.want {
				t.Errorf("Settings(%s) = %+v, want %+v", tt.org, got, tt.want)
			}
		})
	}
}

func TestQueries(t *testing.T) {
	m := NewMeta()
	if _, ok := m.ClusterInfo(); ok {
		t.Error("ClusterInfo before InitCluster reported ok")
	}
	_, k1 := testKey(t, 1, "org_b")
	_, k2 := testKey(t, 2, "org_b")
	_, k3 := testKey(t, 3, "org_b")
	k3.CreatedAt = k1.CreatedAt // same time: ordered by ID
	applyAll(t, m,
		EncodeCreateOrg(CreateOrg{OrgID: "org_c", Name: "C", CreatedAt: t0.Add(time.Hour)}),
		EncodeCreateOrg(CreateOrg{OrgID: "org_b", Name: "B", CreatedAt: t0, Key: &k2}),
		EncodeCreateOrg(CreateOrg{OrgID: "org_a", Name: "A", CreatedAt: t0.Add(time.Hour)}),
		EncodeCreateKey(CreateKey{k3}),
		EncodeCreateKey(CreateKey{k1}),
		EncodeRevokeKey(RevokeKey{KeyID: k2.KeyID, At: t0}),
	)
	if n := m.OrgCount(); n != 3 {
		t.Errorf("OrgCount() = %d, want 3", n)
	}
	var ids []string
	for _, o := range m.Orgs() {
		ids = append(ids, o.ID)
	}
	if want := []string{"org_b", "org_a", "org_c"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("Orgs() order = %v, want %v", ids, want)
	}
	if o, ok := m.Org("org_c"); !ok || o.Name != "C" {
		t.Errorf("Org(org_c) = %+v, %v", o, ok)
	}
	if _, ok := m.Org("org_z"); ok {
		t.Error("Org(org_z) found")
	}
	ids = nil
	for _, k := range m.Keys("org_b") {
		ids = append(ids, k.KeyID)
	}
	if want := []string{k1.KeyID, k3.KeyID, k2.KeyID}; !reflect.DeepEqual(ids, want) {
		t.Errorf("Keys(org_b) = %v, want %v", ids, want)
	}
	if ks := m.Keys("org_a"); len(ks) != 0 {
		t.Errorf("Keys(org_a) = %v, want none", ks)
	}
	if k, ok := m.Key(k2.KeyID); !ok || !k.Revoked {
		t.Errorf("Key(%s) = %+v, %v; want revoked", k2.KeyID, k, ok)
	}
}

func TestConcurrentQueriesAndApply(t *testing.T) {
	m := NewMeta()
	raw, k := testKey(t, 0, "org_0")
	applyAll(t, m, EncodeCreateOrg(CreateOrg{OrgID: "org_0", Key: &k}))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if org, _, err := m.Authenticate(raw); err != nil || org != "org_0" {
					t.Errorf("Authenticate = %q, %v", org, err)
					return
				}
				m.Orgs()
				m.Keys("org_0")
				m.Settings("org_1", Plan{})
			}
		}()
	}
	for i := 1; i <= 200; i++ {
		org := fmt.Sprintf("org_%d", i)
		_, ki := testKey(t, i, org)
		applyAll(t, m,
			EncodeCreateOrg(CreateOrg{OrgID: org, CreatedAt: t0, Key: &ki}),
			EncodeUpdateSettings(UpdateSettings{OrgID: org, HideReplaced: ptr(i%2 == 0)}))
		if i%50 == 0 {
			write, err := m.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if err := write(new(strings.Builder)); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
}

func FuzzAuthenticate(f *testing.F) {
	m := NewMeta()
	raw, k := testKey(f, 1, "org_a")
	revoked, kr := testKey(f, 2, "org_a")
	m.Apply(1, EncodeCreateOrg(CreateOrg{OrgID: "org_a", Key: &k}))
	m.Apply(2, EncodeCreateKey(CreateKey{kr}))
	m.Apply(3, EncodeRevokeKey(RevokeKey{KeyID: kr.KeyID}))
	for _, s := range []string{"", raw, revoked, raw + "x", raw[:len(raw)-1], "YOUR_API_KEY", "mk_live_\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		org, key, err := m.Authenticate(s)
		switch {
		case s == raw:
			if err != nil || org != "org_a" || key != k.KeyID {
				t.Fatalf("Authenticate(valid) = %q, %q, %v", org, key, err)
			}
		case err == nil:
			t.Fatalf("Authenticate(%q) accepted an unknown key", s)
		default:
			var ae *AuthError
			if !errors.As(err, &ae) || reasonSentinel[ae.Reason] == nil {
				t.Fatalf("Authenticate(%q) = %v: not an AuthError with a known reason", s, err)
			}
		}
	})
}
