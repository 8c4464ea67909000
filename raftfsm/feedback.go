package raftfsm

// Feedback constants (DESIGN.md §4).
const (
	valenceRate = 0.3 // Rescorla-Wagner λ
	// maxFeedbackPairs bounds the concept pairs one feedback call steps:
	// 500 atoms of 256 concepts against 256 query concepts were 32 million
	// pairs, minutes of apply holding the group. A call's usual pairs (tens
	// of atoms, 16 extracted concepts a side) are far below it.
	maxFeedbackPairs = 1 << 16
)

func (f *FSM) applyFeedback(c *FeedbackCmd) *FeedbackResult {
	t := f.tenants[c.Tenant]
	res := &FeedbackResult{}
	if t == nil {
		return res
	}
	outcome := clamp(c.Outcome, -1, 1)
	touched := make(map[*edgeRec]bool)
	// One step per concept pair per feedback: edges are undirected, and a
	// pair named on both sides (music–xylophone and xylophone–music), or
	// by two of the atoms, was stepped once for each.
	stepped := make(map[[2]string]bool)
	// concepts are reinforced with the query's concepts, or, without
	// query_concepts, with the atoms' concepts and each other (§4.6
	// "Concepts to reinforce": alone they reinforced nothing).
	with := c.QueryConcepts
	if len(with) == 0 {
		with = c.Concepts
	}
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
		if len(stepped) < maxFeedbackPairs {
			stepPairs(t, union(a.Concepts, c.Concepts), with, outcome, c.At, stepped, touched)
		}
	}
	if res.Updated > 0 {
		res.AvgValence = sum / float64(res.Updated)
	}
	res.CoactivationEdges = len(touched)
	return res
}

// stepPairs co-activates each concept with each of with, a pair once per
// call (stepped) and up to maxFeedbackPairs pairs in all, in order.
func stepPairs(t *tenant, concepts, with []string, outcome float64, at int64, stepped map[[2]string]bool, touched map[*edgeRec]bool) {
	eta := feedbackEta * abs(outcome)
	for _, ac := range concepts {
		for _, qc := range with {
			pair := [2]string{min(ac, qc), max(ac, qc)}
			if stepped[pair] {
				continue
			}
			if len(stepped) == maxFeedbackPairs {
				return
			}
			stepped[pair] = true
			if e := t.edges.touch(ac, qc, eta, outcome, true, at); e != nil {
				touched[e] = true
			}
		}
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
