package raftfsm

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/hebbdb/hebb/vecmath"
)

// Search constants (DESIGN.md §4).
const (
	Alpha           = 0.25 // valence modulation: relevance = score·(1 + α·v)
	minEdgeWeight   = 0.1  // associations weaker than this do not expand
	conceptFloor    = 0.35 // concept_scoped score = floor + span·(share of query concepts matched)
	conceptSpan     = 0.4
	mmrPool         = 200  // candidates considered by diversity selection
	tipSearchDepth  = 32   // fingerprint tip search depth (interface §8)
	maxPostingsRead = 1024 // concept_scoped: atoms examined per read, rarest concept first, newest first
	// hebbian_retrieval: atoms examined per expanded concept and per read
	maxAssocPerConcept = 128
	maxAssocPostings   = 1024
	maxExpandPerSeed   = 8
	maxExpanded        = 32
)

// Retrieval stages reported in MemoryItem.source.
const (
	SourceSemantic = "semantic"
	SourceConcept  = "concept_scoped"
	SourceHebbian  = "hebbian_retrieval"
	SourceEpisodic = "episodic"
)

// AuthorFilter narrows room reads to atoms of one author (interface §4.4).
type AuthorFilter struct {
	Principal, Agent, ClientEnv *string
	IsExternal                  *bool
}

// ReadRequest is one search inside a tenant, fully prepared by the router.
type ReadRequest struct {
	Tenant              string
	Vector              []float32
	Concepts            []string // concept keys to match (query concepts and hints)
	Domains             []string // nil: every domain of the tenant
	TopK                int
	MinRelevance        float64
	IncludeAssociations bool
	IncludeHistory      bool
	HideReplaced        bool
	Diversity           float64
	Fingerprint         string
	Filter              []Condition
	Author              AuthorFilter
	// Calibration is the exponent γ of the semantic score: a cosine c
	// scores sign(c)·|c|^γ, so that min_relevance means about the same for
	// embedders whose cosines run low (0 or 1: the cosine itself).
	Calibration float64
}

// Item is one search result: a copy of the atom and its scores.
type Item struct {
	Atom       Atom
	Relevance  float64
	Similarity float64
	Source     string
}

// ReadResult is the answer of Read.
type ReadResult struct {
	Items       []Item
	EpisodicHit bool
	Expanded    []string // expanded concepts, strongest first (query concepts excluded)
	Diversified bool     // diversity selection ran
	DiversityMs float64
	Roundtrips  int
	Touch       []ID // atoms whose access counts the read should bump
}

type candidate struct {
	a      *Atom
	vec    []float32
	sim    float64
	rel    float64
	source string
}

type search struct {
	f      *FSM
	t      *tenant
	req    *ReadRequest
	scope  map[string]bool // nil: all domains
	seated map[*Atom]bool
	gamma  float64  // the request's Calibration; 0 means 1
	sc     *scratch // pooled working memory; nil: allocated on first use
	filter *filter  // req.Filter compiled; nil: none

	// Stages that do not depend on the semantic ranking run beside it
	// (plan): the query concepts' postings counted, and the associations
	// scored without knowing which atoms the ranking seats.
	side          sideArgs
	started       bool // kickoff started the side stages
	helped        bool // the scan's helper runs them (helper)
	counting      sideStage
	countingAhead bool    // countMatches runs beside the ranking (plan)
	found         []tally // what it found
	associated    sideStage
	expanded      []string
	assoc         []candidate // the best slots+wide associations, seated or not
}

// mem is the search's working memory.
func (s *search) mem() *scratch {
	if s.sc == nil {
		s.sc = scratches.New().(*scratch)
	}
	return s.sc
}

// exponent is γ of semScore.
func (s *search) exponent() float64 {
	if s.gamma > 0 {
		return s.gamma
	}
	return 1
}

// semScore is the semantic score of a cosine: sign(c)·|c|^γ. It is
// increasing, so for a positive weight w, semScore(c)·w orders rows as
// c·w^(1/γ) does (see semanticCoded).
func (s *search) semScore(c float64) float64 {
	g := s.exponent()
	switch {
	case g == 1 || c != c:
		return c
	case c >= 0:
		return math.Pow(c, g)
	}
	return -math.Pow(-c, g)
}

