package embedder

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Tokens splits text into lowercase, Unicode-aware word tokens. A token is a
// run of letters and digits (combining marks after a letter stay in the word);
// an apostrophe between two word characters is dropped ("don't" -> "dont");
// hyphens, punctuation, symbols and spaces split. Han ideographs and Hiragana,
// written without spaces, become one token per character.
func Tokens(text string) []string {
	s, all := scanPooled(text)
	defer releaseScan(s)
	if len(s.ends) == 0 {
		return nil
	}
	out := make([]string, len(s.ends))
	for i := range s.ends {
		out[i] = s.token(all, i)
	}
	return out
}

// tokenScan holds the tokens of one text: their lowercase bytes concatenated
// in buf, and the end offset of each token in ends. It is reused through a
// pool by the hash embedder to keep Embed allocation-light.
type tokenScan struct {
	buf  []byte
	ends []int
}

// scans are token buffers for Tokens and Concepts, which every write and
// read calls: kept from one call to the next instead of grown from nothing.
var scans = sync.Pool{New: func() any { return new(tokenScan) }}

// maxPooledScan bounds the buffer a pooled scan keeps, so one huge text
// does not pin it.
const maxPooledScan = 64 << 10

// scanPooled tokenises text with a pooled scan and returns it with its
// tokens' bytes as one string (their only allocation; tokens alias it).
// The caller hands the scan back with releaseScan.
func scanPooled(text string) (*tokenScan, string) {
	s := scans.Get().(*tokenScan)
	s.scan(text)
	return s, string(s.buf)
}

func releaseScan(s *tokenScan) {
	if cap(s.buf) <= maxPooledScan && cap(s.ends) <= maxPooledScan/8 {
		scans.Put(s)
	}
}

// token returns token i as a substring of all, which must be string(s.buf).
func (s *tokenScan) token(all string, i int) string {
	start := 0
	if i > 0 {
		start = s.ends[i-1]
	}
	return all[start:s.ends[i]]
}

// scan resets s and tokenises text into it. ASCII bytes take a table
// (asciiWord) instead of the Unicode class and case lookups, which gave the
// same answers for them at several times the cost.
func (s *tokenScan) scan(text string) {
	s.buf = s.buf[:0]
	s.ends = s.ends[:0]
	inWord := false
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			switch {
			case asciiWord[c] != 0:
				s.buf = append(s.buf, asciiWord[c])
				inWord = true
			case inWord && c == '\'' && nextIsWordRune(text[i+1:]):
				// Dropped: the word goes on after the apostrophe.
			default:
				s.closeWord(inWord)
				inWord = false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isSingleRuneWord(r):
			s.closeWord(inWord)
			s.buf = utf8.AppendRune(s.buf, unicode.ToLower(r))
			s.ends = append(s.ends, len(s.buf))
			inWord = false
		case unicode.IsLetter(r) || unicode.IsDigit(r) || (inWord && unicode.IsMark(r)):
			s.buf = utf8.AppendRune(s.buf, unicode.ToLower(r))
			inWord = true
		case inWord && isApostrophe(r) && nextIsWordRune(text[i+size:]):
			// Dropped: the word goes on after the apostrophe.
		default:
			s.closeWord(inWord)
			inWord = false
		}
		i += size
	}
	s.closeWord(inWord)
}

// asciiWord maps an ASCII letter or digit to its lowercase byte, and every
// other ASCII byte to 0.
var asciiWord = func() (t [utf8.RuneSelf]byte) {
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c)
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = byte(c), byte(c)
	}
	return t
}()

func (s *tokenScan) closeWord(inWord bool) {
	if inWord {
		s.ends = append(s.ends, len(s.buf))
	}
}

func isApostrophe(r rune) bool {
	return r == '\'' || r == '\u2019' || r == '\u02bc'
}

// isSingleRuneWord reports scripts written without spaces between words, where
// each character stands as a token of its own.
func isSingleRuneWord(r rune) bool {
	return r >= 0x3040 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r))
}

func nextIsWordRune(rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !isSingleRuneWord(r)
}
