package raftfsm

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
)

// withCodedRows sets the size from which domains keep and use codes, for
// the rest of the test.
func withCodedRows(t *testing.T, n int) {
	old := codedRows
	codedRows = n
	t.Cleanup(func() { codedRows = old })
}

func withArenaRows(t *testing.T, n int) {
	old := arenaRows
	arenaRows = n
	t.Cleanup(func() { arenaRows = old })
}

// codeRows is the rows coded in the domain's blocks; -1 without codes.
// Each block must code exactly its own rows.
func codeRows(d *domainIndex) int {
	if !d.hasCodes() {
		return -1
	}
	n := 0
	for k, blk := range d.blocks {
		if blk.codes == nil || blk.codes.Len() != len(blk.vecs)/blk.codes.Quantizer().Dim() {
			return -2 - k
		}
		n += blk.codes.Len()
	}
	return n
}

// TestQuantisedPathPassesTheSuite runs the state machine's tests with every
// domain searched through its codes, so the quantised search and write gate
// meet the same expectations (and the same reference model) as the exact
// scans.
func TestQuantisedPathPassesTheSuite(t *testing.T) {
	tests := stateSuite()
	runEach(t, tests, "", func(t *testing.T) { withCodedRows(t, 1) })
	// Blocks of two rows: every search and gate spans many segments, and
	// deletes move rows across blocks.
	runEach(t, tests, "/blocks", func(t *testing.T) { withCodedRows(t, 1); withArenaRows(t, 2) })
	runEach(t, tests, "/blocks-exact", func(t *testing.T) { withArenaRows(t, 2) })
}

// TestRowsOnDiskPassTheSuite runs the suite with the rows of every full
// block on disk from the first row: searches and gates read them back,
// deletes move rows on disk, snapshots read pinned extents while applies
// go on, and restores rebuild the file. In "/small" a domain under 4 rows
// is searched exactly, so its rows come back into memory.
func TestRowsOnDiskPassTheSuite(t *testing.T) {
	tests := stateSuite()
	for name, test := range map[string]func(*testing.T){
		"SnapshotIsDetached": TestSnapshotIsDetached, "StreamingRestore": TestStreamingRestore, "Reset": TestReset,
		"DeleteLeavesNoTrace": TestDeleteLeavesNoTrace, "QuantisedReadsMatchExact": TestQuantisedReadsMatchExact,
		"PrunedStagesMatchBruteForce": TestPrunedStagesMatchBruteForce,
	} {
		tests[name] = test
	}
	runEach(t, tests, "", func(t *testing.T) { withCodedRows(t, 1); withArenaRows(t, 2); withDiskRows(t, 1) })
	runEach(t, tests, "/small", func(t *testing.T) { withCodedRows(t, 4); withArenaRows(t, 2); withDiskRows(t, 1) })
}

// withDiskRows makes every new state keep full blocks on disk once it
// holds n rows.
func withDiskRows(t *testing.T, n int) {
	old := diskDefault
	diskDefault.dir, diskDefault.rows = t.TempDir(), n
	t.Cleanup(func() { diskDefault = old })
}

// stateSuite is the state machine's tests that the quantised and on-disk
// variants run again.
func stateSuite() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"AgainstModel": TestAgainstModel, "ReplicasAgree": TestReplicasAgree,
		"SnapshotRestoreReplay": TestSnapshotRestoreReplay,
		"ReadSemantic":          TestReadSemantic, "ReadValenceModulation": TestReadValenceModulation,
		"ReadReinforcedTwinOutranks": TestReadReinforcedTwinOutranks, "ReadFingerprint": TestReadFingerprint,
		"ReadFingerprintPullsLiveTip": TestReadFingerprintPullsLiveTip, "ReadHistory": TestReadHistory,
		"ReadConceptScoped": TestReadConceptScoped, "ReadHebbianAssociations": TestReadHebbianAssociations,
		"ReadDiversity": TestReadDiversity, "ReadFilter": TestReadFilter, "ReadAuthor": TestReadAuthor,
		"ReadNaNSafe": TestReadNaNSafe, "ReadTieIndependentOfRows": TestReadTieIndependentOfRows,
		"PrunedStagesMatchBruteForce": TestPrunedStagesMatchBruteForce,
		"WriteGate":                   TestWriteGate, "WriteImportanceIsOneMinusMaxCos": TestWriteImportanceIsOneMinusMaxCos,
		"WriteGateIgnoresSupersededAtoms": TestWriteGateIgnoresSupersededAtoms,
		"WriteGateSkipsOwnTargets":        TestWriteGateSkipsOwnTargets, "WriteBatch": TestWriteBatch,
		"DeleteAtom": TestDeleteAtom, "DeleteSwapsArenaRows": TestDeleteSwapsArenaRows,
		"DeleteDomain": TestDeleteDomain, "FeedbackValence": TestFeedbackValence,
	}
}