// simFloor is the cosine whose score is r (semScore's inverse).
func (s *search) simFloor(r float64) float64 {
	g := s.exponent()
	switch {
	case g == 1:
		return r
	case r >= 0:
		return math.Pow(r, 1/g)
	}
	return -math.Pow(-r, 1/g)
}

// Read runs the one-pass search of DESIGN.md §4 inside the tenant.
func (f *FSM) Read(req *ReadRequest) *ReadResult {
	readsRunning.Add(1)
	defer readsRunning.Add(-1)
	// Outside the lock: a large in list takes a while to compile.
	filter := compileFilter(req.Filter)
	f.mu.RLock()
	defer f.mu.RUnlock()
	res := &ReadResult{Roundtrips: 1, Items: []Item{}, Expanded: []string{}}
	t := f.tenants[req.Tenant]
	if t == nil || len(req.Vector) != f.dim {
		return res
	}
	s := &search{f: f, t: t, req: req, sc: getScratch(), filter: filter}
	s.seated = s.sc.seated
	defer putScratch(s.sc) // after the items are copied out of the candidates
	if g := req.Calibration; g > 0 && !math.IsInf(g, 0) {
		s.gamma = g
	}
	if req.Domains != nil {
		s.scope = make(map[string]bool, len(req.Domains))
		for _, d := range req.Domains {
			s.scope[d] = true
		}
	}
	pinned := s.episodic()
	res.EpisodicHit = len(pinned) > 0
	k := req.TopK - len(pinned)
	if k < 0 {
		k = 0
	}
	pool := k
	if req.Diversity > 0 && req.TopK < mmrPool {
		pool = mmrPool
	}
	slots := (req.TopK + 3) / 4
	// The other stages start once the ranking's scan has had every core
	// (its helper runs them, or ranked calls s.kickoff then, or before
	// it returns).
	s.plan(pool, slots, pool)   // every candidate of the pool may be seated or dropped
	defer s.counting.settle()   // before the scratch goes back (deferred first)
	defer s.associated.settle() // likewise
	main := s.ranked(pool)
	s.kickoff()
	var dropped map[*Atom]bool // what diversity left out: seated as an association last
	if req.Diversity > 0 && req.TopK < mmrPool && len(main) > k {
		start := time.Now()
		dropped = make(map[*Atom]bool, len(main))
		for _, c := range main {
			dropped[c.a] = true
		}
		main = s.diversify(main, k)
		res.Diversified = true
		res.DiversityMs = float64(time.Since(start).Microseconds()) / 1000
	} else if len(main) > k {
		main = main[:k]
	}
	assoc := make([]candidate, 0, slots)
	if req.IncludeAssociations {
		s.associated.wait() // it reads seated
		res.Expanded = s.expanded
	}
	for _, c := range main {
		s.seated[c.a] = true
	}
	// The association slots stay seated (§4.4 rule 7): with what diversity
	// left out only when nothing else is left to fill them (in a small
	// tenant every candidate is in its pool, and the slots stayed empty).
	for _, later := range []bool{false, true} {
		for _, c := range s.assoc {
			if len(assoc) < slots && !s.seated[c.a] && dropped[c.a] == later {
				assoc = append(assoc, c)
			}
		}
	}
	// Items are ordered by relevance (interface §2.5), a fingerprint's pins
	// first (§4.4 rule 4): the associations, seated beyond the ranking's
	// top_k, go where their relevance places them among its hits.
	ranked := make([]candidate, 0, len(main)+len(assoc))
	ranked = append(append(ranked, main...), assoc...)
	sortCandidates(ranked)
	n := len(pinned) + len(ranked)
	res.Items = make([]Item, 0, n) // one allocation: an Item copies an atom
	res.Touch = make([]ID, 0, n)
	for _, group := range [][]candidate{pinned, ranked} {
		for _, c := range group {
			res.Items = append(res.Items, Item{Atom: *c.a, Relevance: c.rel, Similarity: c.sim, Source: c.source})
			if !(req.HideReplaced && c.a.Superseded()) {
				res.Touch = append(res.Touch, c.a.ID)
			}
		}
	}
	return res
}

// sideArgs are the arguments of the stages beside the ranking (plan).
type sideArgs struct{ n, slots, seats int }

