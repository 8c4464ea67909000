package vecmath

import (
	"cmp"
	"math"
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
// one comparison against the root. The heap holds one integer per entry,
// the score's order and the index's (rankKey), so that its comparisons read
// no score: with the heap holding indices, reading each entry's score cost
// twice as long.
func TopK(scores []float32, k int, dst []int) []int {
	h := dst[:0]
	if k <= 0 {
		return h
	}
	if len(scores) > maxRankIndex {
		panic("vecmath: TopK of more than 2^31-1 scores")
	}
	i := 0
	for ; i < len(scores) && len(h) < k; i++ {
		if s := scores[i]; s == s { // not NaN
			h = append(h, rankKey(s, i))
			keyUp(h, len(h)-1)
		}
	}
	if len(h) == k {
		floor := scores[keyIndex(h[0])] // the worst score kept
		for ; i < len(scores); i++ {
			// i is above every index in the heap, so an equal score loses the
			// tie; a NaN fails the comparison.
			if s := scores[i]; s > floor {
				h[0] = rankKey(s, i)
				keyDown(h, 0, k)
				floor = scores[keyIndex(h[0])]
			}
		}
	}
	// Heap sort: moving the worst to the back each time leaves the best first.
	for end := len(h) - 1; end > 0; end-- {
		h[0], h[end] = h[end], h[0]
		keyDown(h, 0, end)
	}
	for j, key := range h {
		h[j] = keyIndex(key)
	}
	return h
}

// maxRankIndex is the largest index a rank key holds.
const maxRankIndex = 1<<31 - 1

// rankKey orders (score, index) pairs as TopK ranks them: a larger key is a
// higher score, or the same score and a lower index. The score's bits are
// mapped to an unsigned order (negatives flipped whole, positives with the
// sign set; -0 as +0, which compare equal) in the high 32 bits below the
// sign, the index's complement in the low 31. s must not be NaN.
func rankKey(s float32, i int) int {
	if s == 0 {
		s = 0 // -0 ranks as +0
	}
	b := math.Float32bits(s)
	if b>>31 != 0 {
		b = ^b
	} else {
		b |= 1 << 31
	}
	return int(b)<<31 | (maxRankIndex - i)
}

// keyIndex is the index of a rank key.
func keyIndex(key int) int { return maxRankIndex - key&maxRankIndex }

// keyUp restores the heap of rank keys (worst at the root) after h[i] was
// appended.
func keyUp(h []int, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if h[i] >= h[parent] {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

// keyDown restores the heap of rank keys h[:n] after h[i] was replaced.
func keyDown(h []int, i, n int) {
	for {
		child := 2*i + 1
		if child >= n {
			return
		}
		if r := child + 1; r < n && h[r] < h[child] {
			child = r
		}
		if h[child] >= h[i] {
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