// runEach runs every test as a subtest named name+suffix, after setup.
func runEach(t *testing.T, tests map[string]func(*testing.T), suffix string, setup func(*testing.T)) {
	for name, test := range tests {
		t.Run(name+suffix, func(t *testing.T) {
			setup(t)
			test(t)
		})
	}
}

// codedTenant fills one tenant with n atoms of random unit vectors of dim
// over the given domains, with random valences, some superseded and some
// merged, applied through the state machine (so the write gate runs too).
func codedTenant(t *testing.T, seed int64, dim, n int, domains []string) *FSM {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	f := New(dim)
	var ids []ID
	for i := 0; i < n; i += 100 {
		cmd := &WriteCmd{Tenant: "org", Batch: true}
		for j := i; j < min(i+100, n); j++ {
			cmd.Items = append(cmd.Items, WriteItem{ID: mkID(j + 1), CreatedAt: baseTime + int64(j),
				Content: fmt.Sprint("atom ", j), Domain: domains[rng.Intn(len(domains))],
				Concepts: []string{fmt.Sprint("c", rng.Intn(50))}, Vector: randomUnit(rng, dim)})
			ids = append(ids, mkID(j+1))
		}
		f.Apply(uint64(i+1), cmd.Encode())
	}
	tn := f.tenants["org"]
	for _, id := range ids {
		a := tn.atoms[id]
		switch r := rng.Float64(); {
		case r < 0.3:
			tn.setValence(a, rng.Float64()*2-1) // as feedback would
		case r < 0.35:
			a.SupersededBy = mkID(999_999)
		case r < 0.37:
			a.MergedInto = mkID(999_998)
		}
	}
	return f
}

// TestQuantisedReadsMatchExact compares searches through the codes with
// exact scans of the same state: same items, same order, same scores.
func TestQuantisedReadsMatchExact(t *testing.T) {
	const dim = 96
	withCodedRows(t, 64)
	f := codedTenant(t, 1, dim, 6000, []string{"a", "b", "c", "tiny"})
	rng := rand.New(rand.NewSource(2))
	for i := range 40 {
		req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, dim), TopK: 1 + rng.Intn(20),
			MinRelevance: []float64{-1, 0, 0.1}[i%3], HideReplaced: i%2 == 0}
		switch i % 4 {
		case 1:
			req.Domains = []string{"b"}
		case 2:
			req.Domains = []string{"a", "tiny"}
		case 3:
			req.Concepts = []string{"c7", "c8"}
		}
		if i%5 == 0 {
			req.Diversity = 0.5
		}
		if i%3 == 0 {
			req.Calibration = 0.6 // the builtin embedder's
		}
		if d := codedVsExact(f, req); d != "" {
			t.Fatalf("request %d: %s", i, d)
		}
	}
}

// codedVsExact runs req through the codes as the test configured them and
// by exact scans, and describes the first difference ("" when none).
func codedVsExact(f *FSM, req *ReadRequest) string {
	coded := f.Read(req)
	old := codedRows
	codedRows = math.MaxInt
	exact := f.Read(req)
	codedRows = old
	return diffItems(coded.Items, exact.Items)
}

