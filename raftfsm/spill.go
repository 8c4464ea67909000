package raftfsm

import "sync/atomic"

// Vectors on disk. Once a state has held many rows, the rows of every
// domain searched through codes live in a file (vecFile) instead of the
// heap: those searches read only the few rows they score exactly (a few
// hundred a search at a million rows, from the page cache), and the codes
// they scan stay in memory. A domain searched without codes keeps its rows
// in memory. Appends and deletes write single rows to the file; a restore
// fills blocks in memory and moves each once full (blockCoder), the last
// ones at the end (spillAll).

// vecStore is the policy and the file of one state's blocks on disk.
type vecStore struct {
	dir   string // where the file goes; "" keeps every row in memory
	above int    // rows of the state from which coded domains go to disk; 0: never
	dim   int
	rows  int      // rows of every domain, in memory and on disk
	file  *vecFile // nil until the first block goes to disk
	// spilling is set once the state held above rows (never cleared);
	// sweep asks the state to move the blocks it already has.
	spilling, sweep bool
	err             error     // the file could not be made: rows stay in memory
	open            openSnaps // snapshots sharing this state's rows and edge chunks
}

// openSnaps counts the snapshots that froze a state sharing its rows and
// edge chunks and are not yet written or dropped (snapHold): while none
// is, what a freeze marked shared needs no copy before a change.
type openSnaps struct{ n atomic.Int64 }

// any reports whether a snapshot may still read what a freeze marked
// shared; a nil count answers yes.
func (o *openSnaps) any() bool { return o == nil || o.n.Load() > 0 }

// fresh returns an empty store with the same policy, for a state that
// replaces this one (restore, reset).
func (vs *vecStore) fresh() *vecStore { return &vecStore{dir: vs.dir, above: vs.above, dim: vs.dim} }

// close lets go of the file: it closes once no snapshot reads it.
func (vs *vecStore) close() {
	if vs.file != nil {
		vs.file.drop()
		vs.file = nil
	}
}

// counted adds n rows to the state's count.
func (vs *vecStore) counted(n int) {
	vs.rows += n
	if !vs.spilling && vs.above > 0 && vs.dir != "" && vs.rows >= vs.above {
		vs.spilling, vs.sweep = true, true
	}
}

// block returns a fresh extent of the store's file, opening the file
// first; nil when it cannot be made.
func (vs *vecStore) block() *diskBlock {
	if vs.file == nil {
		if vs.err != nil {
			return nil
		}
		if vs.file, vs.err = openVecFile(vs.dir, vs.dim); vs.err != nil {
			return nil
		}
	}
	return vs.file.block(vs.dim)
}

// diskBlock is a block's extent in a vecFile; it reads rows for searches
// (vecmath.RowReader).
type diskBlock struct {
	file *vecFile
	ext  int64
	dim  int
}

func (v *vecFile) block(dim int) *diskBlock { return &diskBlock{file: v, ext: v.alloc(), dim: dim} }

// ReadRow copies row's vector into dst.
func (b *diskBlock) ReadRow(row int, dst []float32) { b.file.read(b.ext, row, b.dim, dst[:b.dim]) }

// read copies rows from row onwards into dst (whole rows).
func (b *diskBlock) read(row int, dst []float32) { b.file.read(b.ext, row, b.dim, dst) }

// write writes src (whole rows) to row onwards.
func (b *diskBlock) write(row int, src []float32) { b.file.write(b.ext, row, b.dim, src) }

func (b *diskBlock) free() { b.file.release(b.ext) }

// rows reads the block's first n rows into fresh memory.
func (b *diskBlock) rows(n int) []float32 {
	v := make([]float32, n*b.dim)
	b.read(0, v)
	return v
}

// free lets go of the block's extent, if it has one.
func (b *arenaBlock) free() {
	if b.disk != nil {
		b.disk.free()
		b.disk = nil
	}
}

// spill moves block k's rows to disk (they stay in memory if the file
// cannot be made).
func (d *domainIndex) spill(k, dim int) {
	b := &d.blocks[k]
	disk := d.vs.block()
	if disk == nil {
		return
	}
	disk.write(0, b.vecs[:d.blockRows(k)*dim])
	b.disk, b.vecs = disk, nil
}

// load brings the domain's blocks on disk back into memory.
func (d *domainIndex) load(dim int) {
	for k := range d.blocks {
		b := &d.blocks[k]
		if b.disk == nil {
			continue
		}
		b.vecs = b.disk.rows(d.blockRows(k))
		b.free()
	}
}

// sweepBytes bounds the rows one command moves to disk once the state has
// grown to spill (at least one block goes): moving every block inside the
// command that crossed the threshold held the write lock for two seconds at
// 262k rows (400 MB written in one apply), and writing 16 MiB takes 100 ms
// on a VM, so the writes happen under the read lock. A variable so tests
// can sweep in steps on small data.
var sweepBytes = 16 << 20

// spillAll moves every block of the tenants' coded domains to disk, once
// the state has grown to spill (vecStore.sweep): a restore's blocks.
func spillAll(vs *vecStore, tenants map[string]*tenant, dim int) {
	sweepCommit(sweepWrite(vs, tenants, dim, -1))
}

// sweepStep is a block the sweep wrote to disk, to be put there.
type sweepStep struct {
	b    *arenaBlock
	disk *diskBlock
}

// sweepWrite writes blocks of the tenants' coded domains still in memory to
// fresh extents, once the state has grown to spill, until about budget
// bytes have gone (all when budget < 0); the sweep ends once none is left
// in memory. It only reads the state: Apply runs it under the read lock,
// searches going on, and sweepCommit puts the blocks on disk under the
// write lock before the command changes anything. Where rows live changes
// no result, so the order blocks go in does not matter.
func sweepWrite(vs *vecStore, tenants map[string]*tenant, dim, budget int) []sweepStep {
	if !vs.sweep {
		return nil
	}
	var steps []sweepStep
	moved := 0
	for _, t := range tenants {
		for _, d := range t.domains {
			if !d.coded() {
				continue
			}
			for k := range d.blocks {
				b := &d.blocks[k]
				if b.disk != nil {
					continue
				}
				if budget >= 0 && moved >= budget {
					return steps // more to move: the next command goes on
				}
				disk := vs.block()
				if disk == nil {
					vs.sweep = false // no file: the rows stay in memory
					return steps
				}
				n := d.blockRows(k) * dim
				disk.write(0, b.vecs[:n])
				steps = append(steps, sweepStep{b, disk})
				moved += n * 4
			}
		}
	}
	vs.sweep = false
	return steps
}

// sweepCommit puts the blocks sweepWrite wrote on disk, on the state it
// read.
func sweepCommit(steps []sweepStep) {
	for _, s := range steps {
		s.b.disk, s.b.vecs = s.disk, nil
	}
}
