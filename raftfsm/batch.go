package raftfsm

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hebbdb/hebb/vecmath"
)

// batchable reports whether a write command takes writeBatch's path: at
// least two items, none with a supersede to honour (a supersede changes
// which rows later items' gates skip), every vector of the group's
// dimension (a wrong one panics at its item, in item order, on the
// item-by-item path).
func (f *FSM) batchable(c *WriteCmd) bool {
	if len(c.Items) < 2 {
		return false
	}
	for i := range c.Items {
		it := &c.Items[i]
		if !c.Batch && len(it.Supersedes) > 0 || it.Type != Secret && len(it.Vector) != f.dim {
			return false
		}
	}
	return true
}

// writeBatch applies the items of a batchable command. An item's gate
// looks at the rows its domain held before the command and at the rows
// the command stored before it, so the two parts are split: the gates
// against the rows held before run first, on up to GOMAXPROCS goroutines
// (this one included), while this goroutine takes the items in order,
// completes each gate with the command's earlier stored rows of its domain
// (exactly, with the reference kernel) and refuses or stores the item,
// while another goroutine adds each stored atom's edges. The new rows
// reach the arenas once every gate is done, since the gates read them.
// Both paths find the exact nearest live tip (reference-kernel cosine,
// lowest ID among equals) unless a search misses it (an estimate outside
// its bound, or the nearest row outside the exact gate's gateRecheck best
// SIMD scores), so item for item, results and state equal the item-by-item
// path's (TestBatchMatchesItemByItem); every replica takes the same path.
//
// pre, when not nil, is this command's batch gate with every gate against
// the pre-batch rows already run (pregate, under the read lock).
func (f *FSM) writeBatch(t *tenant, items []WriteItem, out []WriteResult, pre *batchGate) {
	b := pre
	if b == nil {
		b = newBatchGate(f.dim, t, items)
		b.start()
	}
	b.growBlocks()
	t.edges.adopt(b.edges)
	b.edges = nil
	g := getGate(f.dim)
	type row struct {
		d   *domainIndex
		a   *Atom
		vec []float32
		rc  *vecmath.RowCode // its codes encoded ahead; nil when not
	}
	rows := make([]row, 0, len(items))
	// The stored atoms' edges are added on another goroutine as the items
	// are stored, in item order: they share nothing with the rest of the
	// store but the concept table, which every item's concepts enter first,
	// so that indexing an atom only reads it.
	for i := range items {
		t.edges.concepts.internAll(items[i].Concepts)
	}
	stored := make(chan *Atom, len(items))
	var edges sync.WaitGroup
	edges.Go(func() {
		for a := range stored {
			t.edges.coactivateWithin(a.Concepts, a.CreatedAt)
		}
	})
	for i := range items {
		it := &items[i]
		if r, ok := existingRef(t, it); ok {
			out[i] = r
			continue
		}
		if it.Type == Secret {
			out[i] = f.writeSecret(t, it)
			continue
		}
		b.wait(i, g)
		near, cos := b.nearest(i)
		importance, ok := gateVerdict(near, cos)
		if !ok {
			out[i] = duplicateResult(near)
			continue
		}
		a := f.newAtom(t, it, importance, nil)
		d := t.index(a)
		stored <- a
		b.stored[i] = a
		rows = append(rows, row{d, a, it.Vector, b.rowCode(i)})
		out[i] = WriteResult{Stored: true, AtomID: a.ID, Importance: importance, Reason: reasonStoredText, Superseded: []ID{}}
	}
	close(stored)
	b.wg.Wait()
	putGate(g)
	for _, r := range rows {
		r.d.add(r.a, r.vec, r.rc)
	}
	edges.Wait()
}

// batchGate holds a batch's gates: each item's nearest live tip among the
// rows of its domain as the command found them (computed by whichever
// goroutine claims the item), and what completing them with the command's
// own rows needs.
type batchGate struct {
	dim   int
	items []WriteItem
	pre   []*domainIndex // per item: its domain as the command found it; nil for secrets
	near  []*Atom        // per item: nearest live tip among pre's rows, nil when none
	cos   []float32
	split bool // fewer items than cores: each search may spread over cores
	// The command's items grouped by domain, in item order.
	group   []int32            // per item: its group, -1 for secrets
	pos     []int32            // per item: its place in its group
	members [][]int32          // per group: its items
	norm    []float32          // per item: |vector|
	codes   []*vecmath.RowCode // per item: its row's codes when its domain keeps codes (encode)
	dots    [][]float32        // per item: SIMD dots with the items before it in its group
	stored  []*Atom            // per item: the atom stored for it (the applying goroutine's)
	grown   []grownBlock       // blocks with room made for the command's rows (reserve)
	edges   []chunkCopy        // copies of the edge chunks a snapshot shares that the command changes

	// order is the order items are claimed in: domain by domain, so that
	// consecutive gates scan the same codes, still in a core's caches
	// (items in command order jump between domains); secrets last.
	order []int32
	next  atomic.Int64 // the next place in order to claim
	done  []atomic.Bool
	mu    sync.Mutex
	cond  sync.Cond
	wg    sync.WaitGroup
}

