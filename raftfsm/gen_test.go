package raftfsm

import (
	"fmt"
	"math"
	"math/rand"
)

// command is any command the FSM applies.
type command interface{ Encode() []byte }

// gen produces random but valid command sequences over a small space of
// tenants, domains, vectors, refs and concepts, so that duplicates,
// supersede conflicts, ref collisions and deletes of live chains all occur.
type gen struct {
	rng     *rand.Rand
	dim     int
	n       int
	now     int64
	tenants []string
	domains []string
	bases   [][]float32
	ids     []ID // every ID handed out, stored or not, of every tenant
	secrets map[string]ID
}

func newGen(seed int64, dim int) *gen {
	g := &gen{rng: rand.New(rand.NewSource(seed)), dim: dim, now: baseTime,
		tenants: []string{"t1", "t2"}, domains: []string{"a", "b", "c"}, secrets: map[string]ID{}}
	for range 5 {
		g.bases = append(g.bases, randomUnit(g.rng, dim))
	}
	return g
}

func (g *gen) pick(s []string) string { return s[g.rng.Intn(len(s))] }

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

func (g *gen) id() ID {
	g.n++
	id := mkID(g.n)
	g.ids = append(g.ids, id)
	return id
}

// someID returns a handed-out ID, or now and then one never used.
func (g *gen) someID() ID {
	if len(g.ids) == 0 || g.chance(0.05) {
		return mkID(1_000_000 + g.rng.Intn(1000))
	}
	// Prefer recent IDs: they are more likely to be live.
	n := min(len(g.ids), 30)
	return g.ids[len(g.ids)-1-g.rng.Intn(n)]
}

func (g *gen) someIDs(max int) []ID {
	n := 1 + g.rng.Intn(max)
	out := make([]ID, n)
	for i := range out {
		out[i] = g.someID()
	}
	return out
}

func (g *gen) vector() []float32 {
	b := g.bases[g.rng.Intn(len(g.bases))]
	switch r := g.rng.Float64(); {
	case r < 0.3:
		return append([]float32(nil), b...) // an exact duplicate of a base
	case r < 0.7:
		v := make([]float32, g.dim)
		for i := range v {
			v[i] = b[i] + float32(g.rng.NormFloat64()*0.05)
		}
		return normalized(v)
	default:
		return randomUnit(g.rng, g.dim)
	}
}

func normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

func (g *gen) concepts() []string {
	var out []string
	for range g.rng.Intn(4) {
		out = append(out, fmt.Sprint("c", g.rng.Intn(8)))
	}
	return out
}

func (g *gen) tick() int64 {
	g.now += int64(g.rng.Intn(1000)) - 100 // routers' clocks may step back
	return g.now
}

func (g *gen) item(supersede bool) WriteItem {
	it := WriteItem{ID: g.id(), CreatedAt: g.tick(), Content: fmt.Sprint("content ", g.n),
		Domain: g.pick(g.domains), Concepts: g.concepts()}
	if g.chance(0.15) {
		it.Type, it.ExternalRef = Secret, fmt.Sprint("secret:s", g.rng.Intn(3))
		it.Sealed = []byte(fmt.Sprint("sealed ", g.n))
		// A router reseals for the alias's existing ID; a concurrent first
		// store may still race with another ID.
		if id, ok := g.secrets[it.ExternalRef]; ok && g.chance(0.7) {
			it.ID = id
		} else if !ok {
			g.secrets[it.ExternalRef] = it.ID
		}
		return it
	}
	it.Vector = g.vector()
	it.Type = AtomType(g.rng.Intn(3))
	if g.chance(0.3) {
		it.Fingerprint = fmt.Sprint("fp", g.rng.Intn(3))
	}
	if g.chance(0.2) {
		it.ExternalRef = fmt.Sprint("ref", g.rng.Intn(6))
	}
	if g.chance(0.3) {
		it.Metadata = []byte(fmt.Sprintf(`{"n":%d,"tag":"t%d"}`, g.n, g.rng.Intn(3)))
	}
	if g.chance(0.3) {
		it.Provenance = &Provenance{Principal: g.pick([]string{"alice", "bob"}), Agent: "agent",
			ClientEnv: "cli", IsExternal: g.chance(0.5), RecordedAt: g.now}
	}
	if supersede {
		it.Supersedes = g.someIDs(3)
	}
	return it
}

func (g *gen) command() command {
	tenant := g.pick(g.tenants)
	switch r := g.rng.Float64(); {
	case r < 0.5:
		return &WriteCmd{Tenant: tenant, Items: []WriteItem{g.item(g.chance(0.35))}}
	case r < 0.6:
		c := &WriteCmd{Tenant: tenant, Batch: true}
		for range 1 + g.rng.Intn(5) {
			c.Items = append(c.Items, g.item(g.chance(0.1)))
		}
		return c
	case r < 0.72:
		return &FeedbackCmd{Tenant: tenant, IDs: g.someIDs(3), Outcome: g.rng.Float64()*2.4 - 1.2,
			Concepts: g.concepts(), QueryConcepts: g.concepts(), At: g.tick()}
	case r < 0.82:
		return &TouchCmd{Tenant: tenant, IDs: g.someIDs(4), At: g.tick()}
	case r < 0.96:
		id := g.someID()
		if g.chance(0.1) && len(g.secrets) > 0 {
			id = g.secrets[fmt.Sprint("secret:s", g.rng.Intn(3))]
		}
		return &DeleteAtomCmd{Tenant: tenant, ID: id}
	case g.chance(0.9):
		return &DeleteDomainCmd{Tenant: tenant, Domain: g.pick(append(g.domains, "none"))}
	default:
		return &ResetCmd{}
	}
}
