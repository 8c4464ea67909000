package raftfsm

// Feedback constants (DESIGN.md §4).
const (
	valenceRate = 0.3 // Rescorla-Wagner λ
	// maxFeedbackPairs bounds the concept pairs one feedback call steps:
	// 500 atoms of 256 concepts against 256 query concepts were 32 million
	// pairs, minutes of apply holding the group. A call's usual pairs (tens
	// of atoms, 16 extracted concepts a side) are far below it.
	maxFeedbackPairs = 1 << 16
	// A tenant's edge rows beyond feedbackEdgeBase + feedbackEdgesPerAtom
	// per atom are not made by feedback: its pairs then step the rows that
	// exist and make none (nor intern a new concept). Writes make at most
	// 28 rows an atom (maxEdgeConcepts), so they stay well inside; each
	// feedback call of fresh concepts made up to 65,536 rows, ~100 bytes
	// each, so one key could grow the group's memory without bound.
	feedbackEdgeBase     = 1 << 16
	feedbackEdgesPerAtom = 64
)

// feedbackEdgeBudget is the edge rows t may hold for feedback to add one.
func feedbackEdgeBudget(t *tenant) int { return feedbackEdgeBase + feedbackEdgesPerAtom*len(t.atoms) }

func (f *FSM) applyFeedback(c *FeedbackCmd) *FeedbackResult {
	t := f.tenants[c.Tenant]
	res := &FeedbackResult{}
	if t == nil {
		return res
	}
	outcome := clamp(c.Outcome, -1, 1)
	// concepts are reinforced with the query's concepts, or, without
	// query_concepts, with the atoms' concepts and each other (§4.6
	// "Concepts to reinforce": alone they reinforced nothing).
	with := c.QueryConcepts
	if len(with) == 0 {
		with = c.Concepts
	}
	p := newPairSteps(t, with, outcome, c.At)
	p.budget = feedbackEdgeBudget(t)
	sum := 0.0
	seen := make(map[ID]bool, len(c.IDs))
	for _, id := range c.IDs {
		a := t.atoms[id]
		if a == nil || a.Type == Secret || seen[id] {
			continue
		}
		seen[id] = true
		// float64() rounds the product: no FMA fusion, same bits everywhere.
		t.setValence(a, clamp(a.Valence+float64(valenceRate*(outcome-a.Valence)), -1, 1))
		res.Updated++
		sum += a.Valence
		// The atom's concepts, then the call's: their union, in order.
		p.step(a.Concepts)
		p.step(c.Concepts)
	}
	if res.Updated > 0 {
		res.AvgValence = sum / float64(res.Updated)
	}
	res.CoactivationEdges = len(p.touched)
	return res
}

// pairSteps co-activates concepts with each of with, a pair once per call
// (edges are undirected: a pair named on both sides, music–xylophone and
// xylophone–music, or by two of the atoms, was stepped once for each) and
// up to maxFeedbackPairs pairs in all, in order.
type pairSteps struct {
	t            *tenant
	with         []string
	eta, outcome float64
	at           int64
	stepped      map[[2]string]bool
	// done holds the concepts already stepped with every one of with: a
	// later atom naming one would only find each of its pairs stepped.
	// Without it every atom checked every pair stepped before it, 500
	// atoms × 65,280 pairs of the same 256 concepts (2 s of apply).
	done    map[string]bool
	touched map[*edgeRec]bool
	budget  int // edge rows past which no new one is made (feedbackEdgeBudget)
}

func newPairSteps(t *tenant, with []string, outcome float64, at int64) *pairSteps {
	return &pairSteps{t: t, with: with, eta: feedbackEta * abs(outcome), outcome: outcome, at: at,
		stepped: make(map[[2]string]bool), done: make(map[string]bool), touched: make(map[*edgeRec]bool)}
}

// step co-activates each of concepts with each of with, in order, until
// maxFeedbackPairs pairs are stepped.
func (p *pairSteps) step(concepts []string) {
	if len(p.stepped) >= maxFeedbackPairs {
		return
	}
	for _, ac := range concepts {
		if p.done[ac] {
			continue
		}
		for _, qc := range p.with {
			pair := [2]string{min(ac, qc), max(ac, qc)}
			if p.stepped[pair] {
				continue
			}
			if len(p.stepped) == maxFeedbackPairs {
				return
			}
			p.stepped[pair] = true
			touch := p.t.edges.touch
			if p.t.edges.count >= p.budget {
				touch = p.t.edges.touchExisting
			}
			if e := touch(ac, qc, p.eta, p.outcome, true, p.at); e != nil {
				p.touched[e] = true
			}
		}
		p.done[ac] = true
	}
}

func union(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := make([]string, 0, len(a)+len(b))
	seen := make(map[string]bool, len(a)+len(b))
	for _, s := range append(append([]string{}, a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
