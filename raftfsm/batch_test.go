package raftfsm

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// batchCase builds random batches over a few domains: vectors near a few
// centres (so gates compete), exact copies of earlier items of the same
// batch and of stored rows (duplicates the gate refuses), repeated
// external_refs, secrets, and a domain that is new to the tenant.
type batchCase struct {
	rng     *rand.Rand
	dim     int
	domains []string
	centres [][]float32
	stored  [][]float32 // vectors written so far, any domain
	next    int
}

func (c *batchCase) vector() []float32 {
	switch r := c.rng.Float64(); {
	case r < 0.1 && len(c.stored) > 0:
		return append([]float32(nil), c.stored[c.rng.Intn(len(c.stored))]...)
	case r < 0.6:
		v := append([]float32(nil), c.centres[c.rng.Intn(len(c.centres))]...)
		for i := range v {
			v[i] += float32(c.rng.NormFloat64() * 0.05)
		}
		return normalized(v)
	}
	return randomUnit(c.rng, c.dim)
}

func (c *batchCase) item() WriteItem {
	c.next++
	it := WriteItem{ID: mkID(c.next), CreatedAt: baseTime + int64(c.next), Content: fmt.Sprint("item ", c.next),
		Domain: c.domains[c.rng.Intn(len(c.domains))], Concepts: []string{fmt.Sprint("k", c.rng.Intn(9)),
			fmt.Sprint("k", c.rng.Intn(9))}, Vector: c.vector()}
	if c.rng.Intn(10) == 0 {
		it.ExternalRef = fmt.Sprint("ref", c.rng.Intn(20))
	}
	if c.rng.Intn(25) == 0 {
		it.Type, it.ExternalRef, it.Sealed, it.Vector = Secret, fmt.Sprint("secret:s", c.rng.Intn(3)), []byte("x"), nil
	}
	if it.Vector != nil {
		c.stored = append(c.stored, it.Vector)
	}
	return it
}

func (c *batchCase) batch(n int) *WriteCmd {
	cmd := &WriteCmd{Tenant: "org", Batch: true}
	for range n {
		cmd.Items = append(cmd.Items, c.item())
	}
	// Copies of earlier items of the same batch.
	for range n / 6 {
		i, j := c.rng.Intn(len(cmd.Items)), c.rng.Intn(len(cmd.Items))
		if i < j && cmd.Items[i].Vector != nil && cmd.Items[j].Vector != nil {
			cmd.Items[j].Vector = append([]float32(nil), cmd.Items[i].Vector...)
		}
	}
	return cmd
}

// TestBatchMatchesItemByItem applies random batches to one state machine
// as batches (writeBatch) and to another item by item (one-item commands
// take the sequential path) and compares every result and the state hash,
// over exact and coded domains and domains crossing the coded size inside
// a batch, with more gating goroutines than cores.
func TestBatchMatchesItemByItem(t *testing.T) {
	tests := []struct {
		name      string
		codedRows int
		batches   int
		size      int
	}{
		{"exact domains", 1 << 30, 12, 60},
		{"coded domains", 48, 12, 80},
		{"crossing the coded size", 150, 8, 100},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			withCodedRows(t, tc.codedRows)
			const dim = 32
			rng := rand.New(rand.NewSource(int64(tc.codedRows)))
			c := &batchCase{rng: rng, dim: dim, domains: []string{"a", "b", "c"}}
			for range 4 {
				c.centres = append(c.centres, randomUnit(rng, dim))
			}
			batched, single := New(dim), New(dim)
			stats := map[string]int{}
			for b := range tc.batches {
				if b == tc.batches/2 {
					c.domains = append(c.domains, "new")
				}
				cmd := c.batch(tc.size)
				got := batched.Apply(uint64(b+1), cmd.Encode()).(*WriteResults)
				for i, it := range cmd.Items {
					one := &WriteCmd{Tenant: cmd.Tenant, Batch: true, Items: []WriteItem{it}}
					want := single.Apply(uint64(b+1), one.Encode()).(*WriteResults)
					if !reflect.DeepEqual(got.Results[i], want.Results[0]) {
						t.Fatalf("batch %d item %d: %+v, want %+v", b, i, got.Results[i], want.Results[0])
					}
					stats[outcome(got.Results[i], cmd.Items[:i])]++
				}
				if batched.StateHash() != single.StateHash() {
					t.Fatalf("batch %d: states differ", b)
				}
				sameRowsAndCodes(t, single, batched) // codes encoded beside the gates too
			}
			t.Logf("%v", stats)
			if stats["stored"] < 100 || stats["duplicate of a stored row"] < 10 ||
				stats["duplicate of an earlier item"] < 10 || stats["external_ref exists"] < 5 {
				t.Fatalf("too few interesting outcomes: %v", stats)
			}
		})
	}
}

