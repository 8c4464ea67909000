package shard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// openTestBlobLog opens (or reopens) the raft.db and segments under dir.
func openTestBlobLog(t *testing.T, dir string) (*blobLog, *raftboltdb.BoltStore) {
	t.Helper()
	store, err := openLogStore(filepath.Join(dir, "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := openBlobLog(filepath.Join(dir, "segments"), store)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		store.Close()
	})
	return b, store
}

func closeTestBlobLog(t *testing.T, b *blobLog, store *raftboltdb.BoltStore) {
	t.Helper()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
}

func payload(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// testEntries is a log of every kind of entry: small and large commands, a
// small command starting with the reference marker, and a configuration
// entry as large as a spilled command.
func testEntries(from uint64, seed uint64) []*raft.Log {
	var logs []*raft.Log
	add := func(typ raft.LogType, data []byte) {
		logs = append(logs, &raft.Log{Index: from + uint64(len(logs)), Term: 1, Type: typ, Data: data})
	}
	add(raft.LogCommand, payload(seed, 100))
	add(raft.LogCommand, payload(seed+1, blobMinBytes))
	add(raft.LogCommand, append([]byte{blobMarker, blobVersion}, payload(seed+2, 10)...))
	add(raft.LogConfiguration, payload(seed+3, 2*blobMinBytes))
	add(raft.LogCommand, payload(seed+4, 3*blobMinBytes+7))
	add(raft.LogCommand, nil)
	return logs
}

func checkEntries(t *testing.T, s raft.LogStore, want []*raft.Log) {
	t.Helper()
	for _, w := range want {
		var got raft.Log
		if err := s.GetLog(w.Index, &got); err != nil {
			t.Fatalf("entry %d: %v", w.Index, err)
		}
		if got.Type != w.Type || got.Term != w.Term || !bytes.Equal(got.Data, w.Data) {
			t.Fatalf("entry %d: type %v, %d bytes; want type %v, %d bytes", w.Index, got.Type, len(got.Data), w.Type, len(w.Data))
		}
	}
}

func TestBlobLogRoundTrip(t *testing.T) {
	dir := t.TempDir()
	b, store := openTestBlobLog(t, dir)
	logs := testEntries(1, 1)
	originals := make([][]byte, len(logs))
	for i, l := range logs {
		originals[i] = l.Data
	}
	if err := b.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	for i, l := range logs {
		if !bytes.Equal(l.Data, originals[i]) || len(l.Data) > 0 && &l.Data[0] != &originals[i][0] {
			t.Fatalf("StoreLogs changed the caller's entry %d", l.Index)
		}
	}
	checkEntries(t, b, logs)

	// In bbolt, every entry with data is sealed; the large commands and the
	// marked one around a reference, the rest around their data.
	for _, l := range logs {
		var raw raft.Log
		if err := store.GetLog(l.Index, &raw); err != nil {
			t.Fatal(err)
		}
		if len(l.Data) == 0 {
			continue
		}
		if len(raw.Data) < 6 || raw.Data[0] != entryMarker {
			t.Fatalf("entry %d (%d bytes, type %v) stored unsealed: %.20q", l.Index, len(l.Data), l.Type, raw.Data)
		}
		ref := raw.Data[5] == blobMarker && !bytes.Equal(raw.Data[5:], l.Data)
		if ref != spills(l) {
			t.Fatalf("entry %d (%d bytes, type %v): stored as a reference %v", l.Index, len(l.Data), l.Type, ref)
		}
	}

	closeTestBlobLog(t, b, store)
	b, _ = openTestBlobLog(t, dir)
	checkEntries(t, b, logs)
	// Writes after a reopen go to a new segment.
	more := testEntries(uint64(len(logs)+1), 2)
	if err := b.StoreLogs(more); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, b, append(logs, more...))
	if n := len(segmentFiles(t, dir)); n != 2 {
		t.Fatalf("%d segment files, want 2", n)
	}
}

