package pack

import (
	"bufio"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// reference is tiktoken-go's count of text in encoding.
func reference(t testing.TB, encoding string) func(string) int {
	t.Helper()
	tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader())
	enc, err := tiktoken.GetEncoding(encoding)
	if err != nil {
		t.Fatal(err)
	}
	return func(s string) int { return len(enc.EncodeOrdinary(s)) }
}

// alphabets are the classes of characters the split pattern tells apart,
// mixed so that pieces of every kind, long and short, meet.
var alphabets = []string{
	"abcdefghijklmnopqrstuvwxyz",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"etaoinshrdlu",
	"的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生",
	"ひらがなカタカナ한국어ΑλφαБуква",
	"éàüöñçßøå",
	"0123456789",
	"!@#$%^&*()-=+[]{};:,.<>/?'\"`~|\\",
	"     ",
	"\n\r\t ",
	"'s 're 'll 'd 't 'm 've",
	"\u0301\u0308\u200d",
	"🙂👍🏽",
}

// randomText mixes runs drawn from the alphabets; long says how long a run
// may get.
func randomText(r *rand.Rand, n, long int) string {
	var b strings.Builder
	for b.Len() < n {
		a := []rune(alphabets[r.IntN(len(alphabets))])
		run := 1 + r.IntN(long)
		for range run {
			b.WriteRune(a[r.IntN(len(a))])
		}
	}
	return b.String()
}

func TestBPEMatchesTiktoken(t *testing.T) {
	for _, encoding := range Encodings() {
		t.Run(encoding, func(t *testing.T) {
			tok, err := NewTokenizer(encoding)
			if err != nil {
				t.Fatal(err)
			}
			ref := reference(t, encoding)
			check := func(s string) {
				t.Helper()
				if got, want := tok.Count(s), ref(s); got != want {
					t.Fatalf("Count(%.60q…, %d bytes) = %d, tiktoken-go %d", s, len(s), got, want)
				}
			}
			r := rand.New(rand.NewPCG(7, uint64(len(encoding))))
			for i := range 3000 {
				check(randomText(r, 1+r.IntN(200), 1+i%40))
			}
			for range 20 {
				check(randomText(r, 3000, 1500)) // long pieces of every kind
			}
			for _, s := range []string{"", " ", "a", "\n", "<|endoftext|>", strings.Repeat("a", 5000),
				strings.Repeat("ab", 2500), strings.Repeat(" ", 3000), strings.Repeat("的", 3000)} {
				check(s)
			}
			checkCorpus(t, check)
		})
	}
}

// checkCorpus checks the verses of the paraphrase corpus, when the shared
// data is there.
func checkCorpus(t *testing.T, check func(string)) {
	f, err := os.Open("../../../shared/data/paraphrase-pairs.tsv")
	if err != nil {
		t.Log("no shared corpus:", err)
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; sc.Scan() && i < 4000; i++ {
		check(sc.Text())
	}
}

// BenchmarkCount/<kind>/{bpe,tiktoken-go}: one 10,000-character text.
func BenchmarkCount(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	rnd := func(n int, alpha string) string {
		a := []rune(alpha)
		s := make([]rune, n)
		for i := range s {
			s[i] = a[r.IntN(len(a))]
		}
		return string(s)
	}
	texts := []struct{ name, text string }{
		{"english", strings.Repeat("The deploy pipeline uses blue-green releases on Kubernetes. ", 170)},
		{"word", rnd(10000, alphabets[0])},
		{"cjk", rnd(10000, alphabets[3])},
	}
	tok, err := NewTokenizer(EncodingCL100K)
	if err != nil {
		b.Fatal(err)
	}
	ref := reference(b, EncodingCL100K)
	for _, tc := range texts {
		b.Run(tc.name+"/bpe", func(b *testing.B) {
			for b.Loop() {
				tok.Count(tc.text)
			}
		})
		b.Run(tc.name+"/tiktoken-go", func(b *testing.B) {
			for b.Loop() {
				ref(tc.text)
			}
		})
	}
}
