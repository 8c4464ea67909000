package use

import (
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// separator is SentencePiece's word-start marker, U+2581.
const separator = '\u2581'

// reservedPieces are the first vocabulary entries (unknown, <s>, </s> and
// three spares): the tokenizer never matches them, except id 0 for an
// unknown character.
const reservedPieces = 6

// unknownID is the id of a run of characters no piece covers; the model
// embeds it like any other piece.
const unknownID = 0

// piece is one vocabulary entry: its text, its log-probability score and its
// length in UTF-16 code units (what the reference's backtracking steps by).
type piece struct {
	text   string
	score  float64
	utf16n int
}

// Tokenizer splits text into the model's word pieces, id for id as the
// reference TF.js tokenizer of Universal Sentence Encoder lite does: NFKC,
// a separator before the text and in place of each space, then the
// best-scoring segmentation over a trie of pieces (Viterbi), with the
// reference's tie-breaking, and runs of unknown characters merged into one
// id 0. A Tokenizer is read-only after construction and safe for concurrent
// use.
type Tokenizer struct {
	pieces []piece
	// trie: node 0 is the root; edges maps node<<32|rune to the child node.
	edges map[uint64]int32
	// end holds, per node, the vocabulary id of the piece ending there, or -1.
	end []int32
}

// newTokenizer builds the trie. Later duplicates of a piece win, as in the
// reference.
func newTokenizer(pieces []piece) *Tokenizer {
	t := &Tokenizer{pieces: pieces, edges: make(map[uint64]int32, 4*len(pieces)), end: []int32{-1}}
	for id := reservedPieces; id < len(pieces); id++ {
		node := int32(0)
		for _, r := range pieces[id].text {
			key := uint64(node)<<32 | uint64(uint32(r))
			child, ok := t.edges[key]
			if !ok {
				child = int32(len(t.end))
				t.end = append(t.end, -1)
				t.edges[key] = child
			}
			node = child
		}
		if node != 0 {
			t.end[node] = int32(id)
		}
	}
	return t
}

// VocabSize is the number of pieces, reserved ones included.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// Piece returns the text of piece id, or "" when id is out of range.
func (t *Tokenizer) Piece(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	return t.pieces[id].text
}

// Encode returns the piece ids of text, not clipped to the model's window.
func (t *Tokenizer) Encode(text string) []int32 {
	var s tokScratch
	return append([]int32(nil), t.encode(text, &s)...)
}

// tokScratch holds the buffers of one encoding, reused across calls.
type tokScratch struct {
	symbols []rune
	best    []float64
	words   []int32
	out     []int32
}

// prepare is the reference's processInput: NFKC, then a separator before the
// text and in place of every ASCII space.
func prepare(text string, symbols []rune) []rune {
	text = norm.NFKC.String(strings.ToValidUTF8(text, "\uFFFD"))
	symbols = symbols[:0]
	if text == "" {
		return symbols
	}
	symbols = append(symbols, separator)
	for _, r := range text {
		if r == ' ' {
			r = separator
		}
		symbols = append(symbols, r)
	}
	return symbols
}

// encode runs the lattice search; the result aliases s.out.
func (t *Tokenizer) encode(text string, s *tokScratch) []int32 {
	s.symbols = prepare(text, s.symbols)
	n := len(s.symbols)
	s.best = resize(s.best, n+1)
	s.words = resize(s.words, n+1)
	// The reference fills, for each end position, the candidates grouped by
	// ascending start position; a candidate wins when the best score is still
	// zero or it scores at least as well. Walking start positions in order and
	// relaxing forward visits, for each end, the starts in the same ascending
	// order, so ties resolve the same way.
	for start := 0; start < n; start++ {
		t.relax(s, start)
	}
	return t.backtrack(s)
}

// relax offers every piece starting at start to the end positions it
// reaches; a character no piece starts with becomes an unknown of score 0.
func (t *Tokenizer) relax(s *tokScratch, start int) {
	node, found := int32(0), false
	for i := start; i < len(s.symbols); i++ {
		child, ok := t.edges[uint64(node)<<32|uint64(uint32(s.symbols[i]))]
		if !ok {
			break
		}
		node = child
		if id := t.end[node]; id >= 0 {
			found = true
			t.offer(s, i+1, s.best[start]+t.pieces[id].score, id)
		}
	}
	if !found {
		t.offer(s, start+1, s.best[start], unknownID)
	}
}

func (t *Tokenizer) offer(s *tokScratch, end int, score float64, id int32) {
	if s.best[end] == 0 || score >= s.best[end] {
		s.best[end] = score
		s.words[end] = id
	}
}

// backtrack walks back from the end, stepping by each chosen piece's UTF-16
// length as the reference does, and merges runs of unknowns.
func (t *Tokenizer) backtrack(s *tokScratch) []int32 {
	s.out = s.out[:0]
	for i := len(s.words) - 1; i > 0; {
		id := s.words[i]
		s.out = append(s.out, id)
		i -= t.pieces[id].utf16n
	}
	merged := s.out[:0]
	prevUnknown := false
	for _, id := range s.out {
		if !(prevUnknown && id == unknownID) {
			merged = append(merged, id)
		}
		prevUnknown = id == unknownID
	}
	for i, j := 0, len(merged)-1; i < j; i, j = i+1, j-1 {
		merged[i], merged[j] = merged[j], merged[i]
	}
	s.out = merged
	return merged
}

// resize returns buf with length n, zeroed.
func resize[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}

// utf16Len is the length of s in UTF-16 code units, as JavaScript counts.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
