package raftfsm

import (
	"sync"

	"github.com/hebbdb/hebb/vecmath"
)

// blockCoder takes, during a restore, each block that fills in a domain
// searched through codes: on a goroutine of its own it builds the block's
// codes from its rows in memory and, when the state spills, writes the rows
// to the block's extent and hands their memory back for a later block of
// the restore. Decoding the snapshot goes on meanwhile on the restoring
// goroutine. Without it the codes of every block were built after the last
// atom was read (the rows of a block on disk read back first), and each
// block spilled grew from nothing by doubling, its fresh pages faulted in.
//
// The coder touches only its jobs; the restoring goroutine puts what they
// made in place (finish) once the coder is done. Until then a block spilled
// keeps its slice of memory another block may reuse: nothing reads a
// block's rows before the restore is over.
type blockCoder struct {
	dim    int
	jobs   chan *coderJob
	free   chan []float32 // rows of blocks written to disk, for reuse
	spare  chan []float32 // staging buffers the coder is done with
	done   []*coderJob
	stages map[*domainIndex]*stage
	staged []*stage // every block staged, to put in place (finish)
	wg     sync.WaitGroup
}

// coderJob is block k of d, full, with its rows; codes and (when disk is
// set) the rows on disk are what the coder makes of it. A staged job
// (chunk set) is instead rows of a staged block from block row from on: the
// coder appends their codes to codes and writes them to disk.
type coderJob struct {
	d     *domainIndex
	k     int
	vecs  []float32
	disk  *diskBlock // the block's extent when the state spills; nil keeps it in memory
	codes *vecmath.Codes
	chunk bool
	from  int
}

// stage is a block of a domain whose rows go to disk as they are read
// (blockCoder.add): its extent and codes, and the rows read since the last
// chunk went to the coder, from block row from on.
type stage struct {
	d     *domainIndex
	k     int
	disk  *diskBlock
	codes *vecmath.Codes
	from  int
	buf   []float32
}

// stageRows is how many rows a staged block gathers before they go to the
// coder (384 KiB at d=384); a variable so tests can stage in small steps.
var stageRows = 256

// coderQueue is how many jobs wait for the coder before the restoring
// goroutine waits for it. A full block's rows are the block's own (no
// copy), and a staged chunk is 384 KiB at d=384: the queue costs at most
// 12 MiB of chunks. With two, the restoring goroutine waited for the
// coder 5.5 s of a 25 s restore (1M atoms, 100 domains): the coder, the
// collector and the restore share two cores, and a coder short of one
// for a moment stopped the restore, leaving cores idle later.
const coderQueue = 32

// freeBlocks is how many whole blocks' rows (12 MiB each) wait for reuse.
const freeBlocks = 3

func newBlockCoder(dim int) *blockCoder {
	return &blockCoder{dim: dim, free: make(chan []float32, freeBlocks),
		spare: make(chan []float32, coderQueue+1), stages: make(map[*domainIndex]*stage)}
}

// add puts a's row (vec) in d, left rows of the tenant still to read
// (this one included). Once the state spills, a domain searched through
// codes has its rows staged: they go to disk, and their codes are built,
// a chunk at a time on the coder's goroutine, instead of filling a block
// in memory first. Domains written in turn (a tenant's atoms interleave
// them) filled their blocks together: at a million atoms over 100
// domains, the restore held 1.2 GB of rows waiting for their blocks to
// fill, besides what they had doubled from, and the heap peaked at twice
// its size once ready.
func (c *blockCoder) add(d *domainIndex, a *Atom, vec []float32, left int) {
	if d.vs.spilling && d.coded() && c.stage(d, a, vec, left) {
		return
	}
	c.room(d, left)
	c.filled(d, d.addRow(a, vec))
}

// stage adds a's row to d's staged block, staging the block first when
// the row is its first or the domain's first since it was staged (the
// rows it holds in memory are its first chunk then). It reports false,
// adding nothing, when no extent can be had.
func (c *blockCoder) stage(d *domainIndex, a *Atom, vec []float32, left int) bool {
	k := len(d.rows) / arenaRows
	s := c.stages[d]
	if s == nil || s.k != k {
		if s != nil {
			c.flush(s) // not reached: a block's stage ends when it fills
		}
		disk := d.vs.block()
		if disk == nil {
			return false
		}
		s = &stage{d: d, k: k, disk: disk, codes: vecmath.NewCodes(quantizer(c.dim))}
		held := len(d.rows) % arenaRows // rows of block k in memory
		s.codes.Reserve(min(arenaRows, held+left))
		if k < len(d.blocks) {
			s.buf, d.blocks[k].vecs = d.blocks[k].vecs, nil
		} else {
			s.buf = c.stageBuf()
		}
		c.stages[d] = s
		c.staged = append(c.staged, s)
	}
	i, _ := d.addAtom(a, c.dim)
	d.vs.counted(1)
	s.buf = append(s.buf, vec...)
	if full := (i+1)%arenaRows == 0; full || len(s.buf) >= stageRows*c.dim {
		c.flush(s)
		if full {
			delete(c.stages, d)
		}
	}
	return true
}

