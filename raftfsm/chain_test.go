package raftfsm

import (
	"fmt"
	"testing"
)

func chainIDs(res ChainResult) []ID {
	out := make([]ID, len(res.Revisions))
	for i, r := range res.Revisions {
		out[i] = r.Atom.ID
	}
	return out
}

func heads(res ChainResult) []ID {
	var out []ID
	for _, r := range res.Revisions {
		if r.IsHead {
			out = append(out, r.Atom.ID)
		}
	}
	return out
}

func TestChain(t *testing.T) {
	// a and b are merged into c (in another domain), which d replaces.
	// Written out of order so created_at alone would misorder them:
	// b is older than a.
	x := newFixture(t)
	b := x.put("b", "work", oneHot(1))
	a := x.put("a", "work", oneHot(0))
	c := x.supersede("c", "archive", mix(0, 1, 0.7), a, b)
	d := x.supersede("d", "archive", mix(0, 1, 0.6), c)
	unrelated := x.put("unrelated", "work", oneHot(4))
	want := []ID{b, a, c, d}

	for _, start := range []ID{a, b, c, d} {
		t.Run(fmt.Sprint("from ", x.get(start).Content), func(t *testing.T) {
			res, ok := x.f.Chain(x.tenant, start)
			if !ok {
				t.Fatal("not found")
			}
			assertIDs(t, "revisions", chainIDs(res), want)
			assertIDs(t, "heads", heads(res), []ID{d})
			if res.Truncated || len(res.Dangling) != 0 || res.Dangling == nil {
				t.Fatalf("truncated %v dangling %#v", res.Truncated, res.Dangling)
			}
		})
	}
	t.Run("single revision", func(t *testing.T) {
		res, ok := x.f.Chain(x.tenant, unrelated)
		if !ok || len(res.Revisions) != 1 || !res.Revisions[0].IsHead {
			t.Fatalf("%+v %v", res, ok)
		}
	})
	t.Run("dangling after a delete", func(t *testing.T) {
		x.deleteAtom(c)
		res, _ := x.f.Chain(x.tenant, a)
		assertIDs(t, "revisions", chainIDs(res), []ID{a})
		assertIDs(t, "dangling", res.Dangling, []ID{c})
		if res.Revisions[0].IsHead {
			t.Fatal("a revision whose successor was destroyed is a head")
		}
		res, _ = x.f.Chain(x.tenant, d)
		assertIDs(t, "from the head", chainIDs(res), []ID{d})
		assertIDs(t, "dangling", res.Dangling, []ID{c})
	})
}

func TestChainNotFound(t *testing.T) {
	x := newFixture(t)
	id := x.put("a", "d", oneHot(0))
	secret := x.secret("k", "d")
	for name, tc := range map[string]struct {
		tenant string
		id     ID
	}{
		"unknown ID":     {x.tenant, mkID(999)},
		"secret":         {x.tenant, secret},
		"another tenant": {"stranger", id},
	} {
		t.Run(name, func(t *testing.T) {
			res, ok := x.f.Chain(tc.tenant, tc.id)
			if ok || len(res.Revisions) != 0 {
				t.Fatalf("found %+v", res)
			}
		})
	}
}

func TestChainBudget(t *testing.T) {
	x := newFixture(t)
	revs := []ID{x.put("rev 0", "d", oneHot(0))}
	for i := 1; i < 100; i++ {
		revs = append(revs, x.supersede(fmt.Sprint("rev ", i), "d", oneHot(i%testDim), revs[i-1]))
	}
	tests := []struct {
		name      string
		start     int
		want      []ID
		truncated bool
	}{
		{"from the head", 99, revs[99-ChainBudget+1:], true},
		{"from the root", 0, revs[:ChainBudget], true},
		{"from the middle", 50, revs[50-ChainBudget/2 : 50+ChainBudget/2], true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, ok := x.f.Chain(x.tenant, revs[tc.start])
			if !ok {
				t.Fatal("not found")
			}
			if res.Truncated != tc.truncated || len(res.Revisions) != ChainBudget {
				t.Fatalf("truncated %v with %d revisions", res.Truncated, len(res.Revisions))
			}
			assertIDs(t, "revisions", chainIDs(res), tc.want)
		})
	}
	t.Run("exactly the budget is complete", func(t *testing.T) {
		y := newFixture(t)
		var prev ID
		for i := range ChainBudget {
			if i == 0 {
				prev = y.put("r", "d", oneHot(0))
				continue
			}
			prev = y.supersede("r", "d", oneHot(0), prev)
		}
		res, _ := y.f.Chain(y.tenant, prev)
		if res.Truncated || len(res.Revisions) != ChainBudget {
			t.Fatalf("truncated %v with %d revisions", res.Truncated, len(res.Revisions))
		}
	})
	t.Run("one past the budget is truncated", func(t *testing.T) {
		y := newFixture(t)
		var prev ID
		for i := range ChainBudget + 1 {
			if i == 0 {
				prev = y.put("r", "d", oneHot(0))
				continue
			}
			prev = y.supersede("r", "d", oneHot(0), prev)
		}
		res, _ := y.f.Chain(y.tenant, prev)
		if !res.Truncated || len(res.Revisions) != ChainBudget {
			t.Fatalf("truncated %v with %d revisions", res.Truncated, len(res.Revisions))
		}
	})
	t.Run("dangling misses count", func(t *testing.T) {
		// top replaces 32 atoms and mid; mid replaced 32 atoms that are
		// gone: 34 revisions + 32 misses overrun the 64 lookups.
		y := newFixture(t)
		group := func(prefix string) []ID {
			var ids []ID
			for i := range 32 {
				ids = append(ids, y.put(prefix, fmt.Sprint(prefix, i), oneHot(0)))
			}
			return ids
		}
		gone := group("gone")
		mid := y.supersede("mid", "d", oneHot(1), gone...)
		for _, id := range gone {
			y.deleteAtom(id)
		}
		top := y.supersede("top", "d", oneHot(2), append(group("kept"), mid)...)
		res, _ := y.f.Chain(y.tenant, top)
		if !res.Truncated || len(res.Revisions)+len(res.Dangling) != ChainBudget {
			t.Fatalf("truncated %v, %d revisions, %d dangling", res.Truncated, len(res.Revisions), len(res.Dangling))
		}
		res, _ = y.f.Chain(y.tenant, mid)
		if !res.Truncated || len(res.Revisions) != 32 || len(res.Dangling) != 32 {
			t.Fatalf("from mid: truncated %v, %d revisions, %d dangling", res.Truncated, len(res.Revisions), len(res.Dangling))
		}
	})
}
