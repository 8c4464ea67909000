package raftfsm

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"
)

// diskBlocks counts the blocks of the state's domains on disk and in memory.
func diskBlocks(f *FSM) (disk, mem int) {
	for _, t := range f.tenants {
		for _, d := range t.domains {
			for k := range d.blocks {
				if d.blocks[k].disk != nil {
					disk++
					if d.blocks[k].vecs != nil {
						panic("a block both on disk and in memory")
					}
				} else {
					mem++
				}
			}
		}
	}
	return disk, mem
}

// TestRowsGoToDisk fills a state past its threshold and checks where the
// rows live, that reads and snapshots equal those of a state keeping every
// row in memory, and that a restore and a shrinking domain place them again.
func TestRowsGoToDisk(t *testing.T) {
	withCodedRows(t, 8)
	withArenaRows(t, 4)
	const dim, n = 16, 200
	mem := New(dim)
	disk := New(dim)
	dir := t.TempDir()
	disk.DiskVectors(dir, 60)
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < n; i += 10 {
		cmd := &WriteCmd{Tenant: "org", Batch: true}
		for j := i; j < i+10; j++ {
			cmd.Items = append(cmd.Items, WriteItem{ID: mkID(j + 1), CreatedAt: baseTime + int64(j),
				Content: fmt.Sprint("atom ", j), Domain: []string{"a", "b", "c"}[j%3],
				Concepts: []string{fmt.Sprint("c", rng.Intn(20))}, Vector: randomUnit(rng, dim)})
		}
		b := cmd.Encode()
		mem.Apply(uint64(i+1), b)
		disk.Apply(uint64(i+1), b)
		// The command that reaches 60 rows starts the sweep; the next
		// command's sweep moves the blocks.
		if on, _ := diskBlocks(disk); (on > 0) != (i+10 > 60) {
			t.Fatalf("after %d rows: %d blocks on disk", i+10, on)
		}
	}
	// Every block is on disk, each domain's last, growing one included.
	on, in := diskBlocks(disk)
	if on != 3*17 || in != 0 {
		t.Fatalf("%d blocks on disk, %d in memory; want 51 and 0", on, in)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the vector file is not unlinked: %v", entries)
	}
	sameReads := func(when string) {
		t.Helper()
		for q := range 20 {
			req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, dim), TopK: 5, MinRelevance: -1,
				Concepts: []string{fmt.Sprint("c", q)}, IncludeAssociations: true, Diversity: 0.5 * float64(q%2)}
			if d := diffItems(disk.Read(req).Items, mem.Read(req).Items); d != "" {
				t.Fatalf("%s, query %d: %s", when, q, d)
			}
		}
		if mem.StateHash() != disk.StateHash() {
			t.Fatalf("%s: the states differ", when)
		}
	}
	sameReads("filled")

	// Consolidation clusters rows read from disk: near twins of one row.
	base := randomUnit(rng, dim)
	twins := &WriteCmd{Tenant: "org", Batch: true}
	for j := range 6 {
		v := slices.Clone(base)
		v[j] += 0.1
		twins.Items = append(twins.Items, WriteItem{ID: mkID(500 + j), CreatedAt: baseTime + int64(500+j),
			Content: fmt.Sprint("twin ", j), Domain: "b", Concepts: []string{"twin"}, Vector: normalized(v)})
	}
	consolidate := (&ConsolidateCmd{Tenant: "org", Domain: "b", At: baseTime + 600, BaseID: mkID(700)}).Encode()
	for i, b := range [][]byte{twins.Encode(), consolidate} {
		want, got := mem.Apply(uint64(600+i), b), disk.Apply(uint64(600+i), b)
		if d := diffResult(got, want); d != "" {
			t.Fatalf("command %d: %s", i, d)
		}
		if r, ok := got.(*ConsolidateResult); ok && r.PrototypesCreated == 0 {
			t.Fatal("consolidation made no prototype")
		}
	}
	sameReads("consolidated")

	// A snapshot taken now keeps its rows while deletes move rows on disk.
	write, _ := disk.Snapshot()
	want := disk.encodeState()
	for i := 0; i < 120; i += 2 {
		b := (&DeleteAtomCmd{Tenant: "org", ID: mkID(i + 1)}).Encode()
		mem.Apply(uint64(1000+i), b)
		disk.Apply(uint64(1000+i), b)
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatal("the snapshot saw deletes applied after it was taken")
	}
	sameReads("after deletes")

	// A restore puts the full blocks on disk again.
	back := New(dim)
	back.DiskVectors(t.TempDir(), 60)
	if err := back.Restore(bytes.NewReader(disk.encodeState())); err != nil {
		t.Fatal(err)
	}
	if on, _ := diskBlocks(back); on == 0 || back.StateHash() != disk.StateHash() {
		t.Fatalf("restored: %d blocks on disk, same state %v", on, back.StateHash() == disk.StateHash())
	}

	// A domain searched exactly again holds its rows in memory.
	b := (&DeleteDomainCmd{Tenant: "org", Domain: "a"}).Encode()
	mem.Apply(2000, b)
	disk.Apply(2000, b)
	for k := 0; k < 200; k += 3 {
		if k%2 == 1 || k >= 120 {
			b := (&DeleteAtomCmd{Tenant: "org", ID: mkID(k + 2)}).Encode()
			mem.Apply(uint64(3000+k), b)
			disk.Apply(uint64(3000+k), b)
		}
	}
	for name, d := range disk.tenants["org"].domains {
		for k := range d.blocks {
			if !d.coded() && d.blocks[k].disk != nil {
				t.Fatalf("domain %s of %d rows keeps block %d on disk", name, len(d.rows), k)
			}
		}
	}
	sameReads("after shrinking")
}