func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "segments", "*"+segmentExt))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestBlobLogKeepsBoltSmall is why references exist: bbolt rewrote its last
// leaf, and the large values in it, at every commit.
func TestBlobLogKeepsBoltSmall(t *testing.T) {
	dir := t.TempDir()
	b, _ := openTestBlobLog(t, dir)
	const n, size = 40, 1 << 20
	for i := range n {
		l := &raft.Log{Index: uint64(i + 1), Term: 1, Type: raft.LogCommand, Data: payload(uint64(i), size)}
		if err := b.StoreLog(l); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 4<<20 {
		t.Fatalf("raft.db is %d bytes after %d entries of %d bytes", fi.Size(), n, size)
	}
	var total int64
	for _, f := range segmentFiles(t, dir) {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	if total != n*size {
		t.Fatalf("segments hold %d bytes, want %d (written once)", total, n*size)
	}
}

func TestBlobLogDeleteRange(t *testing.T) {
	defer func(v int64) { segmentBytes = v }(segmentBytes)
	segmentBytes = 3 * int64(blobMinBytes) // a segment holds three entries
	dir := t.TempDir()
	b, store := openTestBlobLog(t, dir)
	var logs []*raft.Log
	for i := range 30 {
		logs = append(logs, &raft.Log{Index: uint64(i + 1), Term: 1, Type: raft.LogCommand, Data: payload(uint64(i), blobMinBytes)})
	}
	if err := b.StoreLogs(logs[:15]); err != nil {
		t.Fatal(err)
	}
	if err := b.StoreLogs(logs[15:]); err != nil {
		t.Fatal(err)
	}
	if n := len(segmentFiles(t, dir)); n != 10 {
		t.Fatalf("%d segments, want 10", n)
	}

	// A follower's conflicting tail: 25-30 deleted, rewritten with new data.
	if err := b.DeleteRange(25, 30); err != nil {
		t.Fatal(err)
	}
	for i := 24; i < 30; i++ {
		logs[i] = &raft.Log{Index: uint64(i + 1), Term: 2, Type: raft.LogCommand, Data: payload(uint64(100+i), blobMinBytes)}
	}
	if err := b.StoreLogs(logs[24:]); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, b, logs)

	// Compaction: the segments holding only entries before 14 go.
	if err := b.DeleteRange(1, 13); err != nil {
		t.Fatal(err)
	}
	if n := len(segmentFiles(t, dir)); n != 8 {
		t.Fatalf("%d segments after compacting to 14, want 8 (4 of 1-12 gone)", n)
	}
	var l raft.Log
	if err := b.GetLog(5, &l); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("deleted entry: %v", err)
	}
	checkEntries(t, b, logs[13:])

	// After a reopen no segment is known to be unused until the log passes
	// the last index it had then.
	closeTestBlobLog(t, b, store)
	b, store = openTestBlobLog(t, dir)
	checkEntries(t, b, logs[13:])
	if err := b.DeleteRange(14, 20); err != nil {
		t.Fatal(err)
	}
	if n := len(segmentFiles(t, dir)); n != 8 {
		t.Fatalf("%d segments, want 8 kept", n)
	}
	extra := &raft.Log{Index: 31, Term: 2, Type: raft.LogCommand, Data: payload(31, blobMinBytes)}
	if err := b.StoreLog(extra); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteRange(21, 30); err != nil {
		t.Fatal(err)
	}
	if n := len(segmentFiles(t, dir)); n != 1 {
		t.Fatalf("%d segments, want 1 (entry 31's)", n)
	}
	checkEntries(t, b, []*raft.Log{extra})

	// An empty log needs no segment: a reopen removes them.
	if err := b.DeleteRange(31, 31); err != nil {
		t.Fatal(err)
	}
	closeTestBlobLog(t, b, store)
	openTestBlobLog(t, dir)
	if n := len(segmentFiles(t, dir)); n != 0 {
		t.Fatalf("%d segments with an empty log", n)
	}
}

