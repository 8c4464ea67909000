package shard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hashicorp/raft"
)

// snapDir and tmpSuffix are where raft's file snapshot store keeps a
// group's snapshots, and the suffix of one being written.
const (
	snapDir   = "snapshots"
	tmpSuffix = ".tmp"
)

// cleanStore is a file snapshot store (in dir) whose failed snapshots
// leave nothing behind. Raft's own sink keeps the directory of a snapshot
// that failed on a write error, a full disk's: its Cancel stops at the
// flush that fails again, before removing anything, and its Close keeps
// the directory when the metadata cannot be written. Nothing reads or
// removes such a directory later, so the space it held, up to the size of
// the state, stayed taken after the disk had room again.
type cleanStore struct {
	raft.SnapshotStore
	dir string
}

func (s cleanStore) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := s.SnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		// Raft's Create leaves the directory it made when writing the
		// metadata or creating the state file fails (a full disk).
		return nil, errors.Join(err, s.removeCreated(term, index))
	}
	return &cleanSink{SnapshotSink: sink, tmp: filepath.Join(s.dir, snapDir, sink.ID()+tmpSuffix)}, nil
}

// removeCreated removes the unfinished directories of snapshots of term
// and index: raft names a snapshot <term>-<index>-<milliseconds>.
func (s cleanStore) removeCreated(term, index uint64) error {
	prefix := fmt.Sprintf("%d-%d-", term, index)
	entries, err := os.ReadDir(filepath.Join(s.dir, snapDir))
	if err != nil {
		return nil // nothing was made
	}
	var errs []error
	for _, e := range entries {
		if name := e.Name(); e.IsDir() && strings.HasPrefix(name, prefix) && strings.HasSuffix(name, tmpSuffix) {
			errs = append(errs, os.RemoveAll(filepath.Join(s.dir, snapDir, name)))
		}
	}
	return errors.Join(errs...)
}

// cleanSink removes the directory of its snapshot (tmp) when it fails.
type cleanSink struct {
	raft.SnapshotSink
	tmp string
}

func (s *cleanSink) Close() error {
	err := s.SnapshotSink.Close()
	if err != nil {
		err = errors.Join(err, s.remove())
	}
	return err
}

func (s *cleanSink) Cancel() error {
	err := s.SnapshotSink.Cancel()
	return errors.Join(err, s.remove())
}

// remove removes the snapshot's directory. Raft's sink that failed to
// flush also left its file open, and an unlinked file's space returns only
// once it is closed: by the file's finalizer, when a collection finds the
// sink unreachable (raft drops it on return). A collection a second later
// makes that prompt instead of whenever the heap next grows (checked: the
// space of a 40 MB partial snapshot came back after a forced collection).
func (s *cleanSink) remove() error {
	time.AfterFunc(gcAfterFailedSnapshot, runtime.GC)
	return os.RemoveAll(s.tmp)
}

// gcAfterFailedSnapshot is when a failed snapshot's file is collected.
const gcAfterFailedSnapshot = time.Second

// removePartialSnapshots removes the directories of the snapshots of dir's
// store that were never finished (a crash, or a failure raft left behind)
// and returns their names. Raft's store skips them and never removes them.
func removePartialSnapshots(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, snapDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasSuffix(e.Name(), tmpSuffix) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, snapDir, e.Name())); err != nil {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}
