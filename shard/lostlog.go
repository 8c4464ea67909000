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
// its raft.db is missing (see checkLostLog).
const lostSegmentsPrefix = "segments.lost-"

// checkLostLog handles a group directory whose raft.db is missing (or
// empty) while snapshots or segments remain: the log is gone (deleted, or
// lost with a disk), so the group restarts from its last snapshot (or from the other
// replicas) and the writes after that snapshot are lost on this node. That
// is logged as an error. Opening would also find an empty log and delete
// the segments as unused; they hold the data of the large commands after
// the snapshot, so they are moved to a segments.lost-<time> directory
// beside it for the operator instead. It reports where the segments went
// ("" when none were moved).
func checkLostLog(dir string, log *slog.Logger) (string, error) {
	if st, err := os.Stat(filepath.Join(dir, "raft.db")); err == nil && st.Size() > 0 {
		return "", nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("cannot inspect raft.db: %w", err)
	}
	segs, err := filepath.Glob(filepath.Join(dir, "segments", "*"+segmentExt))
	if err != nil {
		return "", err
	}
	snaps := finishedSnapshots(dir)
	if len(segs) == 0 && len(snaps) == 0 {
		return "", nil // a new group
	}
	var lost string
	if len(segs) > 0 {
		lost = filepath.Join(dir, lostSegmentsPrefix+time.Now().UTC().Format("20060102T150405Z"))
		if err := os.Rename(filepath.Join(dir, "segments"), lost); err != nil {
			return "", fmt.Errorf("cannot set aside the segments of a missing raft.db: %w", err)
		}
	}
	log.Error("raft.db is missing but the group has snapshots or log segments: its log was lost; "+
		"it restarts from its last snapshot (or from the other replicas) and writes after that snapshot "+
		"are lost on this node", "snapshots", len(snaps), "segments", len(segs), "segments_kept_in", lost)
	return lost, nil
}