func TestBlobLogDetectsCorruption(t *testing.T) {
	dir := t.TempDir()
	b, _ := openTestBlobLog(t, dir)
	l := &raft.Log{Index: 1, Term: 1, Type: raft.LogCommand, Data: payload(1, blobMinBytes)}
	if err := b.StoreLog(l); err != nil {
		t.Fatal(err)
	}
	files := segmentFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("%d segments", len(files))
	}
	f, err := os.OpenFile(files[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{^l.Data[100]}, 100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var got raft.Log
	err = b.GetLog(1, &got)
	if !errors.Is(err, errBadBlob) {
		t.Fatalf("corrupt segment read: %v", err)
	}
	// Raft panics with this error: it says which files and what to do.
	advice := "move " + filepath.Join(dir, "raft.db") + " aside"
	if !strings.Contains(err.Error(), advice) || !strings.Contains(err.Error(), "entry 1 of "+dir) {
		t.Fatalf("corrupt segment read: %v", err)
	}
	if err := os.Truncate(files[0], int64(len(l.Data))-5); err != nil {
		t.Fatal(err)
	}
	if err := b.GetLog(1, &got); !errors.Is(err, errBadBlob) || !strings.Contains(err.Error(), advice) {
		t.Fatalf("truncated segment read: %v", err)
	}
	os.Remove(files[0])
	b.mu.Lock()
	clear(b.segs)
	b.mu.Unlock()
	if err := b.GetLog(1, &got); !errors.Is(err, errNoSegment) {
		t.Fatalf("missing segment read: %v", err)
	}
}

func TestBlobRefDecode(t *testing.T) {
	r := blobRef{seq: 7, off: 1 << 40, n: 920_000, crc: 0xdeadbeef}
	got, err := decodeBlobRef(r.encode())
	if err != nil || got != r {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	enc := r.encode()
	for _, bad := range [][]byte{nil, {blobMarker}, {blobMarker, 2}, enc[:len(enc)-1], append(enc, 0), {blobMarker, blobVersion, 0x80}} {
		if _, err := decodeBlobRef(bad); !errors.Is(err, errBadBlob) {
			t.Fatalf("%x: %v", bad, err)
		}
	}
}

// TestRestartReplaysLargeEntries: a group's large commands live in
// segments, and a restart with no snapshot replays them from there.
func TestRestartReplaysLargeEntries(t *testing.T) {
	dir := t.TempDir()
	cfg := GroupConfig{ID: 3, Bootstrap: true, SnapshotThreshold: 1000, SnapshotInterval: time.Hour}
	n := newTestNode(t, "n1", dir)
	g := startGroup(t, n, cfg, newKV())
	waitLeader(t, g)
	want := map[string]string{}
	for i := range 6 {
		k, v := fmt.Sprintf("k%d", i), strings.Repeat(string(rune('a'+i)), blobMinBytes)
		propose(t, g, k+"="+v)
		want[k] = v
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	segs, err := filepath.Glob(filepath.Join(dir, "raft", "group-3", "segments", "*"+segmentExt))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segment written (%v)", err)
	}

	n2 := newTestNode(t, "n1", dir)
	sm := newKV()
	g2 := startGroup(t, n2, cfg, sm)
	if sm.restoreCount() != 0 {
		t.Fatalf("a snapshot was restored; the test needs a replay")
	}
	waitLeader(t, g2)
	if err := g2.ReadIndex(testCtx(t)); err != nil {
		t.Fatalf("ReadIndex after restart: %v", err)
	}
	if got := sm.snapshotData(); !maps.Equal(got, want) {
		t.Fatalf("state after restart: %d keys, want %d", len(got), len(want))
	}
}

// lostLogCfg is the group the lost-log tests write, snapshot and reopen.
var lostLogCfg = GroupConfig{ID: 3, Bootstrap: true, SnapshotThreshold: 1000, SnapshotInterval: time.Hour}

// groupAfterSnapshot writes a=1 to group 3 under dir, snapshots it, writes n
// commands of size bytes after the snapshot, closes the node and returns
// the group's directory.
func groupAfterSnapshot(t *testing.T, dir string, n, size int) string {
	t.Helper()
	node := newTestNode(t, "n1", dir)
	g := startGroup(t, node, lostLogCfg, newKV())
	waitLeader(t, g)
	propose(t, g, "a=1")
	if err := g.Raft().Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	for i := range n {
		propose(t, g, fmt.Sprintf("k%d=%s", i, strings.Repeat("x", size)))
	}
	if err := node.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return GroupDir(dir, lostLogCfg.ID)
}

// restartsFromSnapshot reopens group 3 under dir and checks it holds the
// snapshot's a=1 and takes writes.
func restartsFromSnapshot(t *testing.T, dir string) {
	t.Helper()
	sm := newKV()
	g := startGroup(t, newTestNode(t, "n1", dir), lostLogCfg, sm)
	waitLeader(t, g)
	if got := sm.get("a"); got != "1" {
		t.Fatalf("a = %q after restart, want the snapshot's 1", got)
	}
	propose(t, g, "b=2")
}

// A group whose raft.db is lost restarts from its snapshot; the segments of
// the lost log's later writes are set aside, not deleted as unused.
func TestMissingRaftDBKeepsSegments(t *testing.T) {
	dir := t.TempDir()
	gdir := groupAfterSnapshot(t, dir, 3, blobMinBytes)
	before := segmentFiles(t, gdir)
	if len(before) == 0 {
		t.Fatal("no segment written")
	}
	if err := os.Remove(filepath.Join(gdir, "raft.db")); err != nil {
		t.Fatal(err)
	}
	restartsFromSnapshot(t, dir)
	kept, err := filepath.Glob(filepath.Join(gdir, lostSegmentsPrefix+"*", "*"+segmentExt))
	if err != nil || len(kept) != len(before) {
		t.Fatalf("%d segments set aside (%v), want %d", len(kept), err, len(before))
	}
}

// A raft.db that lost its end is refused with what to do (bbolt panicked on
// a goroutine of its own); emptied, the group restarts from its snapshot
// (an empty raft.db counts as missing).
func TestTruncatedRaftDB(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(groupAfterSnapshot(t, dir, 50, 2000), "raft.db")
	st, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(db, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	_, err = newTestNode(t, "n1", dir).StartGroup(lostLogCfg, newKV())
	if err == nil || !strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), "move it aside") {
		t.Fatalf("StartGroup on a truncated raft.db: %v", err)
	}
	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	restartsFromSnapshot(t, dir)
}

// Entries are stored sealed with a checksum of their type, index, term and
// data: a bit changed in bbolt, in the data or in the type (a command read
// as a no-op lost an acknowledged write), is an error on reading, not a
// different entry; entries stored by earlier binaries read as they are.
func TestBlobLogSealsEntries(t *testing.T) {
	b, store := openTestBlobLog(t, t.TempDir())
	small := &raft.Log{Index: 1, Term: 1, Type: raft.LogCommand, Data: []byte("k=v")}
	large := &raft.Log{Index: 2, Term: 1, Type: raft.LogCommand, Data: payload(2, blobMinBytes)}
	conf := &raft.Log{Index: 3, Term: 1, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(raft.Configuration{
		Servers: []raft.Server{{Suffrage: raft.Voter, ID: "n1", Address: "127.0.0.1:1"}}})}
	if err := b.StoreLogs([]*raft.Log{small, large, conf}); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, b, []*raft.Log{small, large, conf})
	for _, tc := range []struct {
		name   string
		idx    uint64
		change func(l *raft.Log)
	}{
		{"a bit of the data", 1, func(l *raft.Log) { l.Data[len(l.Data)-1] ^= 0x01 }},
		{"the type of a command", 1, func(l *raft.Log) { l.Type = raft.LogNoop }},
		{"the type of a large command", 2, func(l *raft.Log) { l.Type = raft.LogBarrier }},
		{"the term", 3, func(l *raft.Log) { l.Term = 3 }},
	} {
		var raw raft.Log
		if err := store.GetLog(tc.idx, &raw); err != nil {
			t.Fatal(err)
		}
		if len(raw.Data) == 0 || raw.Data[0] != entryMarker {
			t.Fatalf("%s: entry %d stored as %.20q, want it sealed", tc.name, tc.idx, raw.Data)
		}
		kept := raw
		raw.Data = bytes.Clone(raw.Data)
		tc.change(&raw) // changed on the disk
		if err := store.StoreLog(&raw); err != nil {
			t.Fatal(err)
		}
		var got raft.Log
		if err := b.GetLog(tc.idx, &got); !errors.Is(err, errBadBlob) {
			t.Errorf("%s: GetLog gave %v (type %v, data %.20q), want errBadBlob", tc.name, err, got.Type, got.Data)
		}
		if err := store.StoreLog(&kept); err != nil {
			t.Fatal(err)
		}
	}

	// As earlier binaries stored them: unsealed, and sealed around the data.
	old := &raft.Log{Index: 4, Term: 1, Type: raft.LogCommand, Data: []byte{1, 2, 3}}
	inline := &raft.Log{Index: 5, Term: 1, Type: raft.LogCommand, Data: []byte("k=w")}
	sum := crc32.Checksum(inline.Data, crcTable)
	stored := *inline
	stored.Data = append([]byte{sumMarker, byte(sum >> 24), byte(sum >> 16), byte(sum >> 8), byte(sum)}, inline.Data...)
	if err := store.StoreLogs([]*raft.Log{old, &stored}); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, b, []*raft.Log{old, inline})
}

