package raftfsm

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/hebbdb/hebb/vecmath"
)

// TestRestoreCodesBlocksAsTheyFill restores states whose domains span many
// blocks, into memory and with rows going to disk partway (the blockCoder
// codes and moves blocks while the snapshot is read, starts blocks whole
// and reuses memory blocks outgrew), and checks every row, every code and
// every read against the state the snapshot came from.
func TestRestoreCodesBlocksAsTheyFill(t *testing.T) {
	withCodedRows(t, 8)
	withArenaRows(t, 4)
	const dim = 16
	src := New(dim)
	rng := rand.New(rand.NewSource(11))
	// Domains of every kind, their atoms interleaved: "big" spans many
	// blocks, "mid" a few, "small" stays under codedRows (no codes),
	// "late" only starts near the end; a few secrets.
	domains := []string{"big", "big", "big", "mid", "small", "big", "mid"}
	for i := 0; i < 300; i += 10 {
		cmd := &WriteCmd{Tenant: "org", Batch: true}
		for j := i; j < i+10; j++ {
			it := WriteItem{ID: mkID(j + 1), CreatedAt: baseTime + int64(j), Content: fmt.Sprint("atom ", j),
				Domain: domains[j%len(domains)], Concepts: []string{fmt.Sprint("c", rng.Intn(20))}, Vector: randomUnit(rng, dim)}
			switch {
			case it.Domain == "small" && j > 30:
				it.Domain = "mid"
			case j >= 270 && j%2 == 0:
				it.Domain = "late"
			case j%37 == 0:
				it.Type, it.Vector = Secret, nil
			}
			cmd.Items = append(cmd.Items, it)
		}
		src.Apply(uint64(i+1), cmd.Encode())
	}
	state := src.encodeState()
	type variant struct{ above, stage int }
	for _, v := range []variant{{0, 256}, {1, 256}, {100, 256}, {1, 3}, {100, 3}, {60, 1}} {
		t.Run(fmt.Sprintf("disk above %d, staged by %d", v.above, v.stage), func(t *testing.T) {
			above := v.above
			withStageRows(t, v.stage)
			back := New(dim)
			if above > 0 {
				back.DiskVectors(t.TempDir(), above)
			}
			if err := back.Restore(bytes.NewReader(state)); err != nil {
				t.Fatal(err)
			}
			on, _ := diskBlocks(back) // panics on a block both on disk and in memory
			if (on > 0) != (above > 0) {
				t.Fatalf("%d blocks on disk", on)
			}
			if back.StateHash() != src.StateHash() {
				t.Fatal("the restored state differs")
			}
			sameRowsAndCodes(t, src, back)
			for q := range 20 {
				req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, dim), TopK: 5, MinRelevance: -1}
				if d := diffItems(back.Read(req).Items, src.Read(req).Items); d != "" {
					t.Fatalf("query %d: %s", q, d)
				}
				if d := codedVsExact(back, req); d != "" {
					t.Fatalf("query %d: %s", q, d)
				}
			}
		})
	}
}

func withStageRows(t *testing.T, n int) {
	old := stageRows
	stageRows = n
	t.Cleanup(func() { stageRows = old })
}

// sameRowsAndCodes checks that back's domains hold src's rows in the same
// places, blocks no longer than their rows, and the same codes: every
// block of a coded domain has them, bounding every row as src's do.
func sameRowsAndCodes(t *testing.T, src, back *FSM) {
	t.Helper()
	rng := rand.New(rand.NewSource(1))
	bq := vecmath.NewBounder(quantizer(src.dim))
	bq.Prepare(randomUnit(rng, src.dim))
	want, got := src.tenants["org"], back.tenants["org"]
	if len(got.domains) != len(want.domains) {
		t.Fatalf("%d domains, want %d", len(got.domains), len(want.domains))
	}
	for name, wd := range want.domains {
		gd := got.domains[name]
		if len(gd.rows) != len(wd.rows) || len(gd.blocks) != len(wd.blocks) {
			t.Fatalf("domain %s: %d rows in %d blocks, want %d in %d", name, len(gd.rows), len(gd.blocks), len(wd.rows), len(wd.blocks))
		}
		for i := range wd.rows {
			w, g := wd.rowTo(i, src.dim, make([]float32, src.dim)), gd.rowTo(i, src.dim, make([]float32, src.dim))
			if gd.rows[i].ID != wd.rows[i].ID || !slices.Equal(g, w) {
				t.Fatalf("domain %s, row %d differs", name, i)
			}
		}
		for k := range gd.blocks {
			b := &gd.blocks[k]
			if b.disk == nil && (len(b.vecs) != gd.blockRows(k)*src.dim || cap(b.vecs) > arenaRows*src.dim) {
				t.Fatalf("domain %s, block %d: %d floats (room for %d) for %d rows", name, k, len(b.vecs), cap(b.vecs), gd.blockRows(k))
			}
			if (b.codes != nil) != gd.coded() {
				t.Fatalf("domain %s of %d rows, block %d: codes %v", name, len(gd.rows), k, b.codes != nil)
			}
			if b.codes == nil {
				continue
			}
			for r := range gd.blockRows(k) {
				if g, w := bq.Upper(b.codes, r), bq.Upper(wd.blocks[k].codes, r); g != w {
					t.Fatalf("domain %s, block %d, row %d: bound %v, want %v", name, k, r, g, w)
				}
			}
		}
	}
}
