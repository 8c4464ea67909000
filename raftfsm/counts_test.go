package raftfsm

import (
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"sort"
	"testing"
)

// statsWalk is the reference of Stats: every atom of the tenant read.
func statsWalk(f *FSM, tenantID string) Stats {
	f.mu.RLock()
	defer f.mu.RUnlock()
	st := Stats{Domains: []string{}}
	t := f.tenants[tenantID]
	if t == nil {
		return st
	}
	var sumV, sumI big.Float
	prints := map[string]bool{}
	for _, a := range t.feed {
		switch a.Type {
		case Secret:
			continue
		case Prototype:
			st.Prototypes++
		case Singleton:
			st.Singletons++
		default:
			st.Episodes++
		}
		st.TotalAtoms++
		sumV.Add(&sumV, big.NewFloat(a.Valence))
		sumI.Add(&sumI, big.NewFloat(a.Importance))
		if a.Fingerprint != "" {
			prints[a.Fingerprint] = true
		}
	}
	if st.TotalAtoms > 0 {
		v, _ := sumV.Float64()
		i, _ := sumI.Float64()
		st.AvgValence, st.AvgImportance = v/float64(st.TotalAtoms), i/float64(st.TotalAtoms)
	}
	st.HebbianEdges = t.edges.count
	st.EpisodicFingerprints = len(prints)
	for name, d := range t.domains {
		if len(d.rows) > 0 {
			st.Domains = append(st.Domains, name)
		}
	}
	sort.Strings(st.Domains)
	return st
}

// diffStats compares Stats with its reference: counts exactly, averages to
// within a few roundings of the exact sum's.
func diffStats(got, want Stats) string {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-15*max(1, math.Abs(b)) }
	gotAvg, wantAvg := [2]float64{got.AvgValence, got.AvgImportance}, [2]float64{want.AvgValence, want.AvgImportance}
	got.AvgValence, got.AvgImportance, want.AvgValence, want.AvgImportance = 0, 0, 0, 0
	if fmt.Sprint(got) != fmt.Sprint(want) || !near(gotAvg[0], wantAvg[0]) || !near(gotAvg[1], wantAvg[1]) {
		return fmt.Sprintf("got %+v %v, want %+v %v", got, gotAvg, want, wantAvg)
	}
	return ""
}

// TestStatsCountsMatchWalk applies random command sequences (writes of
// every type with secrets and fingerprints, feedback, deletes of atoms and
// domains, resets, and consolidations) and checks after each that the
// counters Stats reads equal a walk of every atom, also after a restore.
func TestStatsCountsMatchWalk(t *testing.T) {
	tenants := []string{"t1", "t2", "none"}
	check := func(t *testing.T, f *FSM, when string) {
		t.Helper()
		for _, id := range tenants {
			if d := diffStats(f.Stats(id), statsWalk(f, id)); d != "" {
				t.Fatalf("%s, tenant %s: %s", when, id, d)
			}
		}
	}
	var protected, prototypes, prints int
	for seed := int64(40); seed < 44; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			cmds, log := commandLog(seed, 600)
			rng := rand.New(rand.NewSource(seed))
			f := New(testDim)
			for i, cmd := range log {
				f.Apply(uint64(2*i+1), cmd)
				check(t, f, fmt.Sprintf("after command %d %T", i, cmds[i]))
				if rng.Intn(20) == 0 {
					c := &ConsolidateCmd{Tenant: tenants[rng.Intn(2)], Domain: []string{"a", "b", "c"}[rng.Intn(3)],
						At: baseTime + int64(i)*1000, BaseID: mkID(1<<30 + i<<12)}
					// Lift a few atoms' valence past protectValence first.
					fb := &FeedbackCmd{Tenant: c.Tenant, IDs: someFeed(f, c.Tenant, rng, 3), Outcome: 1, At: c.At}
					for range 6 {
						f.Apply(uint64(2*i+2), fb.Encode())
					}
					r := f.Apply(uint64(2*i+2), c.Encode()).(*ConsolidateResult)
					check(t, f, fmt.Sprintf("after consolidating at %d", i))
					protected += r.SingletonsProtected
					prototypes += r.PrototypesCreated
				}
				prints = max(prints, f.Stats("t1").EpisodicFingerprints)
			}
			check(t, restored(t, snapshotBytes(t, f), testDim), "after a restore")
		})
	}
	// The sequences must reach the counters a walk would get wrong.
	if protected == 0 || prototypes == 0 || prints == 0 {
		t.Errorf("too little exercised: %d singletons protected, %d prototypes made, at most %d fingerprints",
			protected, prototypes, prints)
	}
}

// someFeed returns the IDs of up to n atoms of the tenant's feed.
func someFeed(f *FSM, tenantID string, rng *rand.Rand, n int) []ID {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var ids []ID
	if t := f.tenants[tenantID]; t != nil && len(t.feed) > 0 {
		for range n {
			ids = append(ids, t.feed[rng.Intn(len(t.feed))].ID)
		}
	}
	return ids
}

// TestFixedSumCancels adds values and removes them in another order: the
// sum returns to zero exactly, and meanwhile stays within a rounding of the
// exact sum.
func TestFixedSumCancels(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, -0.3, 1e-30, -1e-30, 5e-324, 3, -2.5, math.NaN(), 1e9}
	for range 5000 {
		vals = append(vals, (rng.Float64()*2-1)*math.Pow(2, float64(-rng.Intn(40))))
	}
	var s fixedSum
	var exact big.Float
	exact.SetPrec(2000)
	for _, v := range vals {
		s.add(v)
		if v == v {
			exact.Add(&exact, big.NewFloat(min(v, 1<<fixedMax)))
		}
	}
	want, _ := exact.Float64()
	if got := s.float(); math.Abs(got-want) > 1e-20+1e-15*math.Abs(want) {
		t.Fatalf("sum %v, exact %v", got, want)
	}
	rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
	for _, v := range vals {
		s.sub(v)
	}
	if s != (fixedSum{}) {
		t.Fatalf("sum after removing every value: %+v", s)
	}
	for _, v := range []float64{-0.75, -0x1p-32, -3, 0.1} { // exact: |v| >= 2^-33
		if got := fixedOf(v).float(); got != v {
			t.Errorf("fixedOf(%v).float() = %v", v, got)
		}
	}
}
