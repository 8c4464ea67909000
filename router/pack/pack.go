package pack

import (
	"sort"
	"strings"
)

// Candidate is one memory offered to Pack.
type Candidate struct {
	ID        string
	Text      string // what to render, privacy already applied
	Relevance float64
	Section   Section
	// Pinned candidates are packed before the knapsack runs, by relevance,
	// as long as they fit (e.g. relevant warnings under a high risk level).
	Pinned bool
}

// Item is a rendered candidate.
type Item struct {
	Candidate
	Tokens int // tokens of its rendered line
}

// SectionResult is one section of the rendered text.
type SectionResult struct {
	Section Section
	Tokens  int // its heading and lines, each counted alone
	Items   []Item
}

// Omission is a candidate left out, and why.
type Omission struct {
	Candidate
	Tokens int // tokens its line would have taken (0 when not counted)
	Reason string
}

// Reasons of omissions.
const (
	// ReasonBudget: it fits the budget alone, but the packing chose
	// memories worth more relevance for those tokens.
	ReasonBudget = "budget"
	// ReasonExceedsBudget: its line (with its heading) alone is larger than
	// the budget.
	ReasonExceedsBudget = "exceeds_budget"
	// ReasonEmpty: nothing to render once whitespace is trimmed.
	ReasonEmpty = "empty"
	// ReasonPrivacy: left out by the privacy mode (set by the caller).
	ReasonPrivacy = "privacy"
	// ReasonRelevanceFloor: below the relevance floor of the risk level
	// (set by the caller).
	ReasonRelevanceFloor = "below_relevance_floor"
)

// Result is what Pack rendered.
type Result struct {
	Text     string
	Tokens   int // tokens of Text, counted whole; never above the budget
	Sections []SectionResult
	Omitted  []Omission // by relevance, highest first
}

// piece is a candidate with its rendered line.
type piece struct {
	Candidate
	order int // position in the input, the tie-breaker
	line  string
	cost  int
}

type packer struct {
	budget  int
	counter Counter
	pieces  []*piece
	heads   map[Section]string
	headTok map[Section]int
	chosen  map[*piece]bool
	empty   []Omission
}

// Pack chooses candidates to render within budget tokens (under counter)
// and renders them, grouped in sections (SectionOrder, each with a "## "
// heading), one "- " line per memory, by relevance within a section.
// Pinned candidates go first; the rest is a 0/1 knapsack maximising total
// relevance, so several short relevant memories beat one long one of
// slightly higher relevance; leftover room is filled by relevance per
// token. The text is then counted whole and memories are dropped (lowest
// relevance per token first) until it fits.
func Pack(cands []Candidate, budget int, counter Counter) Result {
	p := &packer{budget: budget, counter: counter, heads: map[Section]string{},
		headTok: map[Section]int{}, chosen: map[*piece]bool{}}
	for i, c := range cands {
		text := strings.TrimSpace(strings.ReplaceAll(c.Text, "\r\n", "\n"))
		if text == "" {
			p.empty = append(p.empty, Omission{Candidate: c, Reason: ReasonEmpty})
			continue
		}
		line := "- " + strings.ReplaceAll(text, "\n", "\n  ") + "\n"
		p.pieces = append(p.pieces, &piece{Candidate: c, order: i, line: line, cost: max(1, counter.Count(line))})
		if _, ok := p.heads[c.Section]; !ok {
			h := "## " + c.Section.Title() + "\n"
			p.heads[c.Section], p.headTok[c.Section] = h, max(1, counter.Count(h))
		}
	}
	sort.SliceStable(p.pieces, func(i, j int) bool { return p.pieces[i].Relevance > p.pieces[j].Relevance })
	p.pinned()
	p.knapsack()
	p.fill()
	return p.finish()
}

// room is the budget left by the chosen pieces and their headings.
func (p *packer) room() int {
	used := 0
	open := map[Section]bool{}
	for q := range p.chosen {
		used += q.cost
		if !open[q.Section] {
			open[q.Section] = true
			used += p.headTok[q.Section]
		}
	}
	return p.budget - used
}

func (p *packer) open(s Section) bool {
	for q := range p.chosen {
		if q.Section == s {
			return true
		}
	}
	return false
}

// extra is what adding q costs: its line and, for a new section, the heading.
func (p *packer) extra(q *piece) int {
	if p.open(q.Section) {
		return q.cost
	}
	return q.cost + p.headTok[q.Section]
}

