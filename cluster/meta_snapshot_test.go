package cluster

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/ golden snapshots")

func snapshotBytes(t testing.TB, m *Meta) []byte {
	t.Helper()
	write, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func restored(t testing.TB, snap []byte) *Meta {
	t.Helper()
	m := NewMeta()
	if err := m.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	return m
}

// goldenCommands builds a state using every command, including failures.
func goldenCommands(t testing.TB) [][]byte {
	_, k1 := testKey(t, 1, "org_a")
	_, k2 := testKey(t, 2, "org_a")
	_, k3 := testKey(t, 3, "org_b")
	return [][]byte{
		EncodeInitCluster(InitCluster{ClusterID: "cluster_1", Embedder: "hash", Dim: 256, Groups: 8, CreatedAt: t0}),
		EncodeCreateOrg(CreateOrg{OrgID: "org_a", Name: "Alpha", CreatedAt: t0, Key: &k1}),
		EncodeCreateOrg(CreateOrg{OrgID: "org_b", Name: "Beta", CreatedAt: t0.Add(time.Minute), Key: &k3}),
		EncodeCreateOrg(CreateOrg{OrgID: "org_c", Name: "Gamma", CreatedAt: t0.Add(time.Minute)}),
		EncodeCreateKey(CreateKey{k2}),
		EncodeRevokeKey(RevokeKey{KeyID: k1.KeyID, At: t0.Add(time.Hour)}),
		EncodeUpdateSettings(UpdateSettings{OrgID: "org_a", HideReplaced: ptr(true), AtomLimit: ptr[int64](100)}),
		EncodeUpdateSettings(UpdateSettings{OrgID: "org_c", DailyQueryQuota: ptr[int64](0)}),
		EncodeCreateOrg(CreateOrg{OrgID: "org_a", Name: "dup"}),                        // fails
		EncodeUpdateSettings(UpdateSettings{OrgID: "org_x", AtomLimit: ptr[int64](1)}), // fails
	}
}

func buildMeta(t testing.TB, cmds [][]byte) *Meta {
	m := NewMeta()
	for i, c := range cmds {
		m.Apply(uint64(i+1), c)
	}
	return m
}

type metaAnswers struct {
	Applied  uint64
	Cluster  ClusterInfo
	Inited   bool
	Orgs     []Org
	Count    int
	Keys     map[string][]KeyInfo
	Settings map[string]Settings
	Auth     map[string]string
}

// answers collects every query's answer for the orgs and keys tests use.
func answers(m *Meta) metaAnswers {
	a := metaAnswers{Applied: m.AppliedIndex(), Orgs: m.Orgs(), Count: m.OrgCount(),
		Keys: map[string][]KeyInfo{}, Settings: map[string]Settings{}, Auth: map[string]string{}}
	a.Cluster, a.Inited = m.ClusterInfo()
	for _, id := range []string{"org_a", "org_b", "org_c", "org_x"} {
		a.Keys[id] = m.Keys(id)
		a.Settings[id] = m.Settings(id, Plan{DailyQueryQuota: 10, AtomLimit: 20})
	}
	for n := range 8 {
		org, key, err := m.Authenticate(testRawKey(n))
		a.Auth[testRawKey(n)] = fmt.Sprint(org, key, err)
	}
	return a
}

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	m := buildMeta(t, goldenCommands(t))
	snap := snapshotBytes(t, m)
	r := restored(t, snap)
	if got, want := answers(r), answers(m); !reflect.DeepEqual(got, want) {
		t.Errorf("restored answers differ:\n got %+v\nwant %+v", got, want)
	}
	if again := snapshotBytes(t, r); !bytes.Equal(again, snap) {
		t.Errorf("snapshot of the restored state differs:\n got %s\nwant %s", again, snap)
	}
}

func TestSnapshotOfEmptyMeta(t *testing.T) {
	snap := snapshotBytes(t, NewMeta())
	if again := snapshotBytes(t, restored(t, snap)); !bytes.Equal(again, snap) {
		t.Errorf("empty snapshot round trip: got %s, want %s", again, snap)
	}
}

func TestSnapshotWriterIgnoresLaterApply(t *testing.T) {
	m := buildMeta(t, goldenCommands(t))
	want := snapshotBytes(t, m)
	write, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	_, k := testKey(t, 5, "org_c")
	applyAll(t, m,
		EncodeCreateKey(CreateKey{k}),
		EncodeUpdateSettings(UpdateSettings{OrgID: "org_a", HideReplaced: ptr(false), DailyQueryQuota: ptr[int64](1)}),
		EncodeRevokeKey(RevokeKey{KeyID: "key_000000000002", At: t0}),
		EncodeCreateOrg(CreateOrg{OrgID: "org_d"}))
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("snapshot written after Apply changed:\n got %s\nwant %s", buf.Bytes(), want)
	}
}

