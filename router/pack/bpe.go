package pack

import (
	"fmt"
	"sync"

	"github.com/dlclark/regexp2"
)

// bpe counts the tokens of a text as tiktoken does: the text is split by
// the encoding's pattern, a piece that is a token counts one, and any other
// piece is merged byte pair by byte pair, the pair whose bytes have the
// lowest rank first (the leftmost of equal ones), until no adjacent pair
// has a rank; what is left are its tokens.
//
// tiktoken-go merges by scanning every pair for each merge, so a piece of n
// bytes costs O(n²): one word of 10,000 letters took 40 ms, a CJK text of
// 10,000 characters (a single piece of 30 kB) 330 ms, and a render of a
// couple of hundred such atoms tens of seconds. Here a heap of the pairs
// makes it O(n log n), with the same merges in the same order, so the
// counts are tiktoken's (TestBPEMatchesTiktoken).
type bpe struct {
	ranks map[string]int
	split *regexp2.Regexp
	pool  sync.Pool // of *merger
}

// The split patterns of OpenAI's encodings (the same as tiktoken's and
// tiktoken-go's).
var splitPatterns = map[string]string{
	EncodingCL100K: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	EncodingO200K: `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
}

func newBPE(encoding string, ranks map[string]int) (*bpe, error) {
	re, err := regexp2.Compile(splitPatterns[encoding], regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("cannot compile the split pattern of %s: %w", encoding, err)
	}
	return &bpe{ranks: ranks, split: re}, nil
}

// count is the number of tokens of text.
func (b *bpe) count(text string) int {
	m, err := b.split.FindStringMatch(text)
	if err != nil {
		return len(text) // only a match timeout fails, and none is set; a byte is at most a token
	}
	mg, _ := b.pool.Get().(*merger)
	if mg == nil {
		mg = &merger{}
	}
	defer b.release(mg)
	n := 0
	for m != nil {
		piece := m.String()
		if _, ok := b.ranks[piece]; ok {
			n++
		} else {
			n += mg.count(piece, b.ranks)
		}
		if m, err = b.split.FindNextMatch(m); err != nil {
			return n + len(text) // as above
		}
	}
	return n
}

// maxPooledPiece bounds the scratch kept for reuse: one huge piece does not
// pin megabytes in the pool.
const maxPooledPiece = 1 << 16

func (b *bpe) release(mg *merger) {
	if cap(mg.next) <= maxPooledPiece {
		b.pool.Put(mg)
	}
}

// merger holds the scratch of merging one piece. Parts are named by the
// offset of their first byte, which merging never changes.
type merger struct {
	next []int32  // offset of the part after each part (len(piece) after the last)
	prev []int32  // offset of the part before each part (-1 before the first)
	rank []int32  // rank of each part's pair with the next part; noRank if none
	heap []uint64 // rank<<32 | offset of the pairs to merge, lowest first
}

const noRank = -1

// count merges piece and returns how many parts are left.
func (m *merger) count(piece string, ranks map[string]int) int {
	n := len(piece)
	if n <= 1 {
		return n
	}
	m.next, m.prev, m.rank = resize(m.next, n), resize(m.prev, n), resize(m.rank, n)
	m.heap = m.heap[:0]
	for i := range n {
		m.next[i], m.prev[i] = int32(i+1), int32(i-1)
	}
	for i := range n - 1 {
		m.setRank(piece, ranks, int32(i))
	}
	m.rank[n-1] = noRank
	parts := n
	for len(m.heap) > 0 {
		top := m.pop()
		i, r := int32(top&0xffffffff), int32(top>>32)
		if m.rank[i] != r {
			continue // stale: the part's pair changed since (or it was merged away)
		}
		j := m.next[i]
		k := m.next[j]
		m.next[i] = k
		if int(k) < n {
			m.prev[k] = i
		}
		m.rank[j] = noRank
		parts--
		m.setRank(piece, ranks, i)
		if p := m.prev[i]; p >= 0 {
			m.setRank(piece, ranks, p)
		}
	}
	return parts
}

// setRank records, and queues, the rank of part i's pair with the next
// part (noRank when there is none or its bytes are not a token). A pair's
// bytes only grow as parts merge, so a queued entry whose rank differs
// from the part's is stale.
func (m *merger) setRank(piece string, ranks map[string]int, i int32) {
	m.rank[i] = noRank
	j := m.next[i]
	if int(j) >= len(piece) {
		return
	}
	end := m.next[j]
	r, ok := ranks[piece[i:end]]
	if !ok {
		return
	}
	m.rank[i] = int32(r)
	m.push(uint64(r)<<32 | uint64(i))
}

func (m *merger) push(x uint64) {
	h := append(m.heap, x)
	for c := len(h) - 1; c > 0; {
		p := (c - 1) / 2
		if h[p] <= h[c] {
			break
		}
		h[p], h[c] = h[c], h[p]
		c = p
	}
	m.heap = h
}

func (m *merger) pop() uint64 {
	h := m.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for p := 0; ; {
		c := 2*p + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if h[p] <= h[c] {
			break
		}
		h[p], h[c] = h[c], h[p]
		p = c
	}
	m.heap = h
	return top
}

func resize(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}
