package raftfsm

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// feedFixture stores n atoms spread over domains a, b, c, alternating
// authors, with a secret after every fifth.
func feedFixture(t *testing.T, n int) (*fixture, []ID) {
	x := newFixture(t)
	rng := rand.New(rand.NewSource(1))
	var ids []ID
	for i := range n {
		it := x.item(fmt.Sprint("atom ", i), string(rune('a'+i%3)), randomUnit(rng, testDim))
		it.Provenance = &Provenance{Principal: []string{"alice", "bob"}[i%2]}
		ids = append(ids, x.store(it))
		if i%5 == 4 {
			x.secret(fmt.Sprint("s", i), "a")
		}
	}
	return x, ids
}

func reversed(ids []ID) []ID {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

func TestRecent(t *testing.T) {
	x, ids := feedFixture(t, 12)
	at := func(i int) *int64 { v := x.get(ids[i]).CreatedAt; return &v }
	replacement := x.supersede("replacement", "a", oneHot(0), ids[3])
	tests := []struct {
		name string
		req  RecentRequest
		want func() []ID
	}{
		{"newest first with limit", RecentRequest{Limit: 3}, func() []ID {
			return []ID{replacement, ids[11], ids[10]}
		}},
		{"since and until inclusive", RecentRequest{Limit: 100, Since: at(2), Until: at(5)}, func() []ID {
			return reversed(ids[2:6])
		}},
		{"exclude author", RecentRequest{Limit: 100, ExcludeAuthor: "alice", Until: at(6)}, func() []ID {
			return []ID{ids[5], ids[3], ids[1]}
		}},
		{"domains", RecentRequest{Limit: 100, Domains: []string{"b"}}, func() []ID {
			return []ID{ids[10], ids[7], ids[4], ids[1]}
		}},
		{"filtering on hides the replaced", RecentRequest{Limit: 100, HideReplaced: true, Since: at(2), Until: at(4)}, func() []ID {
			return []ID{ids[4], ids[2]}
		}},
		{"include_history shows it", RecentRequest{Limit: 100, HideReplaced: true, IncludeHistory: true, Since: at(2), Until: at(4)}, func() []ID {
			return []ID{ids[4], ids[3], ids[2]}
		}},
		{"filtering off shows it", RecentRequest{Limit: 100, Since: at(2), Until: at(4)}, func() []ID {
			return []ID{ids[4], ids[3], ids[2]}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Tenant = x.tenant
			got, _ := x.f.Recent(&tc.req)
			assertIDs(t, "items", atomIDs(got), tc.want())
		})
	}
	t.Run("secrets never appear", func(t *testing.T) {
		got, next := x.f.Recent(&RecentRequest{Tenant: x.tenant, Limit: 100})
		if next != nil || len(got) != 13 {
			t.Fatalf("%d items, next %v; want every non-secret atom", len(got), next)
		}
		for _, a := range got {
			if a.Type == Secret {
				t.Fatalf("secret %s in the feed", a.ID)
			}
		}
	})
	t.Run("unknown tenant", func(t *testing.T) {
		got, next := x.f.Recent(&RecentRequest{Tenant: "nobody", Limit: 5})
		if got == nil || len(got) != 0 || next != nil {
			t.Fatalf("got %v %v", got, next)
		}
	})
	t.Run("zero limit", func(t *testing.T) {
		got, next := x.f.Recent(&RecentRequest{Tenant: x.tenant})
		if len(got) != 0 || next != nil {
			t.Fatalf("got %d items, next %v", len(got), next)
		}
	})
}

// TestRecentWindowsMatchScan: pages of since/until windows, from the
// newest or from a cursor, equal a scan of the whole feed (Recent starts
// at until by binary search).
func TestRecentWindowsMatchScan(t *testing.T) {
	x, _ := feedFixture(t, 60)
	feed := slices.Clone(x.f.tenants[x.tenant].feed)
	slices.Reverse(feed) // newest first
	rng := rand.New(rand.NewSource(3))
	pick := func() *int64 {
		if rng.Intn(4) == 0 {
			return nil
		}
		v := feed[rng.Intn(len(feed))].CreatedAt + int64(rng.Intn(3)-1)
		return &v
	}
	for range 500 {
		req := RecentRequest{Tenant: x.tenant, Limit: 1 + rng.Intn(8), Since: pick(), Until: pick()}
		if rng.Intn(2) == 0 {
			a := feed[rng.Intn(len(feed))]
			req.Cursor = &Cursor{CreatedAt: a.CreatedAt, ID: a.ID}
		}
		var want []ID
		for _, a := range feed {
			switch {
			case a.Type == Secret,
				req.Since != nil && a.CreatedAt < *req.Since,
				req.Until != nil && a.CreatedAt > *req.Until,
				req.Cursor != nil && !feedLess(a, &Atom{CreatedAt: req.Cursor.CreatedAt, ID: req.Cursor.ID}):
				continue
			}
			want = append(want, a.ID)
		}
		got, next := x.f.Recent(&req)
		if len(want) > req.Limit {
			want = want[:req.Limit]
			if next == nil {
				t.Fatalf("%+v: no cursor with more to come", req)
			}
		}
		assertIDs(t, fmt.Sprintf("%+v", req), atomIDs(got), want)
	}
}

func TestRecentPaging(t *testing.T) {
	for _, limit := range []int{1, 3, 7, 100} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			x, ids := feedFixture(t, 40)
			rng := rand.New(rand.NewSource(int64(100 + limit)))
			var got []Atom
			var cur *Cursor
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatal("paging does not end")
				}
				page, next := x.f.Recent(&RecentRequest{Tenant: x.tenant, Limit: limit, Cursor: cur})
				if len(page) > limit {
					t.Fatalf("page of %d > limit %d", len(page), limit)
				}
				got = append(got, page...)
				// New atoms arrive between pages; they are newer than the walk.
				for range rng.Intn(3) {
					x.store(x.item("late", "a", randomUnit(rng, testDim)))
				}
				if next == nil {
					break
				}
				if last := page[len(page)-1]; next.CreatedAt != last.CreatedAt || next.ID != last.ID {
					t.Fatalf("cursor %+v is not the last item", next)
				}
				cur = next
			}
			assertIDs(t, "walk", atomIDs(got), reversed(ids))
			for i := 1; i < len(got); i++ {
				if !feedLess(&got[i], &got[i-1]) {
					t.Fatalf("item %d not strictly older than item %d", i, i-1)
				}
			}
		})
	}
}

func TestRecentCursorSurvivesDelete(t *testing.T) {
	x, ids := feedFixture(t, 10)
	page, next := x.f.Recent(&RecentRequest{Tenant: x.tenant, Limit: 4})
	assertIDs(t, "first page", atomIDs(page), reversed(ids[6:]))
	x.deleteAtom(ids[6]) // the cursor's own atom
	x.deleteAtom(ids[4])
	page, _ = x.f.Recent(&RecentRequest{Tenant: x.tenant, Limit: 100, Cursor: next})
	assertIDs(t, "rest", atomIDs(page), []ID{ids[5], ids[3], ids[2], ids[1], ids[0]})
}
