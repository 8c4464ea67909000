package raftfsm

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand"
	"slices"
	"testing"
)

// applyDeleteDomainRef is applyDeleteDomain as it was before removeRows:
// each atom of the domain's rows went through remove, in row order. The
// reference the one-pass version must equal.
func (f *FSM) applyDeleteDomainRef(c *DeleteDomainCmd) *DeleteDomainResult {
	t := f.tenants[c.Tenant]
	var d *domainIndex
	if t != nil {
		d = t.domains[c.Domain]
	}
	if d == nil {
		return &DeleteDomainResult{Err: &ApplyError{Kind: ErrNotFound,
			Message: fmt.Sprintf("Domain %q not found", c.Domain)}}
	}
	victims := make([]*Atom, len(d.rows))
	copy(victims, d.rows)
	gone := make(map[ID]bool, len(victims))
	for _, a := range victims {
		gone[a.ID] = true
	}
	left := 0
	for _, a := range victims {
		for _, id := range a.Supersedes {
			if p := t.atoms[id]; p != nil && !gone[id] && p.SupersededBy == a.ID {
				left++
			}
		}
	}
	res := &DeleteDomainResult{Deleted: len(victims), SkippedSecrets: d.secrets, LeftHiddenCount: left}
	for _, a := range victims {
		t.remove(a, f.dim)
	}
	return res
}

// deleteFixture fills tenant org with n atoms over five domains: wipe
// (with secrets), bare (without), keep1 and keep2 (a secret in keep1) and
// vault (secrets only). Concepts are shared across domains (some named
// twice by an atom), fingerprints and external refs too; a quarter of the
// atoms replace one or two live atoms of any domain, so chains cross the
// domains; feedback gives valences of both signs (heavy rows), and
// consolidation makes prototypes in wipe and keep1.
func deleteFixture(t *testing.T, dim, n int, diskDir string) *FSM {
	t.Helper()
	f := New(dim)
	if diskDir != "" {
		f.DiskVectors(diskDir, n/4)
	}
	rng := rand.New(rand.NewSource(5))
	var idx uint64
	apply := func(c command) any {
		idx++
		return f.Apply(idx, c.Encode())
	}
	bases := make([][]float32, 40)
	for i := range bases {
		bases[i] = randomUnit(rng, dim)
	}
	domains := []string{"wipe", "wipe", "wipe", "bare", "keep1", "keep1", "keep2"}
	var live, all []ID
	k := 0
	item := func() WriteItem {
		k++
		it := WriteItem{ID: mkID(k), CreatedAt: baseTime + int64(k)*1000 - int64(rng.Intn(3000)),
			Content: fmt.Sprint("atom ", k), Domain: domains[rng.Intn(len(domains))]}
		v := slices.Clone(bases[rng.Intn(len(bases))])
		for i := range v {
			v[i] += float32(0.3 * rng.NormFloat64() / math.Sqrt(float64(dim)))
		}
		it.Vector = normalized(v)
		for range 1 + rng.Intn(6) {
			it.Concepts = append(it.Concepts, fmt.Sprint("c", rng.Intn(60)))
		}
		it.Concepts = append(it.Concepts, it.Domain+fmt.Sprint("-", rng.Intn(20)))
		if rng.Intn(10) == 0 {
			it.Concepts = append(it.Concepts, it.Concepts[0])
		}
		if rng.Intn(10) < 3 {
			it.Fingerprint = fmt.Sprint("fp", rng.Intn(40))
		}
		if rng.Intn(10) < 2 {
			it.ExternalRef = fmt.Sprint("ref", rng.Intn(200))
		}
		if rng.Intn(4) == 0 && len(live) > 2 {
			for range 1 + rng.Intn(2) {
				i := rng.Intn(len(live))
				if !slices.Contains(it.Supersedes, live[i]) {
					it.Supersedes = append(it.Supersedes, live[i])
				}
			}
		}
		return it
	}
	stored := func(res *WriteResults) {
		for _, r := range res.Results {
			if r.Stored {
				live = append(live, r.AtomID)
				all = append(all, r.AtomID)
			}
			for _, s := range r.Superseded {
				if i := slices.Index(live, s); i >= 0 {
					live = slices.Delete(live, i, i+1)
				}
			}
		}
	}
	for s, dom := range []string{"wipe", "wipe", "wipe", "wipe", "wipe", "vault", "vault", "vault", "keep1", "keep1"} {
		k++
		apply(&WriteCmd{Tenant: "org", Items: []WriteItem{{ID: mkID(k), CreatedAt: baseTime + int64(k)*1000,
			Content: fmt.Sprint("secret ", s), Domain: dom, Type: Secret, ExternalRef: fmt.Sprint("secret:s", s),
			Sealed: []byte("sealed"), Concepts: []string{"c1", "c2"}}}})
	}
	for len(all) < n {
		if rng.Intn(3) == 0 {
			stored(apply(&WriteCmd{Tenant: "org", Items: []WriteItem{item()}}).(*WriteResults))
			continue
		}
		// A batch's items replace nothing: a batch rejects replacements of
		// atoms of the same batch and of each other.
		c := &WriteCmd{Tenant: "org", Batch: true}
		for range 20 + rng.Intn(30) {
			it := item()
			it.Supersedes = nil
			c.Items = append(c.Items, it)
		}
		stored(apply(c).(*WriteResults))
	}
	for i := range 12 {
		ids := make([]ID, 60)
		for j := range ids {
			ids[j] = all[rng.Intn(len(all))]
		}
		apply(&FeedbackCmd{Tenant: "org", IDs: ids, Outcome: []float64{1, -0.6, 0.4}[i%3],
			Concepts: []string{"c1", "c7"}, QueryConcepts: []string{"c3", "wipe-1"}, At: baseTime + int64(k+i)*1000})
	}
	for i, dom := range []string{"wipe", "keep1"} {
		apply(&ConsolidateCmd{Tenant: "org", Domain: dom, At: baseTime + int64(k+100+i)*1000, BaseID: mkID(1<<30 + i<<20)})
	}
	return f
}