func TestRestoreReplacesState(t *testing.T) {
	snap := snapshotBytes(t, buildMeta(t, goldenCommands(t)[:2]))
	m := buildMeta(t, goldenCommands(t))
	if err := m.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if n := m.OrgCount(); n != 1 {
		t.Errorf("OrgCount after restore = %d, want 1", n)
	}
	if _, _, err := m.Authenticate(testRawKey(3)); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("key of a discarded org: %v, want invalid_key", err)
	}
	if s := m.Settings("org_a", Plan{}); s.HideReplaced {
		t.Error("settings of the discarded state survived")
	}
	if got := m.AppliedIndex(); got != 2 {
		t.Errorf("AppliedIndex after restore = %d, want 2", got)
	}
}

func TestRestoreErrors(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	key := func(id, prefix, org, h string) string {
		return fmt.Sprintf(`{"key_id":%q,"org_id":%q,"prefix":%q,"created_at":"2025-01-01T00:00:00Z","sha256":%q}`, id, org, prefix, h)
	}
	org := `{"org_id":"org_a","name":"","created_at":"2025-01-01T00:00:00Z","settings":{}}`
	snap := func(orgs, keys string) string {
		return `{"version":1,"applied_index":3,"cluster":null,"orgs":[` + orgs + `],"keys":[` + keys + `]}`
	}
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", ErrCorruptSnapshot},
		{"not json", "hello", ErrCorruptSnapshot},
		{"no version", `{}`, ErrSnapshotVersion},
		{"future version", `{"version":2}`, ErrSnapshotVersion},
		{"bad v1 body", `{"version":1,"orgs":{}}`, ErrCorruptSnapshot},
		{"org without id", snap(`{"org_id":""}`, ""), ErrCorruptSnapshot},
		{"duplicate org", snap(org+","+org, ""), ErrCorruptSnapshot},
		{"key of unknown org", snap(org, key("key_1", "000000000001", "org_b", hash)), ErrCorruptSnapshot},
		{"duplicate key", snap(org, key("key_1", "000000000001", "org_a", hash)+","+key("key_1", "000000000001", "org_a", hash)), ErrCorruptSnapshot},
		{"bad prefix", snap(org, key("key_1", "0001", "org_a", hash)), ErrCorruptSnapshot},
		{"short hash", snap(org, key("key_1", "000000000001", "org_a", "abcd")), ErrCorruptSnapshot},
		{"long hash", snap(org, key("key_1", "000000000001", "org_a", hash+"ab")), ErrCorruptSnapshot},
		{"hash not hex", snap(org, key("key_1", "000000000001", "org_a", strings.Repeat("zz", 32))), ErrCorruptSnapshot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := buildMeta(t, goldenCommands(t))
			before := snapshotBytes(t, m)
			err := m.Restore(strings.NewReader(tt.in))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Restore = %v, want %v", err, tt.want)
			}
			if after := snapshotBytes(t, m); !bytes.Equal(before, after) {
				t.Error("a failed Restore changed the state")
			}
		})
	}
	t.Run("valid hand-written", func(t *testing.T) {
		m := NewMeta()
		if err := m.Restore(strings.NewReader(snap(org, key("key_1", "000000000001", "org_a", hash)))); err != nil {
			t.Fatal(err)
		}
		if ks := m.Keys("org_a"); len(ks) != 1 || ks[0].KeyID != "key_1" {
			t.Errorf("Keys(org_a) = %+v", ks)
		}
	})
}

