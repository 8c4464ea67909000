package shard

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// lostSegmentsPrefix names the directory a group's segments are moved to when
// its raft.db is missing (see setAsideOrphanSegments).
const lostSegmentsPrefix = "segments.lost-"

// setAsideOrphanSegments handles a group directory whose raft.db is missing
// while segments remain: the log that referenced them is gone (deleted, or
// lost with a disk), so the group restarts from its last snapshot and the
// writes after it are lost. Opening would otherwise find an empty log and
// delete the segments as unused; they hold the data of the large commands
// after the snapshot, so they are moved to a segments.lost-<time> directory
// beside it for the operator instead, and the loss is logged as an error.
// It reports the directory the segments went to ("" when nothing was moved).
func setAsideOrphanSegments(dir string, log *slog.Logger) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "raft.db")); err == nil {
		return "", nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("cannot inspect raft.db: %w", err)
	}
	segs, err := filepath.Glob(filepath.Join(dir, "segments", "*"+segmentExt))
	if err != nil || len(segs) == 0 {
		return "", err
	}
	lost := filepath.Join(dir, lostSegmentsPrefix+time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(filepath.Join(dir, "segments"), lost); err != nil {
		return "", fmt.Errorf("cannot set aside the segments of a missing raft.db: %w", err)
	}
	log.Error("raft.db is missing but log segments remain: the group's log was lost; "+
		"it restarts from its last snapshot (or from the other replicas) and writes after that snapshot "+
		"are lost on this node; the segments were kept",
		"segments", len(segs), "kept_in", lost)
	return lost, nil
}