func diffItems(got, want []Item) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d items, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Atom.ID != w.Atom.ID || g.Relevance != w.Relevance || g.Similarity != w.Similarity || g.Source != w.Source {
			return fmt.Sprintf("item %d: %s %v %v %s, want %s %v %v %s", i, g.Atom.ID, g.Relevance, g.Similarity,
				g.Source, w.Atom.ID, w.Relevance, w.Similarity, w.Source)
		}
	}
	return ""
}

// TestQuantisedGateMatchesExact: batches written through the coded gate
// store the same importances as through exact scans, and restoring a
// snapshot (which rebuilds the codes) changes nothing.
func TestQuantisedGateMatchesExact(t *testing.T) {
	const dim = 64
	withCodedRows(t, 32)
	coded := codedTenant(t, 3, dim, 3000, []string{"a", "b"})
	codedRows = math.MaxInt
	exact := codedTenant(t, 3, dim, 3000, []string{"a", "b"})
	codedRows = 32
	if coded.StateHash() != exact.StateHash() {
		t.Fatal("the coded write gate stored other importances than the exact one")
	}
	copy := restored(t, snapshotBytes(t, coded), dim)
	for _, d := range copy.tenants["org"].domains {
		if codeRows(d) != len(d.rows) {
			t.Fatal("restore did not rebuild the codes")
		}
	}
	rng := rand.New(rand.NewSource(4))
	for i := range 5 {
		cmd := (&WriteCmd{Tenant: "org", Batch: true, Items: []WriteItem{{ID: mkID(100_000 + i),
			CreatedAt: baseTime + 1e9, Domain: "a", Vector: randomUnit(rng, dim)}}}).Encode()
		coded.Apply(uint64(10_000+i), cmd)
		copy.Apply(uint64(10_000+i), cmd)
	}
	if coded.StateHash() != copy.StateHash() {
		t.Fatal("a restored replica's gate diverges")
	}
}

// TestCodesFollowTheArena: after random inserts and deletes (swap-removes),
// every large domain has codes for all its rows, and searches through them
// still agree with exact scans.
func TestCodesFollowTheArena(t *testing.T) {
	const dim = 16
	withCodedRows(t, 40)
	x := &fixture{t: t, f: New(dim), tenant: "org"}
	rng := rand.New(rand.NewSource(5))
	var live []ID
	for range 600 {
		if len(live) > 0 && rng.Intn(3) == 0 {
			i := rng.Intn(len(live))
			x.deleteAtom(live[i])
			live = slices.Delete(live, i, i+1)
			continue
		}
		it := x.item("x", []string{"a", "b"}[rng.Intn(2)], randomUnit(rng, dim))
		if r := x.write(it); r.Stored {
			live = append(live, r.AtomID)
		}
	}
	for name, d := range x.f.tenants["org"].domains {
		if d.coded() && !d.hasCodes() {
			t.Fatalf("domain %s: %d rows and no codes", name, len(d.rows))
		}
		if !d.hasCodes() {
			continue
		}
		if n := codeRows(d); n != len(d.rows) {
			t.Fatalf("domain %s: %d codes for %d rows", name, n, len(d.rows))
		}
	}
	// Codes out of step with their rows would rank by the wrong estimates.
	for i := range 30 {
		req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, dim), TopK: 5, MinRelevance: -1}
		if d := codedVsExact(x.f, req); d != "" {
			t.Fatalf("request %d: %s", i, d)
		}
	}
}

// TestBlockedArenas runs the quantised-path checks with blocks of 64 rows,
// so that domains span many blocks, codes live per block and deletes move
// rows (and re-encode them) across blocks.
func TestBlockedArenas(t *testing.T) {
	tests := map[string]func(*testing.T){
		"QuantisedReadsMatchExact": TestQuantisedReadsMatchExact, "QuantisedGateMatchesExact": TestQuantisedGateMatchesExact,
		"CodesFollowTheArena": TestCodesFollowTheArena, "BatchMatchesItemByItem": TestBatchMatchesItemByItem,
		"PrunedStagesMatchBruteForce": TestPrunedStagesMatchBruteForce, "SnapshotIsDetached": TestSnapshotIsDetached,
	}
	runEach(t, tests, "", func(t *testing.T) { withArenaRows(t, 64) })
}
