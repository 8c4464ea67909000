package shard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
)

// writeSnapshot stores state as a snapshot through raft's file store in
// dir and returns its ID.
func writeSnapshot(t *testing.T, dir string, state []byte) (*raft.FileSnapshotStore, string) {
	t.Helper()
	files, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	sink, err := files.Create(raft.SnapshotVersionMax, 40, 2, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write(state); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	return files, sink.ID()
}

// readAll reads rc to its end with reads of odd sizes, and returns what
// it read and the error that ended it (nil for io.EOF).
func readAll(rc io.Reader) ([]byte, error) {
	var out []byte
	p := make([]byte, 77_777)
	for {
		n, err := rc.Read(p)
		out = append(out, p[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// TestOpenVerifiedReadsRaftSnapshots: a snapshot raft's file store wrote
// reads back whole, with the metadata raft's own Open gives, across chunk
// boundaries and for an empty state.
func TestOpenVerifiedReadsRaftSnapshots(t *testing.T) {
	for _, size := range []int{0, 1, verifyChunk - 1, verifyChunk, 3*verifyChunk + 12_345, 9 * verifyChunk} {
		dir := t.TempDir()
		state := make([]byte, size)
		rng := rand.New(rand.NewPCG(uint64(size), 1))
		for i := range state {
			state[i] = byte(rng.Uint32())
		}
		files, id := writeSnapshot(t, dir, state)
		want, wrc, err := files.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		wrc.Close()
		meta, rc, err := openVerified(filepath.Join(dir, snapDir), id)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		got, err := readAll(rc)
		if err != nil || !bytes.Equal(got, state) {
			t.Fatalf("size %d: read %d bytes, err %v", size, len(got), err)
		}
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
		if meta.ID != want.ID || meta.Index != want.Index || meta.Term != want.Term || meta.Size != want.Size ||
			meta.ConfigurationIndex != want.ConfigurationIndex || meta.Version != want.Version {
			t.Fatalf("size %d: meta %+v, raft's %+v", size, meta, want)
		}
	}
}

// TestOpenVerifiedRefusesCorruptState: a state with a flipped byte, cut
// short or grown is refused with ErrSnapshotCorrupt before its reader has
// handed out every byte, wherever the damage lies.
func TestOpenVerifiedRefusesCorruptState(t *testing.T) {
	const size = 3*verifyChunk + 500
	damage := map[string]func(b []byte) []byte{
		"flipped first byte": func(b []byte) []byte { b[0] ^= 1; return b },
		"flipped last byte":  func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b },
		"flipped mid byte":   func(b []byte) []byte { b[verifyChunk+7] ^= 4; return b },
		"cut short":          func(b []byte) []byte { return b[:len(b)-1] },
		"cut at a chunk":     func(b []byte) []byte { return b[:2*verifyChunk] },
		"grown":              func(b []byte) []byte { return append(b, 0) },
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			_, id := writeSnapshot(t, dir, bytes.Repeat([]byte("hebb state "), size/11+1)[:size])
			path := filepath.Join(dir, snapDir, id, snapStateFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, f(b), 0o600); err != nil {
				t.Fatal(err)
			}
			_, rc, err := openVerified(filepath.Join(dir, snapDir), id)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			got, err := readAll(rc)
			if !errors.Is(err, ErrSnapshotCorrupt) {
				t.Fatalf("read %d bytes, err %v, want ErrSnapshotCorrupt", len(got), err)
			}
			if len(got) >= size {
				t.Fatalf("all %d bytes handed out before the error", len(got))
			}
		})
	}
}

// TestOpenVerifiedCloseEarly: closing before the end stops the reading
// goroutine and closes the file.
func TestOpenVerifiedCloseEarly(t *testing.T) {
	dir := t.TempDir()
	_, id := writeSnapshot(t, dir, make([]byte, 10*verifyChunk))
	_, rc, err := openVerified(filepath.Join(dir, snapDir), id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rc.(*verifiedReader).done:
	default:
		t.Fatal("reading goroutine still running after Close")
	}
	if _, _, err := openVerified(filepath.Join(dir, snapDir), "no-such-snapshot"); err == nil {
		t.Fatal("a missing snapshot opened")
	}
}

// TestRestartSkipsCorruptSnapshot: a restart whose newest snapshot's state
// was damaged on disk restores the older one and replays the log after it;
// with every snapshot damaged the group does not start. The state machine
// sees the damaged state fail as it reads it (openVerified) rather than at
// Open, so this is what raft's fallback now rests on.
func TestRestartSkipsCorruptSnapshot(t *testing.T) {
	dir := t.TempDir()
	cfg := GroupConfig{ID: 3, Bootstrap: true, SnapshotThreshold: 100}
	n := newTestNode(t, "n1", dir)
	g := startGroup(t, n, cfg, newKV())
	waitLeader(t, g)
	twoSnapshots(t, n, g, func(i int) string { return fmt.Sprintf("k%d=%d", i%7, i) })
	snaps, metas := listSnapshots(t, dir, cfg.ID, 2)
	damage := func(id string) { damageState(t, dir, cfg.ID, id) }
	damage(metas[0].ID) // the newest
	sm := newKV()
	n2 := newTestNode(t, "n1", dir)
	g2 := startGroup(t, n2, cfg, sm)
	waitLeader(t, g2)
	if err := g2.ReadIndex(testCtx(t)); err != nil {
		t.Fatalf("ReadIndex: %v", err)
	}
	for i := 53; i < 60; i++ {
		if got, want := sm.get(fmt.Sprintf("k%d", i%7)), fmt.Sprint(i); got != want {
			t.Fatalf("k%d = %q after the fallback, want %q", i%7, got, want)
		}
	}
	if sm.restoreCount() != 1 {
		t.Fatalf("%d restores, want the older snapshot's alone", sm.restoreCount())
	}
	if err := n2.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	metas, err := snaps.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range metas {
		damage(m.ID)
	}
	if _, err := newTestNode(t, "n1", dir).StartGroup(cfg, newKV()); err == nil {
		t.Fatal("a group whose every snapshot is damaged started")
	}
}

// TestRestartRefusesLogGap: when the newest snapshot is damaged and the log
// was compacted past the one before it, raft cannot replay from the older
// snapshot; the group refuses to start with ErrLogGap instead of the panic
// raft raises (which took the node down on every start).
func TestRestartRefusesLogGap(t *testing.T) {
	dir := t.TempDir()
	cfg := GroupConfig{ID: 4, Bootstrap: true, SnapshotThreshold: 100, TrailingLogs: 2}
	n := newTestNode(t, "n1", dir)
	g := startGroup(t, n, cfg, newKV())
	waitLeader(t, g)
	twoSnapshots(t, n, g, func(i int) string { return fmt.Sprintf("k=%d", i) }) // the close compacts to 2 entries
	_, metas := listSnapshots(t, dir, cfg.ID, 2)
	damageState(t, dir, cfg.ID, metas[0].ID) // the newest
	_, err := newTestNode(t, "n1", dir).StartGroup(cfg, newKV())
	if !errors.Is(err, ErrLogGap) {
		t.Fatalf("start after the gap: %v, want ErrLogGap", err)
	}
}

// twoSnapshots writes 30 commands (cmd(i)) to g, snapshots, writes 30
// more and closes n, which snapshots the grown log: two snapshots on disk.
func twoSnapshots(t *testing.T, n *Node, g *Group, cmd func(i int) string) {
	t.Helper()
	for i := range 30 {
		propose(t, g, cmd(i))
	}
	if err := g.Raft().Snapshot().Error(); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	for i := 30; i < 60; i++ {
		propose(t, g, cmd(i))
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// listSnapshots lists group's snapshots in dir, newest first, and fails
// unless there are want of them.
func listSnapshots(t *testing.T, dir string, group uint32, want int) (*raft.FileSnapshotStore, []*raft.SnapshotMeta) {
	t.Helper()
	snaps, err := raft.NewFileSnapshotStore(filepath.Join(dir, "raft", fmt.Sprintf("group-%d", group)), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	metas, err := snaps.List()
	if err != nil || len(metas) != want {
		t.Fatalf("%d snapshots (%v), want %d", len(metas), err, want)
	}
	return snaps, metas
}

// damageState changes one byte in the middle of a snapshot's state (each
// call another value: damaging twice is damage too).
func damageState(t *testing.T, dir string, group uint32, id string) {
	t.Helper()
	path := filepath.Join(dir, "raft", fmt.Sprintf("group-%d", group), snapDir, id, snapStateFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2]++
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