// plan records which stages run beside the semantic ranking and counts
// them in their WaitGroups, before any can start: countMatches (when
// ranking n atoms with query concepts) and the associations, scored for
// slots + seats places: the ranking seats at most seats atoms, so the best
// slots of those left are among them (hebbian).
func (s *search) plan(n, slots, seats int) {
	s.side = sideArgs{n, slots, seats}
	s.countingAhead = n > 0 && len(s.req.Concepts) > 0
	if s.countingAhead {
		s.counting.add(s.countStage)
	}
	if s.req.IncludeAssociations {
		s.associated.add(s.assocStage)
	}
}

// kickoff starts the side stages, each on a goroutine of its own, unless
// they were started or a helper of the ranking's scan runs them (helper);
// the ranking calls it when its scan is done (vecmath.SearchOptions.Scanned),
// so that the scan, the one part of a large search spread over the
// cores, has them to itself, and these stages overlap the ranking's
// serial rest instead.
func (s *search) kickoff() {
	if s.helped || s.started {
		return
	}
	s.started = true
	if s.countingAhead {
		go s.counting.run()
	}
	if s.req.IncludeAssociations {
		go s.associated.run()
	}
}

// helper runs the side stages, one after the other. A ranking whose scan
// spreads over the cores hands it to the scan (searchDomains): a helper
// goroutine that finds no scan task left runs it, a goroutine already
// running where new ones waited for a core to wake (fanoutThen).
func (s *search) helper() {
	s.counting.run()
	s.associated.run()
}

// countStage counts the query concepts' postings (countMatches).
func (s *search) countStage() {
	s.found = s.countMatches()
}

// assocStage expands the query's concepts and scores the atoms they reach
// (hebbian).
func (s *search) assocStage() {
	var weight map[string]float64
	s.expanded, weight = s.expand()
	if p := s.side; p.slots > 0 && len(s.expanded) > 0 {
		s.assoc = s.hebbian(s.expanded, weight, p.slots+p.seats)
	}
}

func (s *search) inScope(a *Atom) bool {
	return s.scope == nil || s.scope[a.Domain]
}

// visible applies every filter but the domain scope.
func (s *search) visible(a *Atom) bool {
	if a.Type == Secret || !a.MergedInto.IsZero() {
		return false
	}
	if s.req.HideReplaced && !s.req.IncludeHistory && a.Superseded() {
		return false
	}
	// The author and metadata fields lie outside the atom's first cache
	// line: read only when a filter asks.
	if s.req.Author != (AuthorFilter{}) && !s.req.Author.match(a.Provenance) {
		return false
	}
	return s.filter.match(a.Metadata)
}

// Stages that read rows, each on its own goroutine with its own buffer.
const (
	mainStage  = iota // episodic and ranked
	assocStage        // hebbian
)

// simOf returns the cosine of a's row with the query, and the row if it is
// in memory (a candidate keeps it for diversify; nil when it was read from
// disk into the stage's buffer).
func (s *search) simOf(a *Atom, stage int) (float64, []float32) {
	sc := s.mem()
	if len(sc.rows[stage]) != s.f.dim {
		sc.rows[stage] = make([]float32, s.f.dim)
	}
	buf := sc.rows[stage]
	vec := s.t.domains[a.Domain].vecTo(a, s.f.dim, buf)
	sim := float64(vecmath.Dot(s.req.Vector, vec))
	if &vec[0] == &buf[0] {
		return sim, nil
	}
	return sim, vec
}

func (s *search) score(a *Atom, vec []float32, sim, score float64, source string) candidate {
	return candidate{a: a, vec: vec, sim: sim, rel: score * (1 + Alpha*a.Valence), source: source}
}

// episodic returns the fingerprint matches (and, with filtering on, the live
// tips of replaced matches), seated ahead of ranked hits.
func (s *search) episodic() []candidate {
	if s.req.Fingerprint == "" {
		return nil
	}
	var out []candidate
	add := func(a *Atom) {
		if s.seated[a] {
			return
		}
		s.seated[a] = true
		sim, vec := s.simOf(a, mainStage)
		out = append(out, s.score(a, vec, sim, 1, SourceEpisodic))
	}
	for _, a := range s.t.prints[s.req.Fingerprint] {
		if a.Type == Secret || !s.inScope(a) || !s.req.Author.match(a.Provenance) {
			continue
		}
		add(a)
		if s.req.HideReplaced && a.Superseded() {
			if tip := s.tip(a); tip != nil {
				add(tip)
			}
		}
	}
	return out
}

