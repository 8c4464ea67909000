package raftfsm

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hebbdb/hebb/bench"
	"github.com/hebbdb/hebb/router/embedder"
)

// Benchmarks of the quantised search and write gate at the state machine
// level (no Raft, no HTTP), on the texts of hebb bench (bench.TextGen,
// seed 1) embedded by the hash embedder:
//
//	go test -run '^$' -bench 'Quantised' -benchtime 200x ./raftfsm/

const benchDim = embedder.HashDim

var (
	benchEmbedder = sync.OnceValue(func() *embedder.Hash { return embedder.NewHash(benchDim) })
	benchText     = bench.NewTextGen(1)
	benchStates   sync.Map // "n/domains" -> *FSM
)

// embedTexts embeds texts [from, to) of a stream.
func embedTexts(b testing.TB, stream uint64, from, to int) ([]string, [][]float32) {
	texts := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		texts = append(texts, benchText.Text(stream, uint64(i)))
	}
	vecs, err := benchEmbedder().Embed(context.Background(), texts)
	if err != nil {
		b.Fatal(err)
	}
	return texts, vecs
}

// benchState returns a state machine whose tenant "org" holds n atoms of
// the populate stream spread evenly over domains domains, inserted directly
// (the write gate of n atoms would dominate the set-up).
func benchState(b *testing.B, n, domains int) *FSM { return builtState(b, n, domains, false) }

// builtState is benchState, with the within-atom edges a write makes when
// edges is set.
func builtState(b testing.TB, n, domains int, edges bool) *FSM {
	key := fmt.Sprintf("%d/%d/%v", n, domains, edges)
	if f, ok := benchStates.Load(key); ok {
		return f.(*FSM)
	}
	f := New(benchDim)
	t := f.tenantFor("org")
	for i := 0; i < n; i += 10_000 {
		texts, vecs := embedTexts(b, bench.StreamPopulate, i, min(i+10_000, n))
		for j, text := range texts {
			k := i + j
			a := f.newAtom(t, &WriteItem{ID: mkID(k + 1), CreatedAt: baseTime + int64(k), Content: text,
				Concepts: embedder.Concepts(text, 16), Domain: benchDomain(k, n, domains)}, 1, nil)
			t.insert(a, vecs[j])
			if edges {
				t.edges.coactivateWithin(a.Concepts, a.CreatedAt)
			}
		}
	}
	benchStates.Store(key, f)
	return f
}

func benchDomain(i, n, domains int) string {
	return fmt.Sprintf("bench-p%03d", i*domains/n)
}

// BenchmarkQuantisedWrite applies 500-item batches (new texts of the write
// stream) to a tenant holding 100k atoms, all in one domain or spread over
// 20, through the coded write gate and, for comparison, the exact scan.
func BenchmarkQuantisedWrite(b *testing.B) {
	const base, batch = 100_000, 500
	for _, domains := range []int{20, 1} {
		for _, coded := range []bool{true, false} {
			b.Run(fmt.Sprintf("atoms=%d/domains=%d/coded=%v", base, domains, coded), func(b *testing.B) {
				if !coded {
					old := codedRows
					codedRows = math.MaxInt
					defer func() { codedRows = old }()
				}
				// A fresh copy of the state for each variant: batches grow it.
				src := benchState(b, base, domains)
				f := restoredState(b, src)
				var cmds [][]byte
				next := 0
				b.ResetTimer()
				for b.Loop() {
					b.StopTimer()
					if next == len(cmds) {
						cmds = append(cmds, writeBatch(b, next, batch, base, domains))
					}
					cmd := cmds[next]
					next++
					b.StartTimer()
					f.Apply(uint64(next), cmd)
				}
				b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "atoms/s")
			})
		}
	}
}

// writeBatch is batch number i: 500 texts of the write stream, spread over
// the domains of the populated state.
func writeBatch(b *testing.B, i, size, base, domains int) []byte {
	texts, vecs := embedTexts(b, bench.StreamWrite, i*size, (i+1)*size)
	cmd := &WriteCmd{Tenant: "org", Batch: true}
	for j, text := range texts {
		k := i*size + j
		cmd.Items = append(cmd.Items, WriteItem{ID: mkID(10_000_000 + k), CreatedAt: baseTime + 1e12 + int64(k),
			Content: text, Concepts: embedder.Concepts(text, 16), Domain: benchDomain(k%base, base, domains),
			Vector: vecs[j]})
	}
	return cmd.Encode()
}