func (p *packer) pinned() {
	for _, q := range p.pieces {
		if q.Pinned && p.extra(q) <= p.room() {
			p.chosen[q] = true
		}
	}
}

// knapsack chooses among the unpinned pieces: for every set of sections not
// yet open, their headings are paid up front and the knapsack runs over
// the pieces of the open sections and that set; the best set wins.
func (p *packer) knapsack() {
	var closed []Section
	for _, s := range SectionOrder() {
		if _, ok := p.heads[s]; ok && !p.open(s) {
			closed = append(closed, s)
		}
	}
	room := p.room()
	opened := map[Section]bool{}
	for q := range p.chosen {
		opened[q.Section] = true
	}
	var best []*piece
	bestValue := -1.0
	for mask := 0; mask < 1<<len(closed); mask++ {
		allowed := map[Section]bool{}
		capacity := room
		for i, s := range closed {
			if mask&(1<<i) != 0 {
				allowed[s] = true
				capacity -= p.headTok[s]
			}
		}
		if capacity < 0 {
			continue
		}
		var items []*piece
		var costs []int
		var values []float64
		for _, q := range p.pieces {
			if !q.Pinned && !p.chosen[q] && (allowed[q.Section] || opened[q.Section]) && q.cost <= capacity {
				items = append(items, q)
				costs = append(costs, q.cost)
				values = append(values, value(q))
			}
		}
		picked := knapsack(costs, values, capacity)
		v := 0.0
		for _, i := range picked {
			v += values[i]
		}
		if v > bestValue {
			bestValue, best = v, best[:0]
			for _, i := range picked {
				best = append(best, items[i])
			}
		}
	}
	for _, q := range best {
		p.chosen[q] = true
	}
}

func value(q *piece) float64 { return max(q.Relevance, 0) + 1e-9 }

// fill adds what still fits, best relevance per token first.
func (p *packer) fill() {
	rest := make([]*piece, 0, len(p.pieces))
	for _, q := range p.pieces {
		if !p.chosen[q] {
			rest = append(rest, q)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return density(rest[i]) > density(rest[j]) })
	for _, q := range rest {
		if p.extra(q) <= p.room() {
			p.chosen[q] = true
		}
	}
}

func density(q *piece) float64 { return value(q) / float64(q.cost) }

// finish renders the chosen pieces and drops the least dense until the
// whole text fits.
func (p *packer) finish() Result {
	for {
		res := p.render()
		res.Tokens = p.counter.Count(res.Text)
		if res.Tokens <= p.budget {
			return res
		}
		p.drop()
	}
}

// drop removes the chosen piece of least relevance per token, unpinned
// pieces first.
func (p *packer) drop() {
	var worst *piece
	for _, q := range p.pieces {
		if !p.chosen[q] {
			continue
		}
		if worst == nil || worse(q, worst) {
			worst = q
		}
	}
	delete(p.chosen, worst)
}

func worse(a, b *piece) bool {
	if a.Pinned != b.Pinned {
		return !a.Pinned
	}
	return density(a) < density(b)
}

func (p *packer) render() Result {
	var res Result
	var b strings.Builder
	for _, s := range SectionOrder() {
		sec := SectionResult{Section: s}
		for _, q := range p.pieces {
			if p.chosen[q] && q.Section == s {
				sec.Items = append(sec.Items, Item{Candidate: q.Candidate, Tokens: q.cost})
				sec.Tokens += q.cost
			}
		}
		if len(sec.Items) == 0 {
			continue
		}
		sec.Tokens += p.headTok[s]
		b.WriteString(p.heads[s])
		for _, q := range p.pieces {
			if p.chosen[q] && q.Section == s {
				b.WriteString(q.line)
			}
		}
		res.Sections = append(res.Sections, sec)
	}
	res.Text = strings.TrimSuffix(b.String(), "\n")
	for _, q := range p.pieces {
		if p.chosen[q] {
			continue
		}
		reason := ReasonBudget
		if q.cost+p.headTok[q.Section] > p.budget {
			reason = ReasonExceedsBudget
		}
		res.Omitted = append(res.Omitted, Omission{Candidate: q.Candidate, Tokens: q.cost, Reason: reason})
	}
	res.Omitted = append(res.Omitted, p.empty...)
	return res
}
