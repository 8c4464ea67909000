package pack_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hebbdb/hebb/router/pack"
)

func tokenizer(t testing.TB, enc string) *pack.Tokenizer {
	t.Helper()
	tok, err := pack.NewTokenizer(enc)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// render is the text a result's sections stand for: headings and whole
// lines, nothing else.
func render(sections []pack.SectionResult) string {
	var b strings.Builder
	for _, s := range sections {
		b.WriteString("## " + s.Section.Title() + "\n")
		for _, it := range s.Items {
			text := strings.TrimSpace(strings.ReplaceAll(it.Text, "\r\n", "\n"))
			b.WriteString("- " + strings.ReplaceAll(text, "\n", "\n  ") + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// checkResult asserts the invariants of Pack on one result.
func checkResult(t *testing.T, cands []pack.Candidate, budget int, tok pack.Counter, res pack.Result) {
	t.Helper()
	if n := tok.Count(res.Text); n != res.Tokens || n > budget {
		t.Fatalf("text has %d tokens (reported %d), budget %d", n, res.Tokens, budget)
	}
	if want := render(res.Sections); res.Text != want {
		t.Fatalf("text is not made of whole memories:\n got %q\nwant %q", res.Text, want)
	}
	seen := map[string]int{}
	for _, s := range res.Sections {
		for _, it := range s.Items {
			seen[it.ID]++
			if it.Section != s.Section {
				t.Errorf("item %s of section %s rendered under %s", it.ID, it.Section, s.Section)
			}
		}
	}
	for _, o := range res.Omitted {
		seen[o.ID]++
		if o.Reason == "" {
			t.Errorf("omission of %s has no reason", o.ID)
		}
	}
	for _, c := range cands {
		if seen[c.ID] != 1 {
			t.Fatalf("candidate %s reported %d times (included + omitted)", c.ID, seen[c.ID])
		}
	}
}

var vocabulary = strings.Fields(`the deploy pipeline runs every Friday user prefers dark theme we decided
	to use Postgres lesson learned never force push main café naïve 東京 データ 🚀 ✅ don't it's 3.14 2024-05-03
	<|endoftext|> func() { return nil } SELECT * FROM atoms; https://example.com/a?b=c  tabs\tand
	spaces — “quotes” 'single' ¿qué? Здравствуйте مرحبا ok!!! ... ### ** _ ~`)

func randomText(rng *rand.Rand) string {
	n := 1 + rng.IntN(60)
	if rng.IntN(10) == 0 {
		n += rng.IntN(300) // a few long memories
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
		switch rng.IntN(12) {
		case 0:
			b.WriteString("\n")
		case 1:
			b.WriteString("")
		default:
			b.WriteString(" ")
		}
	}
	if rng.IntN(20) == 0 {
		return "  \n "
	}
	return b.String()
}

func randomCandidates(rng *rand.Rand) []pack.Candidate {
	sections := pack.SectionOrder()
	n := rng.IntN(30)
	out := make([]pack.Candidate, n)
	for i := range out {
		out[i] = pack.Candidate{ID: fmt.Sprintf("m%d", i), Text: randomText(rng),
			Relevance: rng.Float64(), Section: sections[rng.IntN(len(sections))], Pinned: rng.IntN(8) == 0}
	}
	return out
}

// TestPackProperty: for random memories and budgets from 1 to 8,000 tokens
// the text never exceeds the budget under the encoding, and memories are
// rendered whole or reported omitted.
func TestPackProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, enc := range pack.Encodings() {
		tok := tokenizer(t, enc)
		for trial := 0; trial < 40; trial++ {
			cands := randomCandidates(rng)
			budget := 1 + rng.IntN(8000)
			if trial%3 == 0 {
				budget = 1 + rng.IntN(120) // tight budgets exercise the cut
			}
			t.Run(fmt.Sprintf("%s/%d/budget=%d", enc, trial, budget), func(t *testing.T) {
				checkResult(t, cands, budget, tok, pack.Pack(cands, budget, tok))
			})
		}
	}
}

func TestPackDeterministic(t *testing.T) {
	tok := tokenizer(t, pack.DefaultEncoding)
	rng := rand.New(rand.NewPCG(5, 5))
	cands := randomCandidates(rng)
	a := pack.Pack(cands, 300, tok)
	b := pack.Pack(cands, 300, tok)
	if a.Text != b.Text || len(a.Omitted) != len(b.Omitted) {
		t.Fatal("two packs of the same input differ")
	}
}

func TestPackCases(t *testing.T) {
	tok := tokenizer(t, pack.DefaultEncoding)
	long := strings.Repeat("a very long memory about deployments ", 40)
	cases := []struct {
		name      string
		cands     []pack.Candidate
		budget    int
		want      string
		omitted   map[string]string // id → reason
		wantTotal int               // -1: don't check
	}{
		{name: "empty input", budget: 10, want: "", omitted: map[string]string{}},
		{name: "budget of one token", budget: 1,
			cands:   []pack.Candidate{{ID: "a", Text: "short", Relevance: 0.9, Section: pack.Facts}},
			want:    "",
			omitted: map[string]string{"a": pack.ReasonExceedsBudget}},
		{name: "sections in order, by relevance", budget: 200,
			cands: []pack.Candidate{
				{ID: "f", Text: "port 8080", Relevance: 0.5, Section: pack.Facts},
				{ID: "w", Text: "no Friday deploys", Relevance: 0.4, Section: pack.Warnings},
				{ID: "p1", Text: "dark theme", Relevance: 0.3, Section: pack.Preferences},
				{ID: "p2", Text: "tabs", Relevance: 0.6, Section: pack.Preferences},
			},
			want:    "## Warnings\n- no Friday deploys\n## Preferences\n- tabs\n- dark theme\n## Facts\n- port 8080",
			omitted: map[string]string{}},
		{name: "multi-line memory stays whole", budget: 50,
			cands: []pack.Candidate{{ID: "m", Text: "line one\r\nline two\n", Relevance: 0.5, Section: pack.Facts}},
			want:  "## Facts\n- line one\n  line two", omitted: map[string]string{}},
		{name: "whitespace-only memory", budget: 50,
			cands:   []pack.Candidate{{ID: "e", Text: " \n\t", Relevance: 0.9, Section: pack.Facts}},
			want:    "",
			omitted: map[string]string{"e": pack.ReasonEmpty}},
		{name: "two short beat one long", budget: 40,
			cands: []pack.Candidate{
				{ID: "long", Text: long, Relevance: 0.9, Section: pack.Facts},
				{ID: "s1", Text: "deploys run on Fridays", Relevance: 0.6, Section: pack.Facts},
				{ID: "s2", Text: "deploys need a canary", Relevance: 0.5, Section: pack.Facts},
			},
			want:    "## Facts\n- deploys run on Fridays\n- deploys need a canary",
			omitted: map[string]string{"long": pack.ReasonExceedsBudget}},
		{name: "pinned warning goes first", budget: 12,
			cands: []pack.Candidate{
				{ID: "f", Text: "facts worth a lot of relevance", Relevance: 0.99, Section: pack.Facts},
				{ID: "w", Text: "never skip the canary", Relevance: 0.2, Section: pack.Warnings, Pinned: true},
			},
			want:    "## Warnings\n- never skip the canary",
			omitted: map[string]string{"f": pack.ReasonBudget}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := pack.Pack(tc.cands, tc.budget, tok)
			checkResult(t, tc.cands, tc.budget, tok, res)
			if res.Text != tc.want {
				t.Errorf("text %q, want %q", res.Text, tc.want)
			}
			got := map[string]string{}
			for _, o := range res.Omitted {
				got[o.ID] = o.Reason
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.omitted) {
				t.Errorf("omitted %v, want %v", got, tc.omitted)
			}
		})
	}
}

func FuzzPack(f *testing.F) {
	f.Add("The user prefers tabs\nWe decided on Go\x00never deploy on friday", uint16(12))
	f.Add("", uint16(1))
	f.Add("<|endoftext|> 東京 🚀\r\n\r\n   ", uint16(3))
	tok, err := pack.NewTokenizer(pack.DefaultEncoding)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, b uint16) {
		budget := 1 + int(b)%8000
		var cands []pack.Candidate
		for i, part := range strings.Split(text, "\x00") {
			cands = append(cands, pack.Candidate{ID: fmt.Sprint(i), Text: part, Relevance: float64(len(part)%7) / 7,
				Section: pack.SectionOrder()[i%len(pack.SectionOrder())], Pinned: i%3 == 0})
		}
		checkResult(t, cands, budget, tok, pack.Pack(cands, budget, tok))
	})
}