// TestGoldenSnapshotV1 keeps the version 1 format restoring forever. Run with
// -update only when adding the file, never to paper over a format change.
func TestGoldenSnapshotV1(t *testing.T) {
	path := filepath.Join("testdata", "meta_snapshot_v1.json")
	m := buildMeta(t, goldenCommands(t))
	if *updateGolden {
		if err := os.WriteFile(path, append(snapshotBytes(t, m), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := restored(t, golden)
	if got, want := answers(r), answers(m); !reflect.DeepEqual(got, want) {
		t.Errorf("golden snapshot answers differ:\n got %+v\nwant %+v", got, want)
	}
	if got := snapshotBytes(t, r); !bytes.Equal(got, bytes.TrimSpace(golden)) {
		t.Errorf("snapshot of the golden state is not the golden file:\n got %s\nwant %s", got, golden)
	}
	if _, _, err := r.Authenticate(testRawKey(1)); !errors.Is(err, ErrRevokedKey) {
		t.Errorf("golden: revoked key gives %v", err)
	}
	if org, _, err := r.Authenticate(testRawKey(3)); err != nil || org != "org_b" {
		t.Errorf("golden: key 3 gives %q, %v", org, err)
	}
}

// model is a plain reference of the meta state for random command sequences.
type model struct {
	orgs     map[string]bool
	keys     map[string]modelKey // by key number
	settings map[string]Settings
}

type modelKey struct {
	org     string
	revoked bool
}

// step makes a random command, applies it to the model and returns it with
// the sentinel error Apply must give (nil for success).
func (md *model) step(t testing.TB, rng *rand.Rand) ([]byte, error) {
	org := fmt.Sprintf("org_%d", rng.IntN(6))
	n := rng.IntN(12)
	at := t0.Add(time.Duration(rng.IntN(1000)) * time.Second)
	switch rng.IntN(4) {
	case 0:
		c := CreateOrg{OrgID: org, Name: "n" + org, CreatedAt: at}
		withKey := rng.IntN(2) == 0
		if withKey {
			_, k := testKey(t, n, org)
			c.Key = &k
		}
		switch _, taken := md.keys[fmt.Sprint(n)]; {
		case md.orgs[org]:
			return EncodeCreateOrg(c), ErrOrgExists
		case withKey && taken:
			return EncodeCreateOrg(c), ErrKeyExists
		}
		md.orgs[org] = true
		if withKey {
			md.keys[fmt.Sprint(n)] = modelKey{org: org}
		}
		return EncodeCreateOrg(c), nil
	case 1:
		_, k := testKey(t, n, org)
		switch _, taken := md.keys[fmt.Sprint(n)]; {
		case !md.orgs[org]:
			return EncodeCreateKey(CreateKey{k}), ErrUnknownOrg
		case taken:
			return EncodeCreateKey(CreateKey{k}), ErrKeyExists
		}
		md.keys[fmt.Sprint(n)] = modelKey{org: org}
		return EncodeCreateKey(CreateKey{k}), nil
	case 2:
		c := RevokeKey{KeyID: fmt.Sprintf("key_%012d", n), At: at}
		k, ok := md.keys[fmt.Sprint(n)]
		if !ok {
			return EncodeRevokeKey(c), ErrUnknownKey
		}
		k.revoked = true
		md.keys[fmt.Sprint(n)] = k
		return EncodeRevokeKey(c), nil
	default:
		c := UpdateSettings{OrgID: org}
		if rng.IntN(2) == 0 {
			c.HideReplaced = ptr(rng.IntN(2) == 0)
		}
		if rng.IntN(2) == 0 {
			c.DailyQueryQuota = ptr(int64(rng.IntN(5)) - 1)
		}
		switch {
		case !md.orgs[org]:
			return EncodeUpdateSettings(c), ErrUnknownOrg
		case c.DailyQueryQuota != nil && *c.DailyQueryQuota < 0:
			return EncodeUpdateSettings(c), ErrInvalidCommand
		}
		s, ok := md.settings[org]
		if !ok {
			s = Settings{Plan: Plan{DailyQueryQuota: 10, AtomLimit: 20}}
		}
		if c.HideReplaced != nil {
			s.HideReplaced = *c.HideReplaced
		}
		if c.DailyQueryQuota != nil {
			s.Plan.DailyQueryQuota = *c.DailyQueryQuota
		}
		md.settings[org] = s
		return EncodeUpdateSettings(c), nil
	}
}

// check compares m with the model through the query methods.
func (md *model) check(t *testing.T, m *Meta) {
	t.Helper()
	if m.OrgCount() != len(md.orgs) {
		t.Fatalf("OrgCount = %d, model %d", m.OrgCount(), len(md.orgs))
	}
	for n := range 12 {
		org, _, err := m.Authenticate(testRawKey(n))
		k, ok := md.keys[fmt.Sprint(n)]
		switch {
		case !ok && !errors.Is(err, ErrInvalidKey),
			ok && k.revoked && !errors.Is(err, ErrRevokedKey),
			ok && !k.revoked && (err != nil || org != k.org):
			t.Fatalf("key %d: Authenticate = %q, %v; model %+v (known %v)", n, org, err, k, ok)
		}
	}
	for org := range md.orgs {
		want, ok := md.settings[org]
		if !ok {
			want = Settings{Plan: Plan{DailyQueryQuota: 10, AtomLimit: 20}}
		}
		if got := m.Settings(org, Plan{DailyQueryQuota: 10, AtomLimit: 20}); got != want {
			t.Fatalf("Settings(%s) = %+v, model %+v", org, got, want)
		}
	}
}

// TestRandomSequences feeds random command sequences to two replicas and to a
// replica restored from a snapshot taken at a random point, against a model.
func TestRandomSequences(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			md := &model{orgs: map[string]bool{}, keys: map[string]modelKey{}, settings: map[string]Settings{}}
			a, b := NewMeta(), NewMeta()
			var c *Meta
			steps := 60 + rng.IntN(60)
			cut := rng.IntN(steps)
			for i := 1; i <= steps; i++ {
				cmd, wantErr := md.step(t, rng)
				res := a.Apply(uint64(i), cmd)
				err, _ := res.(error)
				if (wantErr == nil) != (err == nil) || wantErr != nil && !errors.Is(err, wantErr) {
					t.Fatalf("step %d: Apply = %v, model wants error %v", i, res, wantErr)
				}
				b.Apply(uint64(i), cmd)
				if c != nil {
					c.Apply(uint64(i), cmd)
				}
				if i == cut {
					c = restored(t, snapshotBytes(t, a))
				}
			}
			md.check(t, a)
			want := snapshotBytes(t, a)
			for name, r := range map[string]*Meta{"replica": b, "restored": c} {
				if r == nil {
					continue
				}
				if got := snapshotBytes(t, r); !bytes.Equal(got, want) {
					t.Errorf("%s snapshot differs:\n got %s\nwant %s", name, got, want)
				}
			}
		})
	}
}
