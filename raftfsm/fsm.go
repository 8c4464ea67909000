package raftfsm

import (
	"sync"
	"sync/atomic"
)

// FSM is the state machine of one data group. Apply and Restore take the
// write lock; every read method takes the read lock.
type FSM struct {
	mu      sync.RWMutex
	dim     int
	tenants map[string]*tenant
	// memberOf indexes the rooms by org: the room tenants where the org
	// has a membership, active or not (memberships are never removed), in
	// no particular order. It is derived from tenants: kept by applyRoom,
	// rebuilt by setTenants.
	memberOf map[string][]*tenant
	vs       *vecStore // rows on disk (spill.go)
	// restoreStop, when set, ends a Restore in progress (StopRestoresOn).
	restoreStop atomic.Pointer[stopSignal]
}

// New returns an empty state machine for vectors of dimension dim. It keeps
// every row in memory until told otherwise (DiskVectors).
func New(dim int) *FSM {
	vs := &vecStore{dim: dim, dir: diskDefault.dir, above: diskDefault.rows}
	f := &FSM{dim: dim, vs: vs}
	f.setTenants(make(map[string]*tenant))
	return f
}

// setTenants makes tenants the state's and indexes their rooms.
func (f *FSM) setTenants(tenants map[string]*tenant) {
	f.tenants = tenants
	f.memberOf = make(map[string][]*tenant)
	for _, t := range tenants {
		if t.room != nil {
			for org := range t.room.members {
				f.memberOf[org] = append(f.memberOf[org], t)
			}
		}
	}
}

// diskDefault is the DiskVectors of every new state: none, but tests run
// the whole suite with rows on disk.
var diskDefault struct {
	dir  string
	rows int
}

// DiskVectors makes the state keep the rows of its coded domains in a file in dir
// (created there, unlinked at once) from the moment it holds rows rows in
// all; rows <= 0 keeps every row in memory. Call it before the first Apply
// or Restore.
func (f *FSM) DiskVectors(dir string, rows int) {
	f.vs.dir, f.vs.above = dir, max(rows, 0)
}

// Dim is the vector dimension of the group.
func (f *FSM) Dim() int { return f.dim }

// Apply applies one command and returns its result (see the result types in
// commands.go). It panics on an undecodable command.
//
// Apply and Restore must not run concurrently with each other (Raft calls
// both from one goroutine): a batched write relies on it to run its gates
// under the read lock, so searches go on meanwhile, and to take the write
// lock only to store what the gates decided, on a state nothing changed;
// so does the sweep of rows to disk (sweepWrite, sweepCommit).
func (f *FSM) Apply(_ uint64, cmd []byte) any {
	return f.apply(decodeCommand(cmd))
}

// apply applies a decoded command (Apply).
func (f *FSM) apply(c any) any {
	var pre *batchGate
	var near *neighbours
	var swept []sweepStep
	w, batch := c.(*WriteCmd)
	cc, consolidate := c.(*ConsolidateCmd)
	if batch = batch && f.batchable(w); batch || consolidate || f.vs.sweep {
		f.mu.RLock()
		switch {
		case batch:
			pre = f.pregate(w)
		case consolidate:
			near = f.neighbours(cc)
		}
		swept = sweepWrite(f.vs, f.tenants, f.dim, sweepBytes)
		f.mu.RUnlock()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	sweepCommit(swept)
	switch c := c.(type) {
	case *WriteCmd:
		return f.applyWrite(c, pre)
	case *TouchCmd:
		f.applyTouch(c)
		return nil
	case *FeedbackCmd:
		return f.applyFeedback(c)
	case *DeleteAtomCmd:
		return f.applyDeleteAtom(c)
	case *DeleteDomainCmd:
		return f.applyDeleteDomain(c)
	case *RoomCmd:
		return f.applyRoom(c)
	case *ChatCmd:
		return f.applyChat(c)
	case *ConsolidateCmd:
		return f.applyConsolidate(c, near)
	case *ResetCmd:
		f.setTenants(make(map[string]*tenant))
		f.vs.close()
		f.vs = f.vs.fresh()
		return nil
	}
	panic("raftfsm: command without an apply function")
}

func (f *FSM) tenantFor(id string) *tenant {
	t := f.tenants[id]
	if t == nil {
		t = newTenant(id, f.vs)
		f.tenants[id] = t
	}
	return t
}

func (f *FSM) applyTouch(c *TouchCmd) {
	t := f.tenants[c.Tenant]
	if t == nil {
		return
	}
	for _, id := range c.IDs {
		if a := t.atoms[id]; a != nil {
			a.AccessCount++
			if c.At > a.LastAccessedAt {
				a.LastAccessedAt = c.At
			}
		}
	}
}
