package raftfsm

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkIdempotencyKeyed is the table's part of a keyed write (prune,
// look up, remember) with 50k live keys; scan is the table as it was:
//
//	go test -run '^$' -bench IdempotencyKeyed ./raftfsm/
func BenchmarkIdempotencyKeyed(b *testing.B) {
	const live = 50_000
	res := &WriteResults{Results: []WriteResult{{Stored: true, Reason: reasonStoredText, Superseded: []ID{}}}}
	cmd := func(i int) *WriteCmd {
		return &WriteCmd{Idem: &Idempotency{Key: fmt.Sprintf("key-%09d", i), ExpiresAt: int64(i) + live}}
	}
	b.Run("heap", func(b *testing.B) {
		t := newTenant("t", nil)
		i := 0
		for b.Loop() {
			c := cmd(i)
			t.replayOrConflict(c, int64(i))
			t.remember(c, res)
			i++
		}
	})
	b.Run("scan", func(b *testing.B) {
		s := &refIdem{recs: make(map[string]*refIdemRecord)}
		for i := range live {
			s.remember(cmd(i-live), res)
		}
		i := 0
		for b.Loop() {
			c := cmd(i)
			s.replayOrConflict(c, int64(i))
			s.remember(c, res)
			i++
		}
	})
}

// BenchmarkIdempotencyRecordBytes reports the heap a record of a batch of
// 500 duplicates holds, packed and (full) as it was.
func BenchmarkIdempotencyRecordBytes(b *testing.B) {
	results := func() []WriteResult {
		out := make([]WriteResult, 500)
		for i := range out {
			near := ID{byte(i % 3), 1, 2, 3}
			out[i] = duplicateResult(&Atom{ID: near})
		}
		return out
	}
	const records = 200
	heap := func(add func(i int)) float64 {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		for i := range records {
			add(i)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		return float64(m1.HeapAlloc-m0.HeapAlloc) / records
	}
	b.Run("packed", func(b *testing.B) {
		for b.Loop() {
			t := newTenant("t", nil)
			b.ReportMetric(heap(func(i int) {
				t.remember(&WriteCmd{Idem: &Idempotency{Key: fmt.Sprint(i)}}, &WriteResults{Results: results()})
			}), "B/record")
			runtime.KeepAlive(t)
		}
	})
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			s := &refIdem{recs: make(map[string]*refIdemRecord)}
			b.ReportMetric(heap(func(i int) {
				s.remember(&WriteCmd{Idem: &Idempotency{Key: fmt.Sprint(i)}}, &WriteResults{Results: results()})
			}), "B/record")
			runtime.KeepAlive(s)
		}
	})
}

// BenchmarkIdempotencyPack is what remember adds to a batch of 500
// duplicates under the write lock (packing its results), and what a
// replay of it costs (unpacking):
//
//	go test -run '^$' -bench IdempotencyPack ./raftfsm/
func BenchmarkIdempotencyPack(b *testing.B) {
	out := make([]WriteResult, 500)
	for i := range out {
		out[i] = duplicateResult(&Atom{ID: ID{byte(i % 3), 1, 2, 3}})
	}
	var p []byte
	b.Run("pack", func(b *testing.B) {
		for b.Loop() {
			p = packResults(out)
		}
	})
	b.Run("unpack", func(b *testing.B) {
		for b.Loop() {
			unpackResults(p)
		}
	})
}