// outcome names a batch item's result for the test's statistics.
func outcome(r WriteResult, earlier []WriteItem) string {
	for _, it := range earlier {
		if r.Reason == duplicateResult(&Atom{ID: it.ID}).Reason {
			return "duplicate of an earlier item"
		}
	}
	if strings.HasPrefix(r.Reason, "duplicate of") {
		return "duplicate of a stored row"
	}
	return r.Reason
}

// numberedBatch is a batch of tenant "org" of items from..from+n-1: item j
// has ID j+1, content "atom j", a random unit vector, and the domain and
// concepts of(j) gives.
func numberedBatch(rng *rand.Rand, dim, from, n int, of func(j int) (string, []string)) *WriteCmd {
	cmd := &WriteCmd{Tenant: "org", Batch: true}
	for j := from; j < from+n; j++ {
		domain, concepts := of(j)
		cmd.Items = append(cmd.Items, WriteItem{ID: mkID(j + 1), CreatedAt: baseTime + int64(j),
			Content: fmt.Sprint("atom ", j), Domain: domain, Concepts: concepts, Vector: randomUnit(rng, dim)})
	}
	return cmd
}

// TestBatchReservesBlocks checks that a batch's gates, run under the read
// lock, make room in the last blocks (and codes) its rows would grow, that
// its store puts them in place and grows none itself, and that the state
// equals one whose blocks grew as rows were added.
func TestBatchReservesBlocks(t *testing.T) {
	withCodedRows(t, 8)
	withArenaRows(t, 64)
	const dim = 16
	rng := rand.New(rand.NewSource(9))
	batch := func(from, n int) *WriteCmd {
		return numberedBatch(rng, dim, from, n, func(j int) (string, []string) {
			return []string{"a", "b"}[j%2], []string{fmt.Sprint("c", j%5)}
		})
	}
	reserved, grown := New(dim), New(dim)
	first := batch(0, 20).Encode() // 10 rows a domain: blocks of room for 16
	reserved.Apply(1, first)
	grown.Apply(1, first)
	cmd := batch(20, 30) // 15 more a domain: both blocks grow
	pre := reserved.pregate(cmd)
	if len(pre.grown) != 2 {
		t.Fatalf("reserve grew %d blocks, want the last block of both domains", len(pre.grown))
	}
	want := map[*arenaBlock][]float32{}
	for _, g := range pre.grown {
		if g.codes == nil || cap(g.vecs) < (10+15)*dim {
			t.Fatalf("a reserved block has room for %d rows (codes %v), want 25", cap(g.vecs)/dim, g.codes != nil)
		}
		want[g.blk] = g.vecs
	}
	reserved.applyWrite(cmd, pre)
	grown.Apply(2, cmd.Encode())
	for _, d := range reserved.tenants["org"].domains {
		blk := &d.blocks[0]
		if v, ok := want[blk]; !ok || &blk.vecs[0] != &v[0] || cap(blk.vecs) != cap(v) {
			t.Fatalf("domain %s: the store did not keep the reserved rows", d.name)
		}
		if codeRows(d) != len(d.rows) {
			t.Fatalf("domain %s: %d rows coded of %d", d.name, codeRows(d), len(d.rows))
		}
	}
	if reserved.StateHash() != grown.StateHash() {
		t.Fatal("the states differ")
	}
	for q := range 10 {
		req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, dim), TopK: 5, MinRelevance: -1,
			Concepts: []string{fmt.Sprint("c", q%5)}}
		if d := diffItems(reserved.Read(req).Items, grown.Read(req).Items); d != "" {
			t.Fatalf("query %d: %s", q, d)
		}
	}
}

// edgeBatches returns batches of numbered items into domain "d", each with
// three of seven concepts, so that later batches touch the edges earlier
// ones made.
func edgeBatches(dim int, seed int64) func(from, n int) *WriteCmd {
	rng := rand.New(rand.NewSource(seed))
	return func(from, n int) *WriteCmd {
		return numberedBatch(rng, dim, from, n, func(j int) (string, []string) {
			return "d", []string{fmt.Sprint("c", j%7), fmt.Sprint("c", (j+1)%7), fmt.Sprint("c", (j+3)%7)}
		})
	}
}

