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
	dim  int
	jobs chan *coderJob
	free chan []float32 // rows of blocks written to disk, for reuse
	done []*coderJob
	wg   sync.WaitGroup
}

// coderJob is block k of d, full, with its rows; codes and (when disk is
// set) the rows on disk are what the coder makes of it.
type coderJob struct {
	d     *domainIndex
	k     int
	vecs  []float32
	disk  *diskBlock // the block's extent when the state spills; nil keeps it in memory
	codes *vecmath.Codes
}

// coderQueue is how many full blocks wait for the coder before the
// restoring goroutine waits for it (each is 12 MiB at d=384).
const coderQueue = 2

func newBlockCoder(dim int) *blockCoder {
	return &blockCoder{dim: dim, free: make(chan []float32, coderQueue+1)}
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
	if c.jobs == nil {
		c.jobs = make(chan *coderJob, coderQueue)
		c.wg.Go(c.run)
	}
	c.done = append(c.done, job)
	c.jobs <- job
}

func (c *blockCoder) run() {
	for job := range c.jobs {
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
func (c *blockCoder) whole() []float32 {
	select {
	case v := <-c.free:
		return v
	default:
		return make([]float32, 0, arenaRows*c.dim)
	}
}

// finish waits for the coder and puts its blocks' codes, and the blocks
// it wrote to disk, in place.
func (c *blockCoder) finish() {
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
	c.done, c.jobs = nil, nil
}
