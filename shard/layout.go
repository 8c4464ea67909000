package shard

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A node's Raft state lives under its data dir in raft/group-<id>/: raft.db
// (log and stable store), segments/ (large commands' data) and snapshots/.

// GroupDir is where group id keeps its Raft state under a node's data dir.
func GroupDir(dataDir string, id uint32) string {
	return filepath.Join(dataDir, "raft", "group-"+strconv.FormatUint(uint64(id), 10))
}

// GroupHoldsState reports whether group id has Raft state under dataDir: its
// log (raft.db) or a finished snapshot, which a start restores.
func GroupHoldsState(dataDir string, id uint32) bool {
	dir := GroupDir(dataDir, id)
	if _, err := os.Stat(filepath.Join(dir, "raft.db")); !errors.Is(err, os.ErrNotExist) {
		return true
	}
	return len(finishedSnapshots(dir)) > 0
}

// finishedSnapshots lists the finished snapshots under a group's directory.
func finishedSnapshots(dir string) []string {
	entries, _ := os.ReadDir(filepath.Join(dir, snapDir))
	var names []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasSuffix(e.Name(), tmpSuffix) {
			names = append(names, e.Name())
		}
	}
	return names
}

// GroupsOnDisk lists the ids of the groups with a directory under dataDir,
// ascending.
func GroupsOnDisk(dataDir string) []uint32 {
	dirs, _ := filepath.Glob(filepath.Join(dataDir, "raft", "group-*"))
	var ids []uint32
	for _, d := range dirs {
		if id, err := strconv.ParseUint(strings.TrimPrefix(filepath.Base(d), "group-"), 10, 32); err == nil {
			ids = append(ids, uint32(id))
		}
	}
	slices.Sort(ids)
	return ids
}