// restoredState copies a state machine through a snapshot.
func restoredState(b *testing.B, f *FSM) *FSM {
	snap, err := f.Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := snap(&buf); err != nil {
		b.Fatal(err)
	}
	c := New(f.dim)
	if err := c.Restore(&buf); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkQuantisedRead searches a tenant of 100k and 1M atoms (10k per
// domain, as hebb bench populates it) across all its domains, top 10, with
// the queries of hebb bench (3 to 8 consecutive words of a stored text),
// through the codes and by exact scans; it reports latency percentiles.
func BenchmarkQuantisedRead(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		for _, coded := range []bool{true, false} {
			b.Run(fmt.Sprintf("atoms=%d/coded=%v", n, coded), func(b *testing.B) {
				f := benchState(b, n, n/10_000)
				if !coded {
					old := codedRows
					codedRows = math.MaxInt
					defer func() { codedRows = old }()
				}
				queries := make([]string, 200)
				for i := range queries {
					queries[i] = benchText.Query(bench.StreamPopulate, uint64(n), uint64(i))
				}
				vecs, err := benchEmbedder().Embed(context.Background(), queries)
				if err != nil {
					b.Fatal(err)
				}
				var lat []time.Duration
				i := 0
				b.ResetTimer()
				for b.Loop() {
					start := time.Now()
					f.Read(&ReadRequest{Tenant: "org", Vector: vecs[i%len(vecs)], TopK: 10, MinRelevance: 0})
					lat = append(lat, time.Since(start))
					i++
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			})
		}
	}
}

// BenchmarkQuantisedMemory reports the heap a tenant of 1M atoms holds per
// atom, and the share of vector plus content bytes (the bar is
// 1.5), with its codes.
func BenchmarkQuantisedMemory(b *testing.B) {
	const n = 1_000_000
	key := fmt.Sprintf("%d/%d/%v", n, n/10_000, false) // builtState's key
	for b.Loop() {
		benchStates.Delete(key)
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapInuse
		f := benchState(b, n, n/10_000)
		runtime.GC()
		runtime.ReadMemStats(&ms)
		content, codes := 0, 0
		for _, a := range f.tenants["org"].atoms {
			content += len(a.Content)
		}
		for _, d := range f.tenants["org"].domains {
			for _, blk := range d.blocks {
				if blk.codes != nil {
					codes += blk.codes.Bytes()
				}
			}
		}
		per := float64(ms.HeapInuse-before) / n
		b.ReportMetric(per, "heap-B/atom")
		b.ReportMetric(float64(codes)/n, "codes-B/atom")
		b.ReportMetric(per/(benchDim*4+float64(content)/n), "ratio")
		runtime.KeepAlive(f)
	}
}

// BenchmarkGate runs the write gate of new texts against one domain of a
// tenant of 100k atoms spread over 20 domains (5k rows) and kept in one (100k
// rows), as a batch's items are gated one by one on a core:
//
//	go test -run '^$' -bench Gate -benchtime 5000x ./raftfsm/
func BenchmarkGate(b *testing.B) {
	for _, domains := range []int{20, 1} {
		f := benchState(b, 100_000, domains)
		d := f.tenants["org"].domains[benchDomain(0, 100_000, domains)]
		_, vecs := embedTexts(b, bench.StreamWrite, 0, 500)
		b.Run(fmt.Sprintf("rows=%d", len(d.rows)), func(b *testing.B) {
			g := getGate(f.dim)
			defer putGate(g)
			i := 0
			for b.Loop() {
				if near, _ := g.nearest(d, vecs[i%len(vecs)], nil, false); near == nil {
					b.Fatal("no nearest row")
				}
				i++
			}
		})
		if domains == 1 {
			continue
		}
		// As a batch over every domain gates them: each gate in another
		// domain than the last, its codes and vectors not in the caches.
		doms := make([]*domainIndex, domains)
		for j := range doms {
			doms[j] = f.tenants["org"].domains[benchDomain(j*100_000/domains, 100_000, domains)]
		}
		b.Run(fmt.Sprintf("rows=%dx%d", len(d.rows), domains), func(b *testing.B) {
			g := getGate(f.dim)
			defer putGate(g)
			i := 0
			for b.Loop() {
				if near, _ := g.nearest(doms[i%domains], vecs[i%len(vecs)], nil, false); near == nil {
					b.Fatal("no nearest row")
				}
				i++
			}
		})
	}
}