// flush sends a stage's rows to the coder.
func (c *blockCoder) flush(s *stage) {
	if len(s.buf) == 0 {
		return
	}
	c.send(&coderJob{d: s.d, k: s.k, vecs: s.buf, disk: s.disk, codes: s.codes, chunk: true, from: s.from})
	s.from += len(s.buf) / c.dim
	s.buf = c.stageBuf()
}

// stageBuf returns an empty staging buffer: one the coder is done with,
// or fresh.
func (c *blockCoder) stageBuf() []float32 { return c.take(c.spare, stageRows) }

// take returns empty room for rows rows from pool, or fresh.
func (c *blockCoder) take(pool chan []float32, rows int) []float32 {
	select {
	case b := <-pool:
		return b
	default:
		return make([]float32, 0, rows*c.dim)
	}
}

// send queues a job, starting the coder with the first.
func (c *blockCoder) send(job *coderJob) {
	if c.jobs == nil {
		c.jobs = make(chan *coderJob, coderQueue)
		c.wg.Go(c.run)
	}
	c.jobs <- job
}

// filled is called after a row went to block k of d: a full block of a
// coded domain goes to the coder.
func (c *blockCoder) filled(d *domainIndex, k int) {
	b := &d.blocks[k]
	if d.blockRows(k) != arenaRows || !d.coded() || d.hasCodes() || b.disk != nil || b.codes != nil {
		return
	}
	job := &coderJob{d: d, k: k, vecs: b.vecs}
	if d.vs.spilling {
		job.disk = d.vs.block() // nil when the file cannot be made: it stays in memory
	}
	c.done = append(c.done, job)
	c.send(job)
}

func (c *blockCoder) run() {
	for job := range c.jobs {
		if job.chunk {
			c.runChunk(job)
			continue
		}
		job.codes = vecmath.NewCodes(quantizer(c.dim))
		job.codes.Reserve(arenaRows)
		for j := range arenaRows {
			job.codes.Append(job.vecs[j*c.dim : (j+1)*c.dim])
		}
		if job.disk != nil {
			job.disk.write(0, job.vecs)
			select {
			case c.free <- job.vecs[:0]:
			default:
			}
		}
	}
}

// runChunk codes a staged chunk's rows and writes them to disk, then hands
// its memory back: to the stages, or to blocks started whole (room) when
// it was one.
func (c *blockCoder) runChunk(job *coderJob) {
	for j := 0; j < len(job.vecs); j += c.dim {
		job.codes.Append(job.vecs[j : j+c.dim])
	}
	job.disk.write(job.from, job.vecs)
	back := c.spare
	switch cap(job.vecs) {
	case stageRows * c.dim:
	case arenaRows * c.dim:
		back = c.free
	default:
		return
	}
	select {
	case back <- job.vecs[:0]:
	default:
	}
}

// room is called before a row goes to d, with left rows of the tenant
// still to read (this one included). Once the state spills, a row that
// starts a block after the domain's first, with enough rows left to fill
// it, starts a whole block instead of one doubling from nothing (fresh
// memory costs its page faults), in the rows of a block written to disk
// when some are at hand: its rows go to disk, full or at the end
// (spillAll), so no room stays unused.
func (c *blockCoder) room(d *domainIndex, left int) {
	k := len(d.rows) / arenaRows
	if k == len(d.blocks) && k > 0 && left >= arenaRows && d.vs.spilling {
		b := d.newBlock(c.dim)
		b.vecs = c.whole()
		d.blocks = append(d.blocks, b)
	}
}

// whole returns memory for a whole block: rows a block on disk freed, or
// fresh.
func (c *blockCoder) whole() []float32 { return c.take(c.free, arenaRows) }

// finish waits for the coder and puts its blocks' codes, and the blocks
// it wrote to disk, in place.
func (c *blockCoder) finish() {
	for _, s := range c.stages {
		c.flush(s)
	}
	clear(c.stages)
	if c.jobs == nil {
		return
	}
	close(c.jobs)
	c.wg.Wait()
	for _, job := range c.done {
		b := &job.d.blocks[job.k]
		b.codes = job.codes
		if job.disk != nil {
			b.disk, b.vecs = job.disk, nil
		}
	}
	for _, s := range c.staged {
		b := &s.d.blocks[s.k]
		b.codes, b.disk, b.vecs = s.codes, s.disk, nil
		if s.d.blockRows(s.k) < arenaRows {
			b.codes = s.codes.Clipped() // reserved for the tenant's rows left
		}
	}
	c.done, c.staged, c.jobs = nil, nil, nil
}