// pregate runs the gates of a batchable command against the rows its
// tenant holds before it, on every core, and returns them for writeBatch;
// nil when the tenant does not exist yet (nothing to gate against). It only
// reads the state: the caller holds the read lock.
func (f *FSM) pregate(c *WriteCmd) *batchGate {
	t := f.tenants[c.Tenant]
	if t == nil {
		return nil
	}
	b := newBatchGate(f.dim, t, c.Items)
	b.start()
	g := getGate(f.dim)
	for b.claim(g) {
		runtime.Gosched()
	}
	putGate(g)
	b.wg.Wait()
	b.reserve()
	b.edges = t.edges.copyShared(b.conceptLists())
	return b
}

// conceptLists returns the concepts of the items that may store an atom.
func (b *batchGate) conceptLists() [][]string {
	lists := make([][]string, 0, len(b.items))
	for i := range b.items {
		if b.group[i] >= 0 {
			lists = append(lists, b.items[i].Concepts)
		}
	}
	return lists
}

// grownBlock is a domain's last block and a copy of its rows with room for
// the rows a command may add to it.
type grownBlock struct {
	blk   *arenaBlock
	from  []float32 // the rows copied
	vecs  []float32
	codes *vecmath.Codes // the block's codes with room for as many rows; nil without
}

// reserve copies, under the read lock, the last in-memory block of each of
// the command's domains that its rows would make grow, and its codes, into
// ones with room for them; growBlocks puts them in place under the write
// lock. Growing a block copies up to 6 MiB and faults in up to 12 MiB of
// fresh memory, and the domains of a tenant written evenly all grow in the
// same batch, which held the write lock, and every search, for 100-500 ms.
func (b *batchGate) reserve() {
	for _, m := range b.members {
		d := b.pre[m[0]]
		if d == nil || len(d.blocks) == 0 {
			continue
		}
		k := len(d.blocks) - 1
		blk := &d.blocks[k]
		n := min(len(m), arenaRows-d.blockRows(k)) * b.dim // at most; refused items add none
		if blk.disk != nil || n == 0 || len(blk.vecs)+n <= cap(blk.vecs) {
			continue
		}
		g := grownBlock{blk: blk, from: blk.vecs, vecs: grownRows(blk.vecs, len(blk.vecs)+n, b.dim)}
		if blk.codes != nil {
			g.codes = blk.codes.Grown(cap(g.vecs) / b.dim) // add reserves as much
		}
		b.grown = append(b.grown, g)
	}
}

// growBlocks puts the blocks reserve grew in place. Apply runs one command
// at a time, so each block is as reserve read it; one that is not keeps
// its rows (they grow as they are added).
func (b *batchGate) growBlocks() {
	for _, g := range b.grown {
		if len(g.blk.vecs) == len(g.from) && cap(g.blk.vecs) == cap(g.from) {
			g.blk.vecs = g.vecs
			if g.codes != nil && g.blk.codes != nil && g.blk.codes.Len() == g.codes.Len() {
				g.blk.codes = g.codes
			}
		}
	}
	b.grown = nil
}

func newBatchGate(dim int, t *tenant, items []WriteItem) *batchGate {
	n := len(items)
	b := &batchGate{dim: dim, items: items, pre: make([]*domainIndex, n), near: make([]*Atom, n),
		cos: make([]float32, n), split: n < runtime.GOMAXPROCS(0), group: make([]int32, n),
		pos: make([]int32, n), norm: make([]float32, n), dots: make([][]float32, n),
		stored: make([]*Atom, n), done: make([]atomic.Bool, n)}
	b.cond.L = &b.mu
	groups := make(map[string]int32)
	pairs := 0
	for i := range items {
		it := &items[i]
		if it.Type == Secret {
			b.group[i] = -1
			continue
		}
		b.pre[i] = t.domains[it.Domain]
		gi, ok := groups[it.Domain]
		if !ok {
			gi = int32(len(b.members))
			groups[it.Domain] = gi
			b.members = append(b.members, nil)
		}
		b.group[i], b.pos[i] = gi, int32(len(b.members[gi]))
		b.members[gi] = append(b.members[gi], int32(i))
		pairs += int(b.pos[i])
		b.norm[i] = float32(math.Sqrt(float64(vecmath.DotFixed(it.Vector, it.Vector))))
	}
	b.placeCodes(dim)
	flat := make([]float32, pairs)
	for i := range items {
		p := b.pos[i]
		b.dots[i], flat = flat[:p:p], flat[p:]
	}
	b.order = make([]int32, 0, n)
	for _, m := range b.members {
		b.order = append(b.order, m...)
	}
	for i := range items {
		if b.group[i] < 0 {
			b.order = append(b.order, int32(i))
		}
	}
	return b
}

