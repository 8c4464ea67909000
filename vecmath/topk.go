package vecmath

import (
	"cmp"
	"slices"
)

// TopK returns the indices of the k largest scores, ordered by score
// descending, ties broken by the lower index. NaN scores are never selected;
// k greater than the number of non-NaN scores returns them all, k <= 0 returns
// none. The result is appended to dst[:0], so a dst with capacity k makes TopK
// allocation-free.
//
// TopK keeps the best k seen so far in a binary heap whose root is the worst of
// them, so it runs in O(n log k) and, once the heap is full, most scores cost
// one comparison against the root.
func TopK(scores []float32, k int, dst []int) []int {
	h := dst[:0]
	if k <= 0 {
		return h
	}
	i := 0
	for ; i < len(scores) && len(h) < k; i++ {
		if s := scores[i]; s == s { // not NaN
			h = append(h, i)
			heapUp(h, scores, len(h)-1)
		}
	}
	if len(h) == k {
		floor := scores[h[0]] // the worst score kept
		for ; i < len(scores); i++ {
			// i is above every index in the heap, so an equal score loses the
			// tie; a NaN fails the comparison.
			if s := scores[i]; s > floor {
				h[0] = i
				heapDown(h, scores, 0, k)
				floor = scores[h[0]]
			}
		}
	}
	// Heap sort: moving the worst to the back each time leaves the best first.
	for end := len(h) - 1; end > 0; end-- {
		h[0], h[end] = h[end], h[0]
		heapDown(h, scores, 0, end)
	}
	return h
}

// worse reports whether index a ranks below index b: a lower score, or the
// same score and a higher index.
func worse(scores []float32, a, b int) bool {
	sa, sb := scores[a], scores[b]
	return sa < sb || (sa == sb && a > b)
}

// heapUp restores the heap (worst at the root) after h[i] was appended.
func heapUp(h []int, scores []float32, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !worse(scores, h[i], h[parent]) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

// heapDown restores the heap h[:n] after h[i] was replaced.
func heapDown(h []int, scores []float32, i, n int) {
	for {
		child := 2*i + 1
		if child >= n {
			return
		}
		if r := child + 1; r < n && worse(scores, h[r], h[child]) {
			child = r
		}
		if !worse(scores, h[child], h[i]) {
			return
		}
		h[i], h[child] = h[child], h[i]
		i = child
	}
}

// TopKRef is the sort-based reference for TopK: it sorts every non-NaN index
// and keeps the first k.
func TopKRef(scores []float32, k int) []int {
	if k <= 0 {
		return []int{}
	}
	idx := make([]int, 0, len(scores))
	for i, s := range scores {
		if s == s {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return cmp.Compare(a, b)
	})
	if k < len(idx) {
		idx = idx[:k]
	}
	return idx
}
