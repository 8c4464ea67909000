package vecmath

import (
	"fmt"
	"math"
	"slices"
)

// MMR selects up to k candidates by maximal marginal relevance. Candidates are
// given in ranked order (index 0 is the best-ranked); relevance[i] is candidate
// i's relevance and vecs[i] its unit vector.
//
// Candidates [0, pinned) are picked first, in order, and count toward k; pick 1
// is always candidate 0, whatever pinned says. Each next pick maximises
//
//	(1-diversity)*relevance[i] - diversity*max_{p picked} Dot(vecs[i], vecs[p])
//
// with ties going to the lower index. A candidate whose score is NaN is never
// picked, so fewer than k may come back. diversity is clamped to [0, 1] (NaN
// counts as 0). If k >= len(relevance) every index is returned in order;
// k <= 0 returns none. The result lists the picked indices in pick order.
//
// MMR keeps a running maximum similarity per candidate, so it costs O(k*n) dot
// products. It panics if len(vecs) != len(relevance).
func MMR(relevance []float64, vecs [][]float32, k int, diversity float64, pinned int) []int {
	out, done := mmrTrivial(relevance, vecs, k)
	if done {
		return out
	}
	n, lambda := len(relevance), clampDiversity(diversity)
	picked := make([]bool, n)
	maxSim := make([]float32, n)
	pick := func(p int) {
		out = append(out, p)
		picked[p] = true
		if len(out) == k {
			return // the last pick's similarities are never read
		}
		for i := range n {
			if !picked[i] {
				sim := Dot(vecs[i], vecs[p])
				if len(out) == 1 {
					maxSim[i] = sim
				} else {
					maxSim[i] = maxSticky(maxSim[i], sim)
				}
			}
		}
	}
	for p := range clampPinned(pinned, k) {
		pick(p)
	}
	for len(out) < k {
		best, bestScore := -1, 0.0
		for i := range n {
			if picked[i] {
				continue
			}
			s := mmrScore(relevance[i], maxSim[i], lambda)
			if s == s && (best < 0 || s > bestScore) {
				best, bestScore = i, s
			}
		}
		if best < 0 {
			break
		}
		pick(best)
	}
	return out
}

// MMRRef is the straightforward reference for MMR: every round recomputes each
// candidate's maximum similarity to all picks, O(k*n*k) dot products. It uses
// Dot, not DotRef, so it differs from MMR only in the algorithm and the two
// must agree exactly.
func MMRRef(relevance []float64, vecs [][]float32, k int, diversity float64, pinned int) []int {
	out, done := mmrTrivial(relevance, vecs, k)
	if done {
		return out
	}
	n, lambda := len(relevance), clampDiversity(diversity)
	for p := range clampPinned(pinned, k) {
		out = append(out, p)
	}
	for len(out) < k {
		best, bestScore := -1, 0.0
		for i := range n {
			if slices.Contains(out, i) {
				continue
			}
			sim := Dot(vecs[i], vecs[out[0]])
			for _, p := range out[1:] {
				sim = maxSticky(sim, Dot(vecs[i], vecs[p]))
			}
			s := mmrScore(relevance[i], sim, lambda)
			if s == s && (best < 0 || s > bestScore) {
				best, bestScore = i, s
			}
		}
		if best < 0 {
			break
		}
		out = append(out, best)
	}
	return out
}

// mmrTrivial checks the arguments and handles the cases that need no scoring.
// When done is false, out is an empty slice with capacity k for the caller.
func mmrTrivial(relevance []float64, vecs [][]float32, k int) (out []int, done bool) {
	n := len(relevance)
	if len(vecs) != n {
		panic(fmt.Sprintf("vecmath: MMR got %d relevances and %d vectors", n, len(vecs)))
	}
	if k <= 0 || n == 0 {
		return []int{}, true
	}
	if k >= n {
		out = make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out, true
	}
	return make([]int, 0, k), false
}

// mmrScore is the marginal relevance of a candidate; MMR and MMRRef share it so
// they round identically.
func mmrScore(relevance float64, maxSim float32, lambda float64) float64 {
	return (1-lambda)*relevance - lambda*float64(maxSim)
}

// maxSticky is max(m, sim) where a NaN on either side wins, so a candidate with
// a NaN similarity to any pick keeps a NaN score and is never picked.
func maxSticky(m, sim float32) float32 {
	if m != m {
		return m
	}
	if sim != sim || sim > m {
		return sim
	}
	return m
}

// clampDiversity maps diversity into [0, 1]; NaN becomes 0.
func clampDiversity(d float64) float64 {
	if !(d > 0) {
		return 0
	}
	return math.Min(d, 1)
}

// clampPinned is the number of leading candidates picked unconditionally: at
// least 1 (candidate 0 always goes first) and at most k.
func clampPinned(pinned, k int) int {
	return max(1, min(pinned, k))
}