// TestBatchCopiesSharedEdges checks that a batch copies, in its read-lock
// phase, the edge chunks a snapshot shares that its items touch, that the
// snapshot still writes the state it was taken of, and that the state
// equals one no snapshot shared.
func TestBatchCopiesSharedEdges(t *testing.T) {
	const dim = 16
	batch := edgeBatches(dim, 11)
	snapped, plain := New(dim), New(dim)
	first := batch(0, 40).Encode()
	snapped.Apply(1, first)
	plain.Apply(1, first)
	write, err := snapped.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := snapped.encodeState()
	cmd := batch(40, 20)
	pre := snapped.pregate(cmd)
	if len(pre.edges) == 0 {
		t.Fatal("the batch copied no shared edge chunk")
	}
	copies := pre.edges
	snapped.applyWrite(cmd, pre)
	plain.Apply(2, cmd.Encode())
	edges := &snapped.tenants["org"].edges
	for _, c := range copies { // in place: the batch's touches copied nothing
		if &edges.slab[c.k][0] != &c.recs[0] {
			t.Fatalf("chunk %d is not the copy the read-lock phase made", c.k)
		}
	}
	for k, shared := range edges.shared {
		if shared {
			t.Fatalf("chunk %d is still shared after the batch touched every edge", k)
		}
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatal("the snapshot saw the batch applied after it was taken")
	}
	if snapped.StateHash() != plain.StateHash() {
		t.Fatal("the states differ")
	}
}

// TestBatchClaimsDomainByDomain checks the order a batch's gates are
// claimed in: every item once, a domain's items one after another in
// command order, domains in the order they first appear, secrets last.
func TestBatchClaimsDomainByDomain(t *testing.T) {
	const dim = 16
	rng := rand.New(rand.NewSource(4))
	cmd := numberedBatch(rng, dim, 0, 12, func(j int) (string, []string) {
		return []string{"b", "a", "c"}[j%3], nil
	})
	cmd.Items[4].Type, cmd.Items[4].Vector = Secret, nil
	cmd.Items[9].Type, cmd.Items[9].Vector = Secret, nil
	b := newBatchGate(dim, newTenant("org", New(dim).vs), cmd.Items)
	want := []int32{0, 3, 6, 1, 7, 10, 2, 5, 8, 11, 4, 9}
	if !slices.Equal(b.order, want) {
		t.Fatalf("claim order %v, want %v", b.order, want)
	}
	b.start()
	g := getGate(dim)
	for b.claim(g) {
	}
	putGate(g)
	b.wg.Wait()
	for i := range cmd.Items {
		if !b.done[i].Load() {
			t.Fatalf("item %d never gated", i)
		}
	}
}

// TestWrittenSnapshotsCopyNothing checks that the edge chunks and domain
// rows a snapshot shares are copied before a change only while a snapshot
// may still read them: after the snapshot is written, or dropped unwritten
// and collected, touching every edge and deleting a row copy nothing,
// while an open snapshot's are copied and it writes the state it was
// taken of. The states end equal to one no snapshot shared.
func TestWrittenSnapshotsCopyNothing(t *testing.T) {
	withArenaRows(t, 16) // the first block is full: it never grows
	const dim = 16
	batch := edgeBatches(dim, 12)
	snapped, plain := New(dim), New(dim)
	index := uint64(0)
	apply := func(cmd interface{ Encode() []byte }) {
		index++
		snapped.Apply(index, cmd.Encode())
		plain.Apply(index, cmd.Encode())
	}
	apply(batch(0, 40))
	tn := snapped.tenants["org"]
	firstRecs := func() []*edgeRec {
		out := make([]*edgeRec, len(tn.edges.slab))
		for k, c := range tn.edges.slab {
			out[k] = &c[0]
		}
		return out
	}
	rows := func() *float32 { return &tn.domains["d"].blocks[0].vecs[0] }
	// copied reports whether the next batch and delete copied chunks and rows.
	next, deleted := 40, 0
	copied := func() (edges, vecs bool) {
		recs, row := firstRecs(), rows()
		apply(batch(next, 20))
		next += 20
		deleted++
		apply(&DeleteAtomCmd{Tenant: "org", ID: mkID(deleted)})
		return !slices.Equal(recs, firstRecs()[:len(recs)]), row != rows()
	}

	write, err := snapped.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := snapped.encodeState()
	if e, v := copied(); !e || !v {
		t.Fatalf("with a snapshot open: edge chunks copied %v, rows copied %v", e, v)
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil || !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("the open snapshot did not write the state it was taken of (%v)", err)
	}

	write, err = snapped.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := write(io.Discard); err != nil {
		t.Fatal(err)
	}
	if e, v := copied(); e || v {
		t.Fatalf("after the snapshot was written: edge chunks copied %v, rows copied %v", e, v)
	}

	if _, err := snapped.Snapshot(); err != nil { // dropped unwritten
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for snapped.vs.open.any() {
		if time.Now().After(deadline) {
			t.Fatal("a dropped snapshot still counts as open")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if e, v := copied(); e || v {
		t.Fatalf("after the snapshot was dropped: edge chunks copied %v, rows copied %v", e, v)
	}
	if snapped.StateHash() != plain.StateHash() {
		t.Fatal("the states differ")
	}
}
