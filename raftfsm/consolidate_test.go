package raftfsm

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/hebbdb/hebb/vecmath"
)

// pairwiseGroups is consolidation by its definition: in feed order, each
// live episode not yet grouped takes every later one not yet grouped at
// cosine clusterCos or more (DotFixed), and a group of two or more is
// merged. It returns the groups' member IDs, in feed order.
func pairwiseGroups(f *FSM, tenant, domain string) [][]ID {
	t := f.tenants[tenant]
	var live []*Atom
	for _, a := range t.feed {
		if a.Domain == domain && a.Type == Episode && !a.Superseded() && a.MergedInto.IsZero() &&
			math.Abs(a.Valence) < protectValence {
			live = append(live, a)
		}
	}
	assigned := make([]bool, len(live))
	var groups [][]ID
	for i, seed := range live {
		if assigned[i] {
			continue
		}
		sv := t.vector(seed, f.dim)
		group := []int{i}
		for j := i + 1; j < len(live); j++ {
			if !assigned[j] && vecmath.DotFixed(sv, t.vector(live[j], f.dim)) >= clusterCos {
				group = append(group, j)
			}
		}
		if len(group) < 2 {
			continue
		}
		var ids []ID
		for _, j := range group {
			assigned[j] = true
			ids = append(ids, live[j].ID)
		}
		groups = append(groups, ids)
	}
	return groups
}

// mergedGroups reads the groups consolidation made: each prototype's
// members, in feed order, the groups in the order of their prototypes.
func mergedGroups(f *FSM, tenant string) [][]ID {
	t := f.tenants[tenant]
	var protos []ID
	members := map[ID][]ID{}
	for _, a := range t.feed {
		if a.Type == Prototype {
			protos = append(protos, a.ID)
		}
		if !a.MergedInto.IsZero() {
			members[a.MergedInto] = append(members[a.MergedInto], a.ID)
		}
	}
	var groups [][]ID
	for _, p := range protos {
		groups = append(groups, members[p])
	}
	return groups
}

// TestConsolidateMatchesPairwise: consolidation, which finds each
// episode's neighbours through the domain's search, groups a domain as
// comparing every pair does, on near twins whose cosines straddle
// clusterCos (so the greedy order decides), beside unrelated rows, in a
// domain searched through codes or exactly, in one block or many.
func TestConsolidateMatchesPairwise(t *testing.T) {
	const dim = 64
	cases := []struct {
		name  string
		setup func(t *testing.T)
	}{
		{"coded", func(t *testing.T) { withCodedRows(t, 64) }},
		{"coded-blocks", func(t *testing.T) { withCodedRows(t, 64); withArenaRows(t, 128) }},
		{"exact", func(t *testing.T) { withCodedRows(t, math.MaxInt) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup(t)
			x := &fixture{t: t, f: New(dim), tenant: "org"}
			rng := rand.New(rand.NewSource(11))
			var items []WriteItem
			for b := range 60 {
				base := randomUnit(rng, dim)
				for c := range 1 + rng.Intn(5) {
					v := slices.Clone(base)
					if c > 0 || b%3 == 0 {
						e := 0.2 + 0.4*rng.Float64() // cosine to base ~0.86-0.98
						for i := range v {
							v[i] += float32(e * rng.NormFloat64() / math.Sqrt(dim))
						}
					}
					items = append(items, x.item(fmt.Sprint("twin ", b, " ", c), "c", normalized(v)))
				}
				for range 4 {
					items = append(items, x.item(fmt.Sprint("other ", b), "c", randomUnit(rng, dim)))
				}
			}
			rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
			for i := 0; i < len(items); i += 100 {
				x.apply(&WriteCmd{Tenant: "org", Batch: true, Items: items[i:min(i+100, len(items))]})
			}
			want := pairwiseGroups(x.f, "org", "c")
			if len(want) < 10 {
				t.Fatalf("only %d groups to find: the fixture tests nothing", len(want))
			}
			r := x.apply(&ConsolidateCmd{Tenant: "org", Domain: "c", At: baseTime + 1e9, BaseID: mkID(1 << 20)}).(*ConsolidateResult)
			got := mergedGroups(x.f, "org")
			if !slices.EqualFunc(got, want, slices.Equal[[]ID]) || r.PrototypesCreated != len(want) {
				t.Fatalf("%d groups (%d reported), want %d:\n got %v\nwant %v", len(got), r.PrototypesCreated, len(want), got, want)
			}
		})
	}
}
