package raftfsm

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/iotest"
)

var update = flag.Bool("update", false, "rewrite the golden snapshot in testdata/")

const goldenV1 = "testdata/snapshot-v1.bin"

// snapshotBytes runs Snapshot and its write function.
func snapshotBytes(t testing.TB, f *FSM) []byte {
	t.Helper()
	write, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func restored(t testing.TB, b []byte, dim int) *FSM {
	t.Helper()
	f := New(dim)
	if err := f.Restore(bytes.NewReader(b)); err != nil {
		t.Fatalf("restore: %v", err)
	}
	return f
}

// assertSameAsRestored checks that a snapshot of f restores into a state
// with the same hash that answers reads exactly as f does: the indexes
// rebuilt from the snapshot match the ones f maintained incrementally.
func assertSameAsRestored(t *testing.T, f *FSM) {
	t.Helper()
	g := restored(t, snapshotBytes(t, f), f.Dim())
	if f.StateHash() != g.StateHash() {
		t.Fatal("restored state hashes differently")
	}
	for _, tenant := range sortedTenants(f) {
		if !slices.Equal(f.Domains(tenant), g.Domains(tenant)) {
			t.Fatalf("tenant %s: domains differ", tenant)
		}
		concepts := allConcepts(f, tenant)
		for axis := range min(f.Dim(), testDim) {
			q := make([]float32, f.Dim())
			q[axis] = 1
			for _, hide := range []bool{false, true} {
				for _, topK := range []int{1, 3, 1000} {
					req := ReadRequest{Tenant: tenant, Vector: q, TopK: topK, Concepts: concepts,
						IncludeAssociations: true, HideReplaced: hide, MinRelevance: -2}
					a, b := f.Read(&req), g.Read(&req)
					if !sameItems(a.Items, b.Items) || !slices.Equal(a.Expanded, b.Expanded) {
						t.Fatalf("tenant %s axis %d hide %v: reads differ\n  live     %v\n  restored %v",
							tenant, axis, hide, itemIDs(a.Items), itemIDs(b.Items))
					}
				}
			}
		}
	}
}

func sameItems(a, b []Item) bool {
	if len(a) != len(b) {
		return false
	}
	byID := make(map[ID]Item, len(b))
	for _, it := range b {
		byID[it.Atom.ID] = it
	}
	for _, it := range a {
		o, ok := byID[it.Atom.ID]
		if !ok || o.Relevance != it.Relevance || o.Source != it.Source {
			return false
		}
	}
	return true
}

func sortedTenants(f *FSM) []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []string
	for id := range f.tenants {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func allConcepts(f *FSM, tenant string) []string {
	page, _ := f.ExportPage(tenant, nil, 1<<30)
	seen := map[string]bool{}
	var out []string
	for _, a := range page {
		for _, c := range a.Concepts {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// goldenFSM applies the fixed command sequence the golden snapshot was
// generated from.
func goldenFSM(t *testing.T) *FSM {
	x := newFixture(t)
	x.tenant = "org-a"
	a := x.item("the deploy runs on fridays", "ops", unit(1, 0.5))
	a.Concepts = []string{"deploy", "friday"}
	a.Metadata = []byte(`{"team":"core","tags":["ci"]}`)
	a.Fingerprint, a.ExternalRef = "fp-deploy", "ticket-7"
	deploy := x.store(a)
	x.supersede("the deploy runs on thursdays", "ops", unit(1, 0.4, 0.1), deploy)
	x.secret("db", "ops")
	x.feedback(1, []ID{deploy}, "release")
	b := x.apply(&WriteCmd{Tenant: "room_x", Batch: true, Items: []WriteItem{
		{ID: mkID(900), CreatedAt: baseTime, Content: "room note", Domain: "xroom:room_x",
			Concepts: []string{"note"}, Vector: oneHot(3),
			Provenance: &Provenance{Principal: "alice", Agent: "claude", ClientEnv: "cli", IsExternal: true, RecordedAt: baseTime}},
		{ID: mkID(901), CreatedAt: baseTime, Content: "second note", Domain: "xroom:room_x", Vector: oneHot(4)},
	}}).(*WriteResults)
	if b.Err != nil || !b.Results[1].Stored {
		t.Fatalf("batch %+v", b)
	}
	x.apply(&TouchCmd{Tenant: "room_x", IDs: []ID{mkID(900)}, At: baseTime + 5})
	if r := x.apply(goldenIdemBatch()).(*WriteResults); r.Err != nil || !r.Results[0].Stored || r.Replayed {
		t.Fatalf("idempotent batch %+v", r)
	}
	gone := x.put("to be deleted", "ops", oneHot(7))
	x.deleteAtom(gone)
	return x.f
}

// goldenIdemBatch is a write-batch carrying an Idempotency-Key.
func goldenIdemBatch() *WriteCmd {
	return &WriteCmd{Tenant: "org-a", Batch: true, Idem: &Idempotency{Key: "key-1",
		BodyHash: [32]byte{1, 2, 3}, ExpiresAt: baseTime + 86_400_000_000},
		Items: []WriteItem{{ID: mkID(950), CreatedAt: baseTime + 1_000_000, Content: "idempotent",
			Domain: "ops", Vector: oneHot(6)}}}
}

func TestGoldenSnapshotV1(t *testing.T) {
	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenV1), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenV1, snapshotBytes(t, goldenFSM(t)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(goldenV1)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGoldenSnapshotV1 -update once)", err)
	}
	f := New(0) // the dimension comes from the snapshot
	if err := f.Restore(bytes.NewReader(b)); err != nil {
		t.Fatalf("the v1 golden snapshot no longer restores: %v", err)
	}
	if !bytes.Equal(snapshotBytes(t, f), b) {
		t.Fatal("re-encoding the v1 golden snapshot changed its bytes")
	}
	if f.Dim() != testDim {
		t.Fatalf("dim %d", f.Dim())
	}
	st := f.Stats("org-a")
	if st.TotalAtoms != 3 || st.HebbianEdges != 3 || st.EpisodicFingerprints != 1 || !slices.Equal(st.Domains, []string{"ops"}) {
		t.Fatalf("org-a stats %+v", st)
	}
	old, ok := f.GetByExternalRef("org-a", "ticket-7")
	if !ok || old.Valence != 0.3 || string(old.Metadata) != `{"team":"core","tags":["ci"]}` || !old.Superseded() {
		t.Fatalf("ticket-7: %+v", old)
	}
	chain, _ := f.Chain("org-a", old.ID)
	if len(chain.Revisions) != 2 || !chain.Revisions[1].IsHead {
		t.Fatalf("chain %+v", chain)
	}
	page, _ := f.ExportPage("org-a", nil, 10)
	if len(page) != 4 || page[2].Type != Secret || string(page[2].Sealed) != "sealed-db" {
		t.Fatalf("org-a export %+v", page)
	}
	note, ok := f.Get("room_x", mkID(900))
	if !ok || note.AccessCount != 1 || note.Provenance == nil || note.Provenance.Principal != "alice" || !note.Provenance.IsExternal {
		t.Fatalf("room note %+v", note)
	}
	res := f.Read(&ReadRequest{Tenant: "org-a", Vector: unit(1, 0.4, 0.1), TopK: 5, HideReplaced: true, MinRelevance: 0.3})
	if len(res.Items) != 1 || res.Items[0].Atom.Content != "the deploy runs on thursdays" {
		t.Fatalf("read after restore: %v", itemIDs(res.Items))
	}
	if r := f.Apply(1, goldenIdemBatch().Encode()).(*WriteResults); !r.Replayed || r.Results[0].AtomID != mkID(950) {
		t.Fatalf("retried idempotent batch after restore: %+v", r)
	}
	// Writes continue where the snapshot left off.
	w := f.Apply(1, (&WriteCmd{Tenant: "room_x", Items: []WriteItem{{ID: mkID(902), CreatedAt: 1,
		Content: "late", Domain: "xroom:room_x", Vector: oneHot(5)}}}).Encode()).(*WriteResults)
	if a, _ := f.Get("room_x", w.Results[0].AtomID); a.CreatedAt <= note.CreatedAt {
		t.Fatalf("created_at %d not after the restored feed (%d)", a.CreatedAt, note.CreatedAt)
	}
}

func TestRestoreRejectsGarbage(t *testing.T) {
	valid := snapshotBytes(t, goldenFSM(t))
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"wrong magic", append([]byte("HEBBXXX"), valid[7:]...)},
		{"unknown version", append(append([]byte(snapshotMagic), 2), valid[8:]...)},
		{"trailing bytes", append(slices.Clone(valid), 0)},
		{"huge dimension", append([]byte(snapshotMagic), 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0)},
	}
	for n := range len(valid) {
		tests = append(tests, struct {
			name string
			b    []byte
		}{"truncated", valid[:n]})
	}
	for _, tc := range tests {
		f := goldenFSM(t)
		before := f.StateHash()
		for _, r := range restoreReaders(tc.b) {
			err := f.Restore(r)
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("%s (%d bytes, %T): error %v, want ErrSnapshot", tc.name, len(tc.b), r, err)
			}
			if f.StateHash() != before {
				t.Fatalf("%s: a failed restore changed the state", tc.name)
			}
		}
	}
	t.Run("size told wrong", func(t *testing.T) {
		for _, n := range []int64{1, int64(len(valid)) - 1, int64(len(valid)) + 1, 10 * int64(len(valid))} {
			err := New(testDim).Restore(sizedReader{bytes.NewReader(valid), n})
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("size %d of %d: error %v, want ErrSnapshot", n, len(valid), err)
			}
		}
	})
	t.Run("dimension mismatch", func(t *testing.T) {
		err := New(testDim + 1).Restore(bytes.NewReader(valid))
		if !errors.Is(err, ErrSnapshot) {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("read error", func(t *testing.T) {
		boom := errors.New("disk on fire")
		for _, r := range []io.Reader{iotest.ErrReader(boom), sizedReader{iotest.ErrReader(boom), 100},
			sizedReader{io.MultiReader(bytes.NewReader(valid[:len(valid)/2]), iotest.ErrReader(boom)), int64(len(valid))}} {
			if err := New(testDim).Restore(r); !errors.Is(err, boom) {
				t.Fatalf("%T: error %v", r, err)
			}
		}
	})
	t.Run("write error", func(t *testing.T) {
		write, _ := goldenFSM(t).Snapshot()
		if err := write(failWriter{}); !errors.Is(err, io.ErrShortWrite) {
			t.Fatalf("error %v", err)
		}
	})
}

// restoreReaders are b read as a stream (a reader that tells its size) and
// read whole (one that does not).
func restoreReaders(b []byte) []io.Reader {
	return []io.Reader{bytes.NewReader(b), struct{ io.Reader }{bytes.NewReader(b)}}
}

// sizedReader tells n as its size, whatever r holds.
type sizedReader struct {
	io.Reader
	n int64
}

func (r sizedReader) Size() int64 { return r.n }

// TestStreamingRestore decodes a snapshot as a stream in windows from one
// byte up, so fills land on every boundary: the state is the one decoded
// from the whole bytes.
func TestStreamingRestore(t *testing.T) {
	b := snapshotBytes(t, goldenFSM(t))
	tenants, dim, err := decodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	want := (&FSM{dim: dim, tenants: tenants}).encodeState()
	for _, size := range []int{1, 2, 3, 7, 64, 1000, len(b) - 1, len(b), 2 * len(b)} {
		r := iotest.HalfReader(bytes.NewReader(b)) // short reads too
		got, gdim, err := decodeFrom(streamDec(r, int64(len(b)), size), &vecStore{})
		if err != nil {
			t.Fatalf("window %d: %v", size, err)
		}
		if s := (&FSM{dim: gdim, tenants: got}).encodeState(); !bytes.Equal(s, want) {
			t.Fatalf("window %d: the state differs from the whole decode", size)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrShortWrite }

// A snapshot is encoded after Snapshot returns, while applies go on: what
// they change in place (a deleted row overwritten by the last one, a
// truncated arena appended to, supersession, valence, edge weights) must
// not reach it.
func TestSnapshotIsDetached(t *testing.T) {
	x, ids := semanticFixture(t)
	x.put("edge seed", "d", oneHot(4), "alpha", "beta")
	write, _ := x.f.Snapshot()
	want := x.f.encodeState()
	x.deleteAtom(ids[0]) // the last row moves into its slot
	x.put("after the snapshot", "d", oneHot(5), "alpha", "beta")
	x.deleteAtom(x.put("gone", "d", oneHot(6)))
	x.supersede("newer", "d", oneHot(7), ids[1])
	x.feedback(1, []ID{ids[2]}, "alpha")
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatal("the snapshot saw writes applied after it was taken")
	}
	// A second snapshot sees them, and restores to the live state.
	if got := restored(t, snapshotBytes(t, x.f), testDim).StateHash(); got != x.f.StateHash() {
		t.Fatal("a later snapshot does not restore to the live state")
	}
}

func TestRestoreCorruptionNeverPanics(t *testing.T) {
	valid := snapshotBytes(t, goldenFSM(t))
	rng := rand.New(rand.NewSource(7))
	for range 2000 {
		b := slices.Clone(valid)
		for range 1 + rng.Intn(4) {
			b[len(snapshotMagic)+1+rng.Intn(len(b)-len(snapshotMagic)-1)] = byte(rng.Intn(256))
		}
		checkDecodeState(t, b)
	}
}

func decodeState(b []byte) (map[string]*tenant, int, error) {
	return decodeFrom(&dec{b: b}, &vecStore{})
}

// checkDecodeState asserts that decodeState either fails with ErrSnapshot
// or yields a state whose encoding is a fixed point of decode∘encode, and
// that decoding the bytes as a stream, in small windows, does the same.
func checkDecodeState(t testing.TB, b []byte) {
	tenants, dim, err := decodeState(b)
	streamed, sdim, serr := decodeFrom(streamDec(bytes.NewReader(b), int64(len(b)), 5), &vecStore{})
	if (err == nil) != (serr == nil) {
		t.Fatalf("decoding whole: %v; streaming: %v", err, serr)
	}
	if err != nil {
		if !errors.Is(err, ErrSnapshot) || !errors.Is(serr, ErrSnapshot) {
			t.Fatalf("errors %v, %v do not wrap ErrSnapshot", err, serr)
		}
		return
	}
	once := (&FSM{dim: dim, tenants: tenants}).encodeState()
	if s := (&FSM{dim: sdim, tenants: streamed}).encodeState(); !bytes.Equal(s, once) {
		t.Fatal("a streamed decode differs from a whole one")
	}
	tenants2, dim2, err := decodeState(once)
	if err != nil {
		t.Fatalf("re-encoded state does not decode: %v", err)
	}
	twice := (&FSM{dim: dim2, tenants: tenants2}).encodeState()
	if !bytes.Equal(once, twice) {
		t.Fatal("decode∘encode is not stable")
	}
}

func FuzzDecodeState(f *testing.F) {
	f.Add([]byte(nil))
	f.Add([]byte(snapshotMagic + "\x01\x08\x00"))
	f.Add(New(testDim).encodeState())
	if b, err := os.ReadFile(goldenV1); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeState(t, b)
	})
}

// A snapshot of several chunks (the encoder reuses one buffer for them)
// restores every atom's bytes.
func TestMultiChunkSnapshotRestores(t *testing.T) {
	x := newFixture(t)
	rng := rand.New(rand.NewSource(7))
	var ids []ID
	contents := map[ID]string{}
	for range 900 {
		text := make([]byte, 4000) // 900 atoms of 4 kB: 3.6 MB, four chunks
		for j := range text {
			text[j] = 'a' + byte(rng.Intn(26))
		}
		c := string(text)
		v := make([]float64, testDim) // random directions: the gate keeps each
		for j := range v {
			v[j] = rng.NormFloat64()
		}
		id := x.put(c, "d", unit(v...))
		ids = append(ids, id)
		contents[id] = c
	}
	b := snapshotBytes(t, x.f)
	if len(b) < 3*chunkBytes {
		t.Fatalf("the snapshot is %d bytes: too small to span chunks", len(b))
	}
	g := restored(t, b, testDim)
	for _, id := range ids {
		a, ok := g.Get(x.tenant, id)
		if !ok || a.Content != contents[id] {
			t.Fatalf("atom %v: restored %v, content equal %v", id, ok, a.Content == contents[id])
		}
	}
	if g.StateHash() != x.f.StateHash() {
		t.Fatal("the restored state differs")
	}
}

// A snapshot is encoded while applies change the atoms it froze in every
// way apply changes a stored atom (run with -race: encoding reads no field
// those applies write), and its bytes are those of the state it froze.
func TestSnapshotEncodesWhileApplying(t *testing.T) {
	x, ids := semanticFixture(t)
	sec := x.secret("db", "d")
	twins := &WriteCmd{Tenant: "org", Batch: true}
	for j := range 6 {
		v := oneHot(5)
		v[j] += 0.1
		twins.Items = append(twins.Items, WriteItem{ID: mkID(500 + j), CreatedAt: baseTime + int64(500+j),
			Content: fmt.Sprint("twin ", j), Domain: "b", Concepts: []string{"twin"}, Vector: normalized(v)})
	}
	x.apply(twins)
	for range 5 { // valence 0.83: consolidation keeps this twin as a singleton
		x.feedback(1, []ID{mkID(505)})
	}
	write, err := x.f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	later, err := x.f.Snapshot() // encoded once every apply is done
	if err != nil {
		t.Fatal(err)
	}
	want := x.f.encodeState()
	done := make(chan []byte)
	go func() {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			t.Error(err)
		}
		done <- buf.Bytes()
	}()
	x.apply(&TouchCmd{Tenant: "org", IDs: ids[:], At: baseTime + 9_000_000})
	x.feedback(1, []ID{ids[2]}, "alpha")
	x.supersede("newer", "d", oneHot(7), ids[1])
	again := x.item("context of db", "d", nil)
	again.ID, again.Type, again.ExternalRef, again.Sealed = sec, Secret, "secret:db", []byte("sealed again")
	if r := x.write(again); r.Reason != "replaced" {
		t.Fatalf("the secret was not replaced: %+v", r)
	}
	r := x.apply(&ConsolidateCmd{Tenant: "org", Domain: "b", At: baseTime + 600, BaseID: mkID(700)}).(*ConsolidateResult)
	if r.PrototypesCreated == 0 || r.SingletonsProtected != 1 {
		t.Fatalf("consolidation: %+v", r)
	}
	if got := <-done; !bytes.Equal(got, want) {
		t.Fatal("the snapshot saw applies made while it was encoded")
	}
	var buf bytes.Buffer
	if err := later(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatal("the snapshot saw applies made after it was taken")
	}
}
