package raftfsm

import (
	"fmt"
	"math/rand"
	"testing"
)

// benchFeedbackState is a tenant of n atoms each carrying the same 256
// concepts, and a feedback call on all of them reinforcing those concepts
// with 255 others (65,280 pairs, just under maxFeedbackPairs).
func benchFeedbackState(b *testing.B, n int) (*FSM, *FeedbackCmd) {
	f := New(testDim)
	rng := rand.New(rand.NewSource(1))
	S := names("s", 256)
	cmd := &FeedbackCmd{Tenant: "org", Outcome: 1, Concepts: S, QueryConcepts: names("q", 255), At: baseTime}
	for i := range n {
		it := WriteItem{ID: mkID(i + 1), CreatedAt: baseTime + int64(i), Content: fmt.Sprint("atom ", i),
			Domain: "d", Concepts: S, Vector: randomUnit(rng, testDim)}
		f.Apply(uint64(i+1), (&WriteCmd{Tenant: "org", Items: []WriteItem{it}}).Encode())
		cmd.IDs = append(cmd.IDs, it.ID)
	}
	return f, cmd
}

// BenchmarkFeedbackPairs is a feedback call of 1, 50 and 500 atoms of the
// same 256 concepts against 255 query concepts, through applyFeedback and
// through the reference it replaced (each later atom re-checked every pair
// stepped before it). The edges exist after the first call.
func BenchmarkFeedbackPairs(b *testing.B) {
	for _, n := range []int{1, 50, 500} {
		f, cmd := benchFeedbackState(b, n)
		b.Run(fmt.Sprint("atoms=", n), func(b *testing.B) {
			for range b.N {
				f.applyFeedback(cmd)
			}
		})
		b.Run(fmt.Sprint("ref/atoms=", n), func(b *testing.B) {
			for range b.N {
				f.applyFeedbackRef(cmd)
			}
		})
	}
}