// start launches the helper goroutines: one fewer than GOMAXPROCS, as the
// applying goroutine gates items too while it waits. Gating goroutines
// yield after each item (runtime.Gosched): a batch's gates keep every core
// busy for tens of milliseconds, and a search arriving meanwhile waited for
// the scheduler to preempt one (hebb bench: searches beside 500-item batch
// writes took 6 ms at the median inside the server, 2.6 ms with the yield).
func (b *batchGate) start() {
	for range min(runtime.GOMAXPROCS(0), len(b.items)) - 1 {
		b.wg.Go(func() {
			g := getGate(b.dim)
			defer putGate(g)
			for b.claim(g) {
				runtime.Gosched()
			}
		})
	}
}

// claim gates the next unclaimed item; false when none is left.
func (b *batchGate) claim(g *gate) bool {
	k := int(b.next.Add(1) - 1)
	if k >= len(b.order) {
		return false
	}
	i := int(b.order[k])
	if gi := b.group[i]; gi >= 0 {
		vec := b.items[i].Vector
		b.near[i], b.cos[i] = g.nearest(b.pre[i], vec, nil, b.split)
		b.encode(i)
		for p, j := range b.members[gi][:b.pos[i]] {
			b.dots[i][p] = vecmath.Dot(vec, b.items[j].Vector)
		}
	}
	b.done[i].Store(true)
	b.mu.Lock()
	b.cond.Broadcast()
	b.mu.Unlock()
	return true
}

// placeCodes gives each item whose domain keeps codes room for its row's
// codes, in one allocation.
func (b *batchGate) placeCodes(dim int) {
	q := quantizer(dim)
	var coded []int
	for i, d := range b.pre {
		if d != nil && d.hasCodes() {
			coded = append(coded, i)
		}
	}
	if len(coded) == 0 {
		return
	}
	size := q.RowCodeBytes()
	mem, codes := make([]byte, len(coded)*size), make([]vecmath.RowCode, len(coded))
	b.codes = make([]*vecmath.RowCode, len(b.pre))
	for k, i := range coded {
		codes[k] = q.RowCodeIn(mem[k*size : (k+1)*size])
		b.codes[i] = &codes[k]
	}
}

// encode encodes item i's row when placeCodes gave it room: the rows a
// batch stores into coded domains are encoded beside the gates, on every
// core and under the read lock, rather than one by one under the write
// lock (a 500-item batch's store held it ~14 ms, ~3 ms of that encoding).
func (b *batchGate) encode(i int) {
	if rc := b.rowCode(i); rc != nil {
		quantizer(b.dim).EncodeRow(b.items[i].Vector, rc)
	}
}

// rowCode returns the room placeCodes gave item i's row codes (encoded
// once the item is gated), nil when there is none.
func (b *batchGate) rowCode(i int) *vecmath.RowCode {
	if b.codes == nil {
		return nil
	}
	return b.codes[i]
}

// wait returns once item i is gated, gating unclaimed items meanwhile.
func (b *batchGate) wait(i int, g *gate) {
	for !b.done[i].Load() {
		if b.claim(g) {
			continue
		}
		b.mu.Lock()
		for !b.done[i].Load() {
			b.cond.Wait()
		}
		b.mu.Unlock()
	}
}

// nearest completes item i's gate with the items stored before it in its
// group: the nearest live tip among the rows its domain held before the
// command and those, by the reference kernel's cosine, the lowest ID among
// equals — what the item-by-item gate finds in the domain as it is then.
// A stored item is re-scored exactly unless its SIMD dot is more than the
// SIMD kernel's error bound below the best cosine so far.
func (b *batchGate) nearest(i int) (*Atom, float32) {
	near, cos := b.near[i], b.cos[i]
	vec := b.items[i].Vector
	for p, j := range b.members[b.group[i]][:b.pos[i]] {
		a := b.stored[j]
		if a == nil {
			continue
		}
		if near != nil && float64(b.dots[i][p]) < float64(cos)-dotSlack(b.dim, b.norm[i], b.norm[j]) {
			continue // NaN dots and slacks fail the comparison: re-scored
		}
		c := vecmath.DotFixed(vec, b.items[j].Vector)
		if c != c {
			continue
		}
		if near == nil || c > cos || c == cos && compareID(a.ID, near.ID) < 0 {
			near, cos = a, c
		}
	}
	return near, cos
}

// dotSlack bounds how far a SIMD dot product of vectors of lengths na and
// nb may lie from the reference kernel's: float32 accumulation errs by at
// most about (terms summed in a row)·2⁻²⁴·Σ|aᵢbᵢ| ≤ dim·2⁻²⁴·|a||b|; this
// allows four times that, and an absolute floor for subnormal products.
func dotSlack(dim int, na, nb float32) float64 {
	return float64(dim+16)*0x1p-22*float64(na)*float64(nb) + 1e-30
}