// tip follows superseded_by links to the live tip; nil when the chain is
// broken or deeper than the search depth.
func (s *search) tip(a *Atom) *Atom {
	for i := 0; i < tipSearchDepth; i++ {
		next := s.t.atoms[a.SupersededBy]
		if next == nil || next.Type == Secret {
			return nil
		}
		if !next.Superseded() {
			return next
		}
		a = next
	}
	return nil
}

// ranked scores every visible atom of the scope semantically, adds concept
// matches, and returns the best n above min_relevance by relevance.
func (s *search) ranked(n int) []candidate {
	if n == 0 {
		return nil
	}
	sc := s.mem()
	doms := sc.doms[:0]
	rows := 0
	for _, name := range s.domainNames() {
		d := s.t.domains[name]
		doms = append(doms, d)
		rows += len(d.rows)
	}
	sc.doms = doms
	byAtom := sc.byAtom
	var cands []candidate
	if rows >= codedRows {
		s.helped = spreads(rows)
		cands = s.semanticCoded(doms, n, byAtom)
	} else {
		s.kickoff() // no scan to wait for
		cands = s.semanticExact(doms, n, byAtom)
	}
	s.kickoff() // when the search returned before scanning
	cands = s.conceptMatches(cands, byAtom, n)
	kept := cands[:0]
	for _, c := range cands {
		if c.rel >= s.req.MinRelevance {
			kept = append(kept, c)
		}
	}
	s.mem().cands = cands[:0] // keep the room it grew to
	kept = bestN(kept, n, before)
	sortCandidates(kept)
	return kept
}

// semanticExact scans every row of the domains: each domain's best n.
func (s *search) semanticExact(doms []*domainIndex, n int, byAtom map[*Atom]int) []candidate {
	cands := s.mem().cands[:0]
	var scores []float32
	for _, d := range doms {
		if cap(scores) < len(d.rows) {
			scores = make([]float32, len(d.rows))
		}
		scores = scores[:len(d.rows)]
		d.dotAll(s.req.Vector, s.f.dim, scores)
		for i, a := range d.rows {
			if s.seated[a] || !s.visible(a) {
				scores[i] = float32(math.NaN())
				continue
			}
			scores[i] = float32(s.semScore(float64(scores[i])) * (1 + Alpha*a.Valence))
		}
		top := cutTies(scores, vecmath.TopK(scores, n, nil), n, d.rows, s.req.MinRelevance)
		for _, i := range top {
			a := d.rows[i]
			sim, vec := s.simOf(a, mainStage)
			byAtom[a] = len(cands)
			cands = append(cands, s.score(a, vec, sim, s.semScore(sim), SourceSemantic))
		}
	}
	return cands
}

// semanticCoded finds the n best rows of the domains by relevance through
// their codes (vecmath.Searcher): the same rows as semanticExact, ties at
// the n-th included, unless an estimate misses its bound. Atoms are
// touched only for the few rows whose bounds can reach the n-th score.
func (s *search) semanticCoded(doms []*domainIndex, n int, byAtom map[*Atom]int) []candidate {
	// Relevance semScore(c)·w orders rows as c·w^(1/γ) does, a weight the
	// search takes; the floor moves to the cosine side likewise.
	floor := noFloor
	if m := s.req.MinRelevance; m > -1e30 {
		floor = float32(s.simFloor(m) - 1e-6) // rows below are dropped anyway
	}
	weight := func(v float64) float32 {
		if g := s.exponent(); g != 1 {
			return float32(math.Pow(1+Alpha*v, 1/g))
		}
		return float32(1 + Alpha*v)
	}
	// Every weight lies between those of the tenant's valence bounds
	// (weight is increasing; the margin covers Pow's rounding). The rows
	// of positive valence, listed by their domains, are bounded apart, and
	// every other row by weight(0) = 1.
	minW, maxW, heavyW := float32(1), float32(1), float32(0)
	if s.t.valMin < 0 {
		minW = weight(s.t.valMin) * (1 - 1e-6)
	}
	if s.t.valMax > 0 {
		heavyW = weight(s.t.valMax) * (1 + 1e-6)
	}
	opt := &vecmath.SearchOptions{K: n, Floor: floor, MinWeight: minW, MaxWeight: maxW, HeavyWeight: heavyW,
		Scanned: s.kickoff}
	eligible := func(a *Atom) (float32, bool) {
		if s.seated[a] || !s.visible(a) {
			return 0, false
		}
		return weight(a.Valence), true
	}
	cands := s.mem().cands[:0]
	var idle func()
	if s.helped {
		idle = s.helper
	}
	searchDomains(s.f.dim, s.req.Vector, doms, opt, idle, s.filter, eligible, func(d *domainIndex, a *Atom, h vecmath.Hit) {
		byAtom[a] = len(cands)
		sim := float64(h.Sim)
		cands = append(cands, s.score(a, d.memVec(a, s.f.dim), sim, s.semScore(sim), SourceSemantic))
	})
	return cands
}

