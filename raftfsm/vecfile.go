package raftfsm

import (
	"fmt"
	"os"
	"sync"
)

// vecFile keeps blocks of vectors on disk: extents of one block each
// (arenaRows rows), read and written with pread and pwrite, so the rows
// live in the kernel's page cache instead of the process's heap and the
// kernel may drop them under memory pressure. The file is derived state,
// rebuilt by every restore: it is unlinked as soon as it is created and
// goes with its last open descriptor.
//
// An extent a frozen snapshot may still read (pinned) is not reused until
// the snapshot is done: freeing it while pinned retires it.
type vecFile struct {
	f        *os.File
	extBytes int64 // bytes of one extent

	mu      sync.Mutex
	extents int64   // extents handed out so far (the file's size in extents)
	free    []int64 // extents to reuse
	retired []int64 // extents freed while pinned
	pins    int     // frozen snapshots reading the file
	dropped bool    // the state no longer uses the file: close at the last unpin
}

// openVecFile creates an unlinked file in dir for rows of dim floats.
func openVecFile(dir string, dim int) (*vecFile, error) {
	f, err := os.CreateTemp(dir, "vectors-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("cannot create vector file: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot unlink vector file: %w", err)
	}
	return &vecFile{f: f, extBytes: int64(arenaRows) * int64(dim) * 4}, nil
}

// alloc returns a free extent.
func (v *vecFile) alloc() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if n := len(v.free); n > 0 {
		e := v.free[n-1]
		v.free = v.free[:n-1]
		return e
	}
	v.extents++
	return v.extents - 1
}

// release frees an extent, or retires it while a snapshot is pinned.
func (v *vecFile) release(e int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.pins > 0 {
		v.retired = append(v.retired, e)
		return
	}
	v.free = append(v.free, e)
}

// pin keeps every extent in use from being reused until unpin.
func (v *vecFile) pin() {
	v.mu.Lock()
	v.pins++
	v.mu.Unlock()
}

func (v *vecFile) unpin() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.pins--; v.pins > 0 {
		return
	}
	v.free = append(v.free, v.retired...)
	v.retired = v.retired[:0]
	if v.dropped {
		v.f.Close()
	}
}

// drop tells the file the state no longer uses it: it closes now, or at the
// last unpin.
func (v *vecFile) drop() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.dropped = true
	if v.pins == 0 {
		v.f.Close()
	}
}

// read copies floats from row row of extent e into dst.
func (v *vecFile) read(e int64, row, dim int, dst []float32) {
	if _, err := v.f.ReadAt(f32Bytes(dst), v.offset(e, row, dim)); err != nil {
		panic(fmt.Errorf("raftfsm: cannot read vector file: %w", err))
	}
}

// write copies src to row row of extent e onwards.
func (v *vecFile) write(e int64, row, dim int, src []float32) {
	if _, err := v.f.WriteAt(f32Bytes(src), v.offset(e, row, dim)); err != nil {
		panic(fmt.Errorf("raftfsm: cannot write vector file: %w", err))
	}
}

func (v *vecFile) offset(e int64, row, dim int) int64 {
	return e*v.extBytes + int64(row)*int64(dim)*4
}
