package raftfsm

import (
	"fmt"
	"math/rand"
	"testing"
)

// BenchmarkDeleteDomain deletes a domain of 5k, 20k and 80k atoms from a
// tenant that also holds a quarter as many in another domain, every atom
// with three of 64 shared concepts, through applyDeleteDomain and through
// the reference it replaced (one remove per atom). Each delete starts from
// a restored copy of the same state, outside the timer.
func BenchmarkDeleteDomain(b *testing.B) {
	const dim = 16
	for _, n := range []int{5_000, 20_000, 80_000} {
		f := New(dim)
		rng := rand.New(rand.NewSource(1))
		k := 0
		for k < n+n/4 {
			c := &WriteCmd{Tenant: "org", Batch: true}
			for range 1000 {
				k++
				dom := "d"
				if k > n {
					dom = "other"
				}
				c.Items = append(c.Items, WriteItem{ID: mkID(k), CreatedAt: baseTime + int64(k), Content: fmt.Sprint("atom ", k),
					Domain: dom, Vector: randomUnit(rng, dim), Fingerprint: fmt.Sprint("fp", k%100),
					Concepts: []string{fmt.Sprint("c", rng.Intn(64)), fmt.Sprint("c", rng.Intn(64)), fmt.Sprint("c", rng.Intn(64))}})
			}
			f.Apply(uint64(k), c.Encode())
		}
		snap := snapshotBytes(b, f)
		cmd := &DeleteDomainCmd{Tenant: "org", Domain: "d"}
		for _, ref := range []bool{false, true} {
			name := fmt.Sprint("atoms=", n)
			if ref {
				name = "ref/" + name
			}
			b.Run(name, func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					g := restored(b, snap, dim)
					b.StartTimer()
					if ref {
						g.applyDeleteDomainRef(cmd)
					} else {
						g.applyDeleteDomain(cmd)
					}
				}
			})
		}
	}
}

// BenchmarkDeleteDomainOfMany deletes one of 20 domains of 5k atoms, every
// atom with 10 of 1,000 concepts shared by the whole tenant, so the
// concepts' postings hold the other 95k atoms too.
func BenchmarkDeleteDomainOfMany(b *testing.B) {
	const dim, domains, per = 16, 20, 5_000
	f := New(dim)
	rng := rand.New(rand.NewSource(1))
	for k := 0; k < domains*per; {
		c := &WriteCmd{Tenant: "org", Batch: true}
		for range 1000 {
			k++
			it := WriteItem{ID: mkID(k), CreatedAt: baseTime + int64(k), Content: fmt.Sprint("atom ", k),
				Domain: fmt.Sprint("d", k%domains), Vector: randomUnit(rng, dim)}
			for range 10 {
				it.Concepts = append(it.Concepts, fmt.Sprint("c", int(1000*rng.Float64()*rng.Float64())))
			}
			c.Items = append(c.Items, it)
		}
		f.Apply(uint64(k), c.Encode())
	}
	snap := snapshotBytes(b, f)
	cmd := &DeleteDomainCmd{Tenant: "org", Domain: "d7"}
	for _, ref := range []bool{false, true} {
		name := "new"
		if ref {
			name = "ref"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				g := restored(b, snap, dim)
				b.StartTimer()
				if ref {
					g.applyDeleteDomainRef(cmd)
				} else {
					g.applyDeleteDomain(cmd)
				}
			}
		})
	}
}
