package pack_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/hebbdb/hebb/router/pack"
)

// fixedSet is a fixed data set of memories as a search ranks them: a few
// long, highly relevant write-ups next to many short, nearly as relevant
// notes (the usual shape of an agent's memory).
func fixedSet() []pack.Candidate {
	runbook := "Release runbook: " + strings.Repeat("check the dashboards, drain one node, deploy it, watch the error rate for ten minutes, then continue with the next node; ", 6)
	incident := "Incident 2024-03 write-up: " + strings.Repeat("the migration locked the atoms table for twenty minutes because the index was built without CONCURRENTLY; ", 4)
	design := "Design notes on sharding: " + strings.Repeat("tenants hash to groups with jump hash, groups are Raft groups, rooms are their own tenants; ", 5)
	return []pack.Candidate{
		{ID: "runbook", Text: runbook, Relevance: 0.92, Section: pack.Facts},
		{ID: "incident", Text: incident, Relevance: 0.88, Section: pack.Warnings},
		{ID: "friday", Text: "Never deploy on Fridays after 3 pm.", Relevance: 0.86, Section: pack.Warnings},
		{ID: "design", Text: design, Relevance: 0.84, Section: pack.Facts},
		{ID: "canary", Text: "Every deploy goes through the canary first.", Relevance: 0.83, Section: pack.Decisions},
		{ID: "rollback", Text: "Rollback is `hebb deploy --previous`.", Relevance: 0.81, Section: pack.Facts},
		{ID: "owner", Text: "Dana owns the release train.", Relevance: 0.8, Section: pack.Facts},
		{ID: "slack", Text: "The user prefers release notes in Slack, not e-mail.", Relevance: 0.78, Section: pack.Preferences},
		{ID: "window", Text: "We decided the deploy window is 10:00 to 15:00 UTC.", Relevance: 0.77, Section: pack.Decisions},
		{ID: "flags", Text: "Risky changes ship behind a feature flag.", Relevance: 0.75, Section: pack.Decisions},
		{ID: "index", Text: "Lesson: build indexes CONCURRENTLY.", Relevance: 0.74, Section: pack.Warnings},
		{ID: "short", Text: "The user likes short summaries.", Relevance: 0.72, Section: pack.Preferences},
		{ID: "ci", Text: "CI must be green before a deploy.", Relevance: 0.7, Section: pack.Facts},
		{ID: "tz", Text: "The team works in CET.", Relevance: 0.6, Section: pack.Facts},
	}
}

// memo remembers counts: the baselines pack the same lines many times.
type memo struct {
	pack.Counter
	seen    map[string]int
	results map[string]pack.Result
}

func (m *memo) Count(s string) int {
	n, ok := m.seen[s]
	if !ok {
		n = m.Counter.Count(s)
		m.seen[s] = n
	}
	return n
}

// packAll renders cands with no budget, remembering results by the set of
// IDs (the baselines render the same sets for every budget).
func packAll(cands []pack.Candidate, tok pack.Counter) pack.Result {
	m, _ := tok.(*memo)
	key := ""
	for _, c := range cands {
		key += c.ID + ","
	}
	if m != nil {
		if r, ok := m.results[key]; ok {
			return r
		}
	}
	r := pack.Pack(cands, 1<<30, tok)
	if m != nil {
		m.results[key] = r
	}
	return r
}

func relevanceOf(res pack.Result) float64 {
	total := 0.0
	for _, s := range res.Sections {
		for _, it := range s.Items {
			total += it.Relevance
		}
	}
	return total
}

// plainCut is the baseline: the top-k memories by relevance, rendered the
// same way, with the largest k whose text fits.
func plainCut(cands []pack.Candidate, budget int, tok pack.Counter) (float64, int) {
	ranked := append([]pack.Candidate(nil), cands...)
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].Relevance > ranked[j].Relevance })
	best, kept := 0.0, 0
	for k := 1; k <= len(ranked); k++ {
		res := packAll(ranked[:k], tok)
		if res.Tokens > budget {
			break
		}
		best, kept = relevanceOf(res), k
	}
	return best, kept
}

// greedySkip is a stronger baseline: by relevance, every memory that still
// fits is taken, the others skipped.
func greedySkip(cands []pack.Candidate, budget int, tok pack.Counter) float64 {
	ranked := append([]pack.Candidate(nil), cands...)
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].Relevance > ranked[j].Relevance })
	var kept []pack.Candidate
	for _, c := range ranked {
		if packAll(append(kept, c), tok).Tokens <= budget {
			kept = append(kept, c)
		}
	}
	return relevanceOf(packAll(kept, tok))
}

func TestPackBeatsPlainCut(t *testing.T) {
	cands := fixedSet()
	for _, enc := range pack.Encodings() {
		tok := &memo{Counter: tokenizer(t, enc), seen: map[string]int{}, results: map[string]pack.Result{}}
		sumPack, sumCut, sumGreedy := 0.0, 0.0, 0.0
		for _, budget := range []int{32, 64, 128, 256, 384, 512} {
			res := pack.Pack(cands, budget, tok)
			checkResult(t, cands, budget, tok, res)
			got := relevanceOf(res)
			cut, kept := plainCut(cands, budget, tok)
			greedy := greedySkip(cands, budget, tok)
			t.Logf("%s budget %4d: packing %2d memories, relevance %5.2f (%3d tokens); plain cut %2d memories, relevance %5.2f; greedy skip %5.2f",
				enc, budget, len(cands)-len(res.Omitted), got, res.Tokens, kept, cut, greedy)
			if got < cut || got < greedy-1e-9 {
				t.Errorf("%s budget %d: packing relevance %.2f below a baseline (cut %.2f, greedy %.2f)", enc, budget, got, cut, greedy)
			}
			sumPack += got
			sumCut += cut
			sumGreedy += greedy
		}
		if sumPack <= sumCut {
			t.Errorf("%s: packing (%.2f) does not beat the plain cut (%.2f) on the fixed set", enc, sumPack, sumCut)
		}
		t.Logf("%s total over the budgets: packing %.2f, plain cut %.2f, greedy skip %.2f", enc, sumPack, sumCut, sumGreedy)
	}
}
