package shard

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hashicorp/raft"
)

var errDiskFull = errors.New("no space left on device")

// fullStore creates snapshots the way raft's file store does on a full
// disk: a directory with a partial file, and a sink whose every call
// fails without removing it.
// With createFails, Create itself fails after making the directory, as
// raft's does when it cannot write the metadata.
type fullStore struct {
	raft.SnapshotStore
	dir         string
	createFails bool
}

func (s fullStore) Create(raft.SnapshotVersion, uint64, uint64, raft.Configuration, uint64,
	raft.Transport) (raft.SnapshotSink, error) {
	tmp := filepath.Join(s.dir, snapDir, "2-40-123"+tmpSuffix)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	if s.createFails {
		return nil, errDiskFull
	}
	return fullSink{}, os.WriteFile(filepath.Join(tmp, "state.bin"), make([]byte, 4096), 0o600)
}

type fullSink struct{}

func (fullSink) Write([]byte) (int, error) { return 0, errDiskFull }
func (fullSink) Close() error              { return errDiskFull }
func (fullSink) Cancel() error             { return errDiskFull }
func (fullSink) ID() string                { return "2-40-123" }

func TestCleanStoreRemovesFailedSnapshots(t *testing.T) {
	for _, end := range []string{"cancel", "close"} {
		t.Run(end, func(t *testing.T) {
			dir := t.TempDir()
			store := cleanStore{fullStore{dir: dir}, dir}
			sink, err := store.Create(raft.SnapshotVersionMax, 40, 2, raft.Configuration{}, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(sink, "state"); !errors.Is(err, errDiskFull) {
				t.Fatalf("Write: %v", err)
			}
			if end == "cancel" {
				err = sink.Cancel()
			} else {
				err = sink.Close()
			}
			if !errors.Is(err, errDiskFull) {
				t.Fatalf("%s: %v, want the sink's error", end, err)
			}
			if left := snapshotDirs(t, dir); len(left) != 0 {
				t.Fatalf("after a failed snapshot the store holds %v", left)
			}
		})
	}
}

// A Create that fails leaves no directory of its snapshot, and removes no
// other snapshot's.
func TestCleanStoreFailedCreate(t *testing.T) {
	dir := t.TempDir()
	for _, other := range []string{"2-39-100", "1-40-100" + tmpSuffix} {
		if err := os.MkdirAll(filepath.Join(dir, snapDir, other), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	store := cleanStore{fullStore{dir: dir, createFails: true}, dir}
	if _, err := store.Create(raft.SnapshotVersionMax, 40, 2, raft.Configuration{}, 1, nil); !errors.Is(err, errDiskFull) {
		t.Fatalf("Create: %v, want the store's error", err)
	}
	if left, want := snapshotDirs(t, dir), []string{"1-40-100" + tmpSuffix, "2-39-100"}; !slices.Equal(left, want) {
		t.Fatalf("after a failed Create the store holds %v, want %v", left, want)
	}
}

// TestCleanStoreKeepsSnapshots: snapshots that succeed, through raft's own
// file store, are kept and read back.
func TestCleanStoreKeepsSnapshots(t *testing.T) {
	dir := t.TempDir()
	files, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	store := sizedStore{cleanStore{files, dir}}
	sink, err := store.Create(raft.SnapshotVersionMax, 40, 2, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(sink, "state"); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, rc, err := store.Open(sink.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if b, _ := io.ReadAll(rc); string(b) != "state" {
		t.Fatalf("read back %q", b)
	}
}

func TestRemovePartialSnapshots(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"1-10-100", "1-20-200.tmp", "2-30-300.tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, snapDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, snapDir, "note.tmp"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	removed, err := removePartialSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1-20-200.tmp", "2-30-300.tmp"}; !slices.Equal(removed, want) {
		t.Fatalf("removed %v, want %v", removed, want)
	}
	if left, want := snapshotDirs(t, dir), []string{"1-10-100", "note.tmp"}; !slices.Equal(left, want) {
		t.Fatalf("left %v, want %v", left, want)
	}
	if removed, err := removePartialSnapshots(t.TempDir()); err != nil || removed != nil {
		t.Fatalf("a group without snapshots: %v, %v", removed, err)
	}
}

func snapshotDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, snapDir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
