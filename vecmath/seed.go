package vecmath

import (
	"math"
	"slices"
)

// seedRows is how many rows of largest stage-1 bound are refined first:
// eight per row wanted, at least 16. The write gate wants one row; with 64
// seeds refining them cost more than the tighter threshold saved (a gate
// in a domain of 5k rows of hebb bench's texts: 46 µs, with 16: 35 µs).
func (s *Searcher) seedRows() int { return max(8*s.opt.K, 16) }

// seed refines the seedRows rows of largest stage-1 upper bound with their
// int4 codes, evaluates the best of those exactly until K are eligible, and
// returns the K-th best score found: a threshold every returned row must
// reach (-Inf when fewer than K rows are eligible; then every row whose
// bounds reach the floor was evaluated). Refined rows stay listed for admit.
//
// The seeds go by upper bound, not by estimate, so that the scan stores one
// float a row instead of two (at a million rows its stores were a tenth of
// the scan's time); they are a few more rows with wide bounds, and the
// threshold comes out about as tight (1% more rows refined).
//
// Rows whose bounds cannot reach the floor are neither evaluated nor
// refined in the later rounds: a search whose weights reject most rows (a
// metadata filter matching few atoms) would otherwise weigh and evaluate
// every row of the segments, in rounds that each rank all their bounds.
func (s *Searcher) seed() float32 {
	// The p largest bounds lie in the p blocks of largest maximum (a block
	// holding one has a maximum at least the p-th largest bound), and the
	// p-th largest block maximum v is at most the p-th largest bound; so
	// the rows of those blocks bounded at v or more, p to a few times p of
	// them, hold the p largest.
	p := s.seedRows()
	s.order = TopK(s.bmax, p, s.order[:0])
	s.list = s.list[:0]
	if len(s.order) > 0 {
		v := s.bmax[s.order[len(s.order)-1]]
		for _, b := range s.order {
			for i, u := range s.ub[b*blockRows : (b+1)*blockRows] {
				if u >= v {
					s.list = append(s.list, int32(b*blockRows+i))
				}
			}
		}
	}
	t, th := s.bounds(s.opt.Floor)
	eligible, last := 0, false
	for round := 0; ; round, p = round+1, p*4 {
		slices.Sort(s.list)
		s.refineListed()
		// Evaluate the best few by int4 estimate (a few more than K tighten
		// the threshold), then, while fewer than K are eligible, the rest.
		// The first round evaluates them whatever the floor: K eligible
		// rows, below it or not, end the rounds, as they do at once when
		// every row is eligible.
		for _, m := range []int{s.opt.K + max(s.opt.K, 4), len(s.e4)} {
			ranked := s.byEstimate(m)
			for _, i := range s.order {
				if !ranked && eligible >= s.opt.K {
					break
				}
				u := s.u4[i]
				if u == u && (round == 0 || s.reaches(s.segs[i], s.rows[i], u, t, th)) && s.evalListed(i) {
					eligible++
				}
			}
			if eligible >= s.opt.K {
				break
			}
		}
		if eligible >= s.opt.K || last || !s.hasRows() {
			break
		}
		// Too few eligible rows (every refined one that can reach the
		// floor was evaluated): refine the next best rows by upper bound.
		last = s.nextSeeds(4*p, t, th)
	}
	if eligible < s.opt.K {
		return float32(math.Inf(-1))
	}
	return s.kth()
}

// rankAtMost is the most refined rows seed orders by estimate: past it,
// ranking them costs more than evaluating them in row order, and any K
// eligible rows give a threshold (a lower one, pruning less).
const rankAtMost = 4096

// byEstimate sets order to the m listed rows of best int4 estimate, best
// first, or, when that would be more than rankAtMost of them and all, to
// every listed row in list (row) order; it reports whether it ranked.
func (s *Searcher) byEstimate(m int) bool {
	if m < len(s.e4) || m <= rankAtMost {
		s.order = TopK(s.e4, m, s.order[:0])
		return true
	}
	s.order = s.order[:0]
	for i := range s.e4 {
		s.order = append(s.order, i)
	}
	return false
}

// nextSeeds lists the unhandled rows among the n of largest stage-1 upper
// bound that can reach the floor (bounds t and th, see bounds), and marks
// the others handled. It reports whether no row left unlisted can reach
// it: one of the n lay below th, or they were all the rows left. Past
// rankAtMost rows or an eighth of them it lists every row left that can
// reach the floor, in row order: ranking that many bounds costs more than
// the order saves (few rows are eligible by then).
func (s *Searcher) nextSeeds(n int, t, th float32) (last bool) {
	s.list = s.list[:0]
	if n > rankAtMost || n >= len(s.ub)/8 {
		s.restSeeds(t, th)
		return true
	}
	s.top = TopK(s.ub, n, s.top[:0])
	nan := float32(math.NaN())
	for _, g := range s.top {
		u := s.ub[g]
		if !(u >= th) {
			last = true
		}
		if seg := s.segOf(g); s.reaches(int32(seg), int32(g-s.off[seg]), u, t, th) {
			s.list = append(s.list, int32(g))
		} else {
			s.ub[g] = nan
		}
	}
	return last || len(s.top) < n
}

// restSeeds lists every unhandled row that can reach the floor (bounds t
// and th) and marks the others handled.
func (s *Searcher) restSeeds(t, th float32) {
	nan := float32(math.NaN())
	for seg := range s.seg {
		off := s.off[seg]
		for row := range s.seg[seg].Rows {
			switch u := s.ub[off+row]; {
			case u != u:
			case s.reaches(int32(seg), int32(row), u, t, th):
				s.list = append(s.list, int32(off+row))
			default:
				s.ub[off+row] = nan
			}
		}
	}
}

// reaches reports whether a row whose Sim is bounded by u can score at
// least the threshold of bounds t and th (bounds).
func (s *Searcher) reaches(seg, row int32, u, t, th float32) bool {
	return u >= t || th < t && u >= th && s.heavy(int(seg), int(row))
}

// hasRows reports whether a row is still unhandled.
func (s *Searcher) hasRows() bool {
	for _, u := range s.ub {
		if u == u {
			return true
		}
	}
	return false
}
