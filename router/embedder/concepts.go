package embedder

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxConcepts is the most concepts extracted from one text.
const MaxConcepts = 16

// MaxConceptChars bounds a concept: a longer token (a URL's path, a hash, a
// base64 run) is no concept. A client may give none longer, and an export's
// extracted ones must import again.
const MaxConceptChars = 200

// Concepts extracts up to max concepts from text: its Tokens without stop
// words and single digits, stemmed, deduplicated, in first-seen order, none
// longer than MaxConceptChars.
// Concepts("The user prefers dark themes in editors", 16) returns
// ["user" "prefer" "dark" "theme" "editor"]. A max of zero or less yields nil.
func Concepts(text string, max int) []string {
	if max <= 0 {
		return nil
	}
	s, all := scanPooled(text) // concepts may alias all
	defer releaseScan(s)
	if len(s.ends) == 0 {
		return nil
	}
	out := make([]string, 0, min(max, len(s.ends)))
	for i := range s.ends {
		tok := s.token(all, i)
		if isNoise(tok) {
			continue
		}
		c := Stem(tok)
		if IsStopWord(c) || contains(out, c) || utf8.RuneCountInString(c) > MaxConceptChars {
			continue
		}
		out = append(out, c)
		if len(out) == max {
			break
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// NormalizeConcept lowercases and trims a client-supplied concept. Client
// concepts are not stemmed; an empty result means the concept is dropped.
func NormalizeConcept(c string) string {
	return strings.ToLower(strings.TrimFunc(c, unicode.IsSpace))
}

// IsStopWord reports whether word (a lowercase token) is an English stop word.
// Contractions are listed without their apostrophe, as Tokens yields them.
func IsStopWord(word string) bool {
	_, ok := stopWords[word]
	return ok
}

// isNoise reports tokens that never become concepts: stop words and single
// digits.
func isNoise(tok string) bool {
	if IsStopWord(tok) {
		return true
	}
	r, size := utf8.DecodeRuneInString(tok)
	return size == len(tok) && unicode.IsDigit(r)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// stopWords is a general English list: articles, pronouns, auxiliaries,
// prepositions, conjunctions, common adverbs and quantifiers. Contractions that
// collide with content words once the apostrophe is gone (she'll/shell,
// we'll/well, I'd/id) are left out.
var stopWords = makeSet(`
a about above after again against all also although always am an and another any are aren arent as at
be because been before being below between both but by
can cannot cant could couldnt
did didnt do does doesnt doing done dont down during
each either else even ever every
few for from further
had hadnt has hasnt have havent having he her here heres hers herself hes him himself his how however
i if im in into is isnt it its itself ive
just
let lets
many may me might more most much must mustnt my myself
neither no nor not now
of off on once only or other others our ours ourselves out over own
quite
rather
same shall she should shouldnt since so some such
than that thats the their theirs them themselves then there therefore theres these they theyd theyll theyre
theyve this those though through thus to too towards
under until up upon us
very
was wasnt we were werent weve what whats when whenever where whether which while who whom whos whose why will
with within without wont would wouldnt
yet you youd youll your youre yours yourself yourselves youve
`)

func makeSet(words string) map[string]struct{} {
	fields := strings.Fields(words)
	set := make(map[string]struct{}, len(fields))
	for _, w := range fields {
		set[w] = struct{}{}
	}
	return set
}