// cutTies makes a full top-n selection independent of row order: TopK
// breaks score ties by row, and rows move on delete and on restore. Among
// the rows tied with the last score it keeps the lowest IDs, as
// sortCandidates orders them. A tie below the relevance floor is left
// alone: every row in it is dropped later whichever is picked.
func cutTies(scores []float32, top []int, n int, rows []*Atom, minRel float64) []int {
	if n <= 0 || len(top) < n {
		return top
	}
	floor := scores[top[n-1]]
	if float64(floor) < minRel-1e-6 {
		return top
	}
	out := make([]int, 0, n)
	for _, i := range top {
		if scores[i] != floor {
			out = append(out, i)
		}
	}
	var tied []int
	for i, sc := range scores {
		if sc == floor {
			tied = append(tied, i)
		}
	}
	if need := n - len(out); len(tied) > need {
		sort.Slice(tied, func(a, b int) bool { return compareID(rows[tied[a]].ID, rows[tied[b]].ID) < 0 })
		tied = tied[:need]
	}
	return append(out, tied...)
}

// domainNames returns the names of the domains in scope, sorted, in the
// scratch's room (valid until the scratch goes back).
func (s *search) domainNames() []string {
	names := s.mem().names[:0]
	if s.scope == nil {
		for name := range s.t.domains {
			names = append(names, name)
		}
	} else {
		for name := range s.scope {
			if s.t.domains[name] != nil {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	s.mem().names = names
	return names
}

// conceptMatches raises atoms carrying query concepts to the concept_scoped
// score when that beats their similarity, and adds the atoms outside the
// semantic pool that can reach the best n.
//
// An atom outside the pool scores max(sim, cs)·w (w = 1 + α·valence). Its
// sim·w cannot beat the pool's n-th relevance (it would be in the pool), so
// only the n best of them by cs·w, ties included, can enter the top n: only
// those are scored exactly.
func (s *search) conceptMatches(cands []candidate, byAtom map[*Atom]int, n int) []candidate {
	if len(s.req.Concepts) == 0 {
		return cands
	}
	var found []tally
	if s.countingAhead {
		s.counting.wait()
		found = s.found
	} else {
		found = s.countMatches()
	}
	out := s.mem().fresh[:0]
	for _, f := range found {
		cs := conceptScore(int(f.matched), len(s.req.Concepts))
		if i, ok := byAtom[f.a]; ok {
			if cs > s.semScore(cands[i].sim) {
				cands[i] = s.score(f.a, cands[i].vec, cands[i].sim, cs, SourceConcept)
			}
			continue
		}
		out = append(out, fresh{a: f.a, id: f.id, cs: cs, rel: cs * f.w})
	}
	s.mem().fresh = out[:0] // keep the room it grew to
	if len(out) > n {
		// The n first by (cs·w desc, ID asc): an atom after them has n
		// atoms ahead of it in the final order (their relevance is at least
		// their cs·w), however its own similarity turns out.
		out = bestN(out, n, func(x, y fresh) bool {
			if x.rel != y.rel {
				return x.rel > y.rel
			}
			return compareID(x.id, y.id) < 0
		})
	}
	for _, f := range out {
		sim, vec := s.simOf(f.a, mainStage)
		score, source := s.semScore(sim), SourceSemantic
		if f.cs > score {
			score, source = f.cs, SourceConcept
		}
		byAtom[f.a] = len(cands)
		cands = append(cands, s.score(f.a, vec, sim, score, source))
	}
	return cands
}

// tally is an eligible atom countMatches found, with what conceptMatches
// needs of it, read while the atom is in the cache of the core counting:
// conceptMatches runs on the ranking's goroutine, often on the other core,
// where reading a thousand atoms again took longer than counting them.
type tally struct {
	a       *Atom
	id      ID
	w       float64 // 1 + α·valence
	matched int32   // query concepts it carries
}

// countMatches counts, for the newest maxPostingsRead postings of the query
// concepts, how many query concepts each eligible atom carries: the atoms
// in first-seen order.
func (s *search) countMatches() []tally {
	sc := s.mem()
	found := sc.found[:0]
	at := &sc.counted // atom -> its index in found; -1: not eligible
	at.reset(maxPostingsRead)
	defer func() { sc.found = found[:0] }()
	read := 0
	for _, c := range s.rarestFirst() {
		list := s.t.posting(c)
		end := max(len(list)-maxPostingsRead, 0)
		for i := len(list) - 1; i >= end; i-- {
			if read++; read > maxPostingsRead {
				return found
			}
			sc.sinks[0] += prefetchAhead(list, i, end)
			a := list[i]
			switch j, seen := at.slot(a, int32(len(found))); {
			case seen && *j >= 0:
				found[*j].matched++ // eligible: it was checked when first seen
			case seen:
			case s.seated[a] || !s.inScope(a) || !s.visible(a):
				*j = -1
			default:
				found = append(found, tally{a: a, id: a.ID, w: 1 + Alpha*a.Valence, matched: 1})
			}
		}
	}
	return found
}

// prefetchRun is how many postings a stage loads ahead (prefetchAhead).
const prefetchRun = 32

// prefetchAhead is called for each posting i of list a stage visits, newest
// (the end of list) first down to end. Every prefetchRun postings it loads
// the first cache line of the next prefetchRun atoms in a loop whose
// iterations do not depend on each other, so the CPU fetches them in
// parallel: each posting's atom is a cache miss, and the stage, visiting
// them one by one behind map lookups, would otherwise wait for each in turn.
// The sum only keeps the loads: stages add it to a sink of their own.
func prefetchAhead(list []*Atom, i, end int) (sum AtomType) {
	if (len(list)-1-i)%prefetchRun != 0 {
		return 0
	}
	for _, a := range list[max(i+1-prefetchRun, end) : i+1] {
		sum += a.Type
	}
	return sum
}

// bestN returns the n first items of s in the order before (a strict
// order), in no particular order, reusing s's memory.
func bestN[T any](s []T, n int, before func(x, y T) bool) []T {
	if n <= 0 {
		return s[:0]
	}
	if len(s) <= n {
		return s
	}
	// A heap of the n best, its root the last of them.
	h := s[:0:n]
	h = append(h, s[:n]...)
	down := func(i int) {
		for {
			m := i
			for _, c := range [2]int{2*i + 1, 2*i + 2} {
				if c < len(h) && before(h[m], h[c]) {
					m = c
				}
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for i := n/2 - 1; i >= 0; i-- {
		down(i)
	}
	for _, x := range s[n:] {
		if before(x, h[0]) {
			h[0] = x
			down(0)
		}
	}
	return h
}

// rarestFirst orders the query concepts by how few atoms carry them (then
// by request order), so that the read budget goes to the concepts that
// tell atoms apart.
func (s *search) rarestFirst() []string {
	out := slices.Clone(s.req.Concepts)
	slices.SortStableFunc(out, func(a, b string) int {
		return cmp.Compare(len(s.t.posting(a)), len(s.t.posting(b)))
	})
	return out
}

// conceptScore is the concept_scoped score of an atom carrying matched of
// the query's total concepts.
func conceptScore(matched, total int) float64 {
	share := float64(matched) / float64(total)
	if share > 1 {
		share = 1
	}
	return conceptFloor + conceptSpan*share
}

// before is the order of results: relevance descending, then ID.
func before(x, y candidate) bool {
	if x.rel != y.rel {
		return x.rel > y.rel
	}
	return compareID(x.a.ID, y.a.ID) < 0
}

func sortCandidates(c []candidate) { slices.SortFunc(c, compareBy(before)) }

// diversify reduces ranked candidates to k by maximal marginal relevance.
func (s *search) diversify(c []candidate, k int) []candidate {
	rel := make([]float64, len(c))
	vecs := make([][]float32, len(c))
	for i := range c {
		rel[i], vecs[i] = c[i].rel, c[i].vec
		if vecs[i] == nil { // on disk
			vecs[i] = s.t.domains[c[i].a.Domain].ownVec(c[i].a, s.f.dim)
		}
	}
	picks := vecmath.MMR(rel, vecs, k, s.req.Diversity, 0)
	out := make([]candidate, len(picks))
	for i, p := range picks {
		out[i] = c[p]
	}
	return out
}

// expand returns the concepts the query's concepts reach through edges of
// weight ≥ minEdgeWeight (at most maxExpandPerSeed per query concept,
// maxExpanded in all), strongest first, with their strongest weight.
func (s *search) expand() ([]string, map[string]float64) {
	sc := s.mem()
	weight, query := sc.weight, sc.query // the scratch's (empty): valid until it goes back
	var expanded []string
	for _, c := range s.req.Concepts {
		query[c] = true
	}
	for _, q := range s.req.Concepts {
		taken := 0
		for _, e := range s.t.edges.neighbours(q, minEdgeWeight, maxExpandPerSeed+len(s.req.Concepts)) {
			if taken >= maxExpandPerSeed {
				break
			}
			other, b := s.t.edges.ends(e)
			if other == q {
				other = b
			}
			if query[other] {
				continue
			}
			taken++
			if _, ok := weight[other]; !ok {
				expanded = append(expanded, other)
			}
			weight[other] = math.Max(weight[other], e.Weight)
		}
	}
	slices.SortStableFunc(expanded, func(a, b string) int { return cmp.Compare(weight[b], weight[a]) })
	if len(expanded) > maxExpanded {
		expanded = expanded[:maxExpanded]
	}
	return expanded, weight
}

// hebbian scores the atoms carrying expanded concepts (score = similarity ·
// weight, DESIGN.md §4, the similarity as the semantic stage scores it and
// the strongest weight reaching the atom)
// and returns the best slots of them above min_relevance. It scores them
// best bound first, and stops at the first bound under the slots-th best
// score found (or min_relevance): no atom left can place.
func (s *search) hebbian(expanded []string, weight map[string]float64, slots int) []candidate {
	sc := s.mem()
	h := s.reach(expanded, weight)
	s.bound(h)
	heapBound(h)
	floor := newFloor(slots)
	cands := sc.hcands[:0]
	for len(h) > 0 && h[0].bound >= max(floor.min(), s.req.MinRelevance) {
		r := h[0]
		h[0] = h[len(h)-1]
		h = h[:len(h)-1]
		siftBound(h, 0)
		sim, vec := s.simOf(r.a, assocStage)
		c := s.score(r.a, vec, sim, hebbScore(s.semScore(sim), r.w), SourceHebbian)
		cands = append(cands, c)
		floor.push(c.rel)
	}
	sc.hcands = cands[:0]
	out := cands[:0]
	for _, c := range cands {
		if c.rel >= s.req.MinRelevance {
			out = append(out, c)
		}
	}
	out = bestN(out, slots, before)
	sortCandidates(out)
	return out
}

// hebbScore is an association's score: its semantic score (the calibrated
// cosine) times the weight of the edge reaching it. It rises with both, so
// a bound of either bounds it.
func hebbScore(sem, w float64) float64 { return sem * w }

// reached is an atom the expanded concepts reach (hebbian).
type reached struct {
	a     *Atom
	w     float64 // the strongest weight of the expanded concepts reaching it
	bound float64 // its score cannot exceed this (bound)
}

// reach lists the eligible atoms the expanded concepts reach through
// their newest postings, each once, with the strongest weight reaching it.
// The postings read are bounded: a frequent concept must not turn one
// read into a scan of the tenant.
func (s *search) reach(expanded []string, weight map[string]float64) []reached {
	sc := s.mem()
	at := &sc.reaching // atom -> its index in out; -1: not eligible
	at.reset(maxAssocPostings)
	out := sc.reached[:0]
	read := 0
	for _, c := range expanded {
		w := weight[c]
		list := s.t.posting(c)
		end := max(len(list)-maxAssocPerConcept, 0)
		for i := len(list) - 1; i >= end; i-- {
			if read++; read > maxAssocPostings {
				sc.reached = out
				return out
			}
			sc.sinks[1] += prefetchAhead(list, i, end)
			a := list[i]
			switch j, seen := at.slot(a, int32(len(out))); {
			case seen && *j >= 0:
				out[*j].w = max(out[*j].w, w)
			case seen:
			case s.seated[a] || !s.inScope(a) || !s.visible(a):
				*j = -1
			default:
				out = append(out, reached{a: a, w: w})
			}
		}
	}
	sc.reached = out
	return out
}

// bound sets each reached atom's bound: its score were its similarity the
// upper bound its row's 4-bit codes give (vecmath.Bounder), or 1 when the
// row has none or the bound at 1 cannot reach min_relevance anyway. The
// rows are bounded together (UpperEach): each is a few cache misses, which
// one at a time were most of the stage.
func (s *search) bound(rs []reached) {
	sc := s.mem()
	codes, rows, at := sc.bcodes[:0], sc.brows[:0], sc.bat[:0]
	for i := range rs {
		r := &rs[i]
		r.bound = r.w * (1 + Alpha*r.a.Valence) // at similarity 1
		if r.bound < s.req.MinRelevance {
			continue
		}
		d := s.t.domains[r.a.Domain]
		slot := int(r.a.slot)
		if blk := &d.blocks[slot/arenaRows]; d.coded() && blk.codes != nil {
			codes, rows, at = append(codes, blk.codes), append(rows, int32(slot%arenaRows)), append(at, int32(i))
		}
	}
	if len(rows) > 0 {
		ubs := slices.Grow(sc.bubs[:0], len(rows))[:len(rows)]
		c := codingFor(s.f.dim)
		b := c.bounders.Get().(*vecmath.Bounder)
		b.Prepare(s.req.Vector)
		b.UpperEach(codes, rows, ubs)
		c.bounders.Put(b)
		for k, i := range at {
			r := &rs[i]
			r.bound = hebbScore(s.semScore(float64(ubs[k])), r.w) * (1 + Alpha*r.a.Valence)
		}
		sc.bubs = ubs[:0]
	}
	for i := range rs {
		if b := rs[i].bound; b != b {
			rs[i].bound = math.Inf(1) // unknown: score it
		}
	}
	clear(codes) // no block stays reachable from the pool
	sc.bcodes, sc.brows, sc.bat = codes[:0], rows[:0], at[:0]
}

// heapBound orders rs as a heap of the largest bound first.
func heapBound(rs []reached) {
	for i := len(rs)/2 - 1; i >= 0; i-- {
		siftBound(rs, i)
	}
}

func siftBound(rs []reached, i int) {
	for {
		m := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(rs) && rs[c].bound > rs[m].bound {
				m = c
			}
		}
		if m == i {
			return
		}
		rs[i], rs[m] = rs[m], rs[i]
		i = m
	}
}

// scoreFloor tracks the slots-th best of the scores pushed (a min-heap of
// the best slots): hebbian's atoms whose bound is below it cannot place.
type scoreFloor struct {
	slots int
	h     []float64
}

func newFloor(slots int) *scoreFloor { return &scoreFloor{slots: slots} }

// min is the slots-th best score pushed: -Inf until slots are known.
func (f *scoreFloor) min() float64 {
	if f.slots == 0 || len(f.h) < f.slots {
		return math.Inf(-1)
	}
	return f.h[0]
}

func (f *scoreFloor) push(rel float64) {
	switch {
	case f.slots == 0 || rel != rel:
	case len(f.h) < f.slots:
		f.h = append(f.h, rel)
		for i := len(f.h) - 1; i > 0 && f.h[(i-1)/2] > f.h[i]; i = (i - 1) / 2 {
			f.h[i], f.h[(i-1)/2] = f.h[(i-1)/2], f.h[i]
		}
	case rel > f.h[0]:
		f.h[0] = rel
		for i := 0; ; {
			m := i
			for _, c := range [2]int{2*i + 1, 2*i + 2} {
				if c < len(f.h) && f.h[c] < f.h[m] {
					m = c
				}
			}
			if m == i {
				return
			}
			f.h[i], f.h[m] = f.h[m], f.h[i]
			i = m
		}
	}
}

func (f AuthorFilter) match(p *Provenance) bool {
	if f.Principal == nil && f.Agent == nil && f.ClientEnv == nil && f.IsExternal == nil {
		return true
	}
	if p == nil {
		return false
	}
	return (f.Principal == nil || *f.Principal == p.Principal) &&
		(f.Agent == nil || *f.Agent == p.Agent) &&
		(f.ClientEnv == nil || *f.ClientEnv == p.ClientEnv) &&
		(f.IsExternal == nil || *f.IsExternal == p.IsExternal)
}