// TestDeleteDomainAsReference deletes domains from equal states through
// applyDeleteDomain, through the reference (applyDeleteDomainRef) and,
// for the first two, one atom at a time (DeleteAtomCmd, in row order):
// the results must be equal and the states too, snapshot bytes and every
// list's order (stateDump); so must the results and states of the writes,
// feedback, reads and deletes that follow, in domains deleted, left with
// their secrets and kept. A snapshot open across the first delete must
// still write the state it froze. Rows in blocks, with codes, and on disk.
func TestDeleteDomainAsReference(t *testing.T) {
	tests := []struct {
		name         string
		arena, coded int
		disk         bool
	}{
		{"one block", 8192, 1024, false},
		{"blocks and codes", 64, 128, false},
		{"rows on disk", 64, 128, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			withArenaRows(t, tc.arena)
			withCodedRows(t, tc.coded)
			const dim, n = 16, 3000
			build := func() *FSM {
				dir := ""
				if tc.disk {
					dir = t.TempDir()
				}
				return deleteFixture(t, dim, n, dir)
			}
			fast, ref, each := build(), build(), build()
			sameState(t, "fixtures", fast, ref)
			if on, _ := diskBlocks(fast); tc.disk != (on > 0) {
				t.Fatalf("%d blocks on disk", on)
			}
			// A snapshot held open across the first delete.
			before := fast.encodeState()
			write, err := fast.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			refWrite, _ := ref.Snapshot()
			idx := uint64(1 << 20)
			del := func(domain string, oneByOne bool) *DeleteDomainResult {
				t.Helper()
				idx++
				c := &DeleteDomainCmd{Tenant: "org", Domain: domain}
				var rows []ID
				if d := fast.tenants["org"].domains[domain]; d != nil {
					for _, a := range d.rows {
						rows = append(rows, a.ID)
					}
				}
				got := fast.Apply(idx, c.Encode()).(*DeleteDomainResult)
				want := applyRef(ref, func() *DeleteDomainResult { return ref.applyDeleteDomainRef(c) })
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("delete %s: %+v, want %+v", domain, got, want)
				}
				if got.Deleted != len(rows) {
					t.Fatalf("delete %s: %d deleted of %d rows", domain, got.Deleted, len(rows))
				}
				sameState(t, "delete "+domain, fast, ref)
				if !oneByOne {
					return got
				}
				for _, id := range rows {
					if r := each.Apply(idx, (&DeleteAtomCmd{Tenant: "org", ID: id}).Encode()).(*DeleteAtomResult); r.Deleted != 1 {
						t.Fatalf("delete %s one by one: %+v", id, r)
					}
				}
				sameState(t, "delete "+domain+" one atom at a time", fast, each)
				return got
			}
			wipe := fast.tenants["org"].domains["wipe"]
			if len(wipe.rows) < n/4 || wipe.secrets != 5 || len(wipe.heavy) == 0 {
				t.Fatalf("wipe: %d rows, %d secrets, %d heavy: the fixture tests little", len(wipe.rows), wipe.secrets, len(wipe.heavy))
			}
			protos := 0
			for _, a := range wipe.rows {
				if a.Type == Prototype {
					protos++
				}
			}
			if protos == 0 {
				t.Fatal("no prototypes in wipe: the fixture tests little")
			}
			if r := del("wipe", true); r.LeftHiddenCount == 0 || r.SkippedSecrets != 5 {
				t.Fatalf("delete wipe: %+v: the fixture tests little", r)
			}
			for _, w := range []func(io.Writer) error{write, refWrite} {
				var b bytes.Buffer
				if err := w(&b); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b.Bytes(), before) {
					t.Fatal("the snapshot open across the delete changed")
				}
			}
			del("bare", true)
			if _, ok := fast.tenants["org"].domains["bare"]; ok {
				t.Fatal("bare, without secrets, is still a domain")
			}
			if d := fast.tenants["org"].domains["wipe"]; d == nil || d.secrets != 5 || len(d.rows) != 0 {
				t.Fatalf("wipe after the delete: %+v", d)
			}
			// The same commands to the three states from here on.
			rng := rand.New(rand.NewSource(9))
			k := 1 << 25
			var ids []ID
			for _, a := range fast.tenants["org"].feed {
				ids = append(ids, a.ID)
			}
			then := func(c command) {
				t.Helper()
				idx++
				b := c.Encode()
				got, want := fast.Apply(idx, b), ref.Apply(idx, b)
				each.Apply(idx, b)
				if d := diffResult(got, want); d != "" {
					t.Fatalf("%T: %s", c, d)
				}
			}
			for i := range 300 {
				k++
				it := WriteItem{ID: mkID(k), CreatedAt: baseTime + int64(k)*1000, Content: fmt.Sprint("later ", k),
					Domain: []string{"wipe", "bare", "keep1", "keep2"}[i%4], Vector: randomUnit(rng, dim),
					Concepts: []string{fmt.Sprint("c", rng.Intn(60)), "wipe-3"}, Fingerprint: fmt.Sprint("fp", rng.Intn(40))}
				if i%7 == 0 {
					it.Supersedes = []ID{ids[rng.Intn(len(ids))]} // some are gone: 404
				}
				then(&WriteCmd{Tenant: "org", Items: []WriteItem{it}})
				ids = append(ids, it.ID)
			}
			then(&FeedbackCmd{Tenant: "org", IDs: ids[len(ids)-100:], Outcome: 1, Concepts: []string{"c2"},
				QueryConcepts: []string{"wipe-3"}, At: baseTime + int64(k+1)*1000})
			for q := range 30 {
				req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, dim), TopK: 10, MinRelevance: -1,
					Concepts: []string{fmt.Sprint("c", q), "wipe-3"}, IncludeAssociations: true,
					Diversity: 0.5 * float64(q%2), Fingerprint: fmt.Sprint("fp", q)}
				if q%3 == 0 {
					req.Domains = []string{"wipe", "bare"}
				}
				if d := diffItems(fast.Read(req).Items, ref.Read(req).Items); d != "" {
					t.Fatalf("read %d: %s", q, d)
				}
				if d := diffItems(fast.Read(req).Items, each.Read(req).Items); d != "" {
					t.Fatalf("read %d, deleted one by one: %s", q, d)
				}
			}
			sameState(t, "after the later commands", fast, ref)
			sameState(t, "after the later commands, deleted one by one", fast, each)
			del("keep2", false)
			del("wipe", false)
			del("vault", false)
			del("bare", false)
			del("nope", false)
			if on, _ := diskBlocks(fast); tc.disk && on == 0 {
				t.Fatal("no rows left on disk: the deletes freed every block")
			}
			for _, f := range []*FSM{fast, ref, each} {
				if v := f.vs.file; v != nil {
					on, _ := diskBlocks(f)
					if used := v.extents - int64(len(v.free)+len(v.retired)); used != int64(on) {
						t.Fatalf("%d extents in use, %d blocks on disk", used, on)
					}
				}
			}
		})
	}
}