// TestVecFileReuse checks that an extent freed while a snapshot is pinned
// is not handed out again until the snapshot is done.
func TestVecFileReuse(t *testing.T) {
	withArenaRows(t, 2)
	v, err := openVecFile(t.TempDir(), 4)
	if err != nil {
		t.Fatal(err)
	}
	a, b := v.alloc(), v.alloc()
	v.write(a, 0, 4, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	v.pin()
	v.release(a)
	if c := v.alloc(); c == a {
		t.Fatal("a pinned extent was reused")
	}
	got := make([]float32, 4)
	v.read(a, 1, 4, got)
	if got[0] != 5 || got[3] != 8 {
		t.Fatalf("read %v", got)
	}
	v.unpin()
	if c := v.alloc(); c != a {
		t.Fatalf("extent %d after the unpin, want %d (b is %d)", c, a, b)
	}
	v.drop()
	if _, err := v.f.Stat(); err == nil {
		t.Fatal("the file is still open after drop")
	}
}

// TestDroppedSnapshotUnpins: a snapshot raft never writes (its sink could
// not be made) lets the file's extents be reused once it is collected.
func TestDroppedSnapshotUnpins(t *testing.T) {
	withCodedRows(t, 2)
	withArenaRows(t, 2)
	f := New(4)
	f.DiskVectors(t.TempDir(), 1)
	rng := rand.New(rand.NewSource(5))
	cmd := &WriteCmd{Tenant: "org", Batch: true}
	for j := range 8 {
		cmd.Items = append(cmd.Items, WriteItem{ID: mkID(j + 1), CreatedAt: baseTime + int64(j),
			Content: fmt.Sprint("atom ", j), Domain: "d", Vector: randomUnit(rng, 4)})
	}
	f.Apply(1, cmd.Encode())
	f.Apply(2, (&TouchCmd{Tenant: "org", IDs: []ID{mkID(1)}, At: baseTime + 100}).Encode()) // sweeps
	file := f.vs.file
	if file == nil {
		t.Fatal("no rows went to disk")
	}
	pins := func() int {
		file.mu.Lock()
		defer file.mu.Unlock()
		return file.pins
	}
	if _, err := f.Snapshot(); err != nil || pins() != 1 { // dropped unwritten
		t.Fatalf("snapshot: %v, %d pins", err, pins())
	}
	deadline := time.Now().Add(5 * time.Second)
	for pins() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("a dropped snapshot still pins the file")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	// A written one lets go at once, and only once.
	write, _ := f.Snapshot()
	if err := write(io.Discard); err != nil || pins() != 0 {
		t.Fatalf("written snapshot: %v, %d pins", err, pins())
	}
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if pins() != 0 {
		t.Fatalf("%d pins after the written snapshot was collected", pins())
	}
}

// TestSweepInSteps checks that the blocks a state held when it grew to
// spill go to disk a bounded amount per command, not all inside the
// command that crossed the threshold, and that reads are unchanged
// meanwhile.
func TestSweepInSteps(t *testing.T) {
	withCodedRows(t, 8)
	withArenaRows(t, 4)
	old := sweepBytes
	sweepBytes = 1 // one block a command
	t.Cleanup(func() { sweepBytes = old })
	const dim = 16
	mem, disk := New(dim), New(dim)
	disk.DiskVectors(t.TempDir(), 40)
	rng := rand.New(rand.NewSource(5))
	apply := func(i int, b []byte) {
		mem.Apply(uint64(i), b)
		disk.Apply(uint64(i), b)
	}
	// One batch of 60 rows in 3 domains crosses the threshold of 40: 15
	// full blocks, all still in memory (the rows added after the crossing
	// wait for the sweep, which the next command starts).
	cmd := numberedBatch(rng, dim, 0, 60, func(j int) (string, []string) {
		return []string{"a", "b", "c"}[j%3], []string{fmt.Sprint("c", j%7)}
	})
	apply(1, cmd.Encode())
	on, in := diskBlocks(disk)
	if on != 0 || in != 15 {
		t.Fatalf("after the crossing command: %d blocks on disk, %d in memory; want 0 and 15", on, in)
	}
	for i := 2; in > 0; i++ {
		apply(i, (&TouchCmd{Tenant: "org", IDs: []ID{mkID(i)}, At: baseTime + 100 + int64(i)}).Encode())
		was := in
		if on, in = diskBlocks(disk); in != was-1 || on+in != 15 {
			t.Fatalf("command %d: %d blocks on disk, %d in memory; want one more on disk", i, on, in)
		}
		req := &ReadRequest{Tenant: "org", Vector: randomUnit(rng, dim), TopK: 5, MinRelevance: -1,
			Concepts: []string{fmt.Sprint("c", i%7)}}
		if d := diffItems(disk.Read(req).Items, mem.Read(req).Items); d != "" {
			t.Fatalf("command %d: %s", i, d)
		}
	}
	if disk.vs.sweep || mem.StateHash() != disk.StateHash() {
		t.Fatalf("swept: sweep still set %v, same state %v", disk.vs.sweep, mem.StateHash() == disk.StateHash())
	}
}