// A raft.db with a damaged page (here a branch element pointing far past
// the file) is refused with an error naming it and what to do: bbolt
// panicked while walking its pages at open, at every start.
func TestDamagedRaftDBRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "raft.db")
	st, err := openLogStore(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := 1; i <= 3000; i++ {
		logs = append(logs, &raft.Log{Index: uint64(i), Term: 1, Type: raft.LogCommand, Data: make([]byte, 200)})
	}
	if err := st.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damaged := false
	for off := 2 * 4096; off+4096 <= len(b) && !damaged; off += 4096 {
		if binary.LittleEndian.Uint16(b[off+8:]) == 0x01 { // a branch page: its first element's page id
			binary.LittleEndian.PutUint64(b[off+16+8:], 1<<40)
			damaged = true
		}
	}
	if !damaged {
		t.Fatal("no branch page to damage")
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err = openLogStore(path)
	if err == nil {
		st.Close()
		t.Fatal("a damaged raft.db opened")
	}
	if !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "move "+path+" aside") {
		t.Fatalf("error %v", err)
	}
}

// A group whose every snapshot fails to load is refused with what to do:
// raft's own words named no file and no way forward.
func TestDamagedSnapshotRefusedWithAdvice(t *testing.T) {
	dir := t.TempDir()
	gdir := groupAfterSnapshot(t, dir, 5, 10)
	states, err := filepath.Glob(filepath.Join(gdir, "snapshots", "*", "state.bin"))
	if err != nil || len(states) == 0 {
		t.Fatalf("snapshots %v, %v", states, err)
	}
	for _, s := range states {
		if err := os.WriteFile(s, []byte("not a snapshot"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, err = newTestNode(t, "n1", dir).StartGroup(lostLogCfg, newKV())
	if err == nil || !strings.Contains(err.Error(), filepath.Join(gdir, "snapshots")) || !strings.Contains(err.Error(), "move the damaged") {
		t.Fatalf("StartGroup with every snapshot damaged: %v", err)
	}
}
