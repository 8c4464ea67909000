package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hebbdb/hebb/shard"
)

// bootMarkerFile is kept in the data dir of a node that bootstraps a new
// cluster until the cluster record is written and every data group has a
// leader. A first start stopped before then (Ctrl-C, a crash, a flag
// refused after the meta group was created) left Raft state that made the
// next start a restart, which waited for a cluster record no one would
// write: the data dir never started again. With the marker there, the next
// start finishes the bootstrap instead (every step of it is idempotent:
// raft bootstraps a group only when it has no state, the record is written
// only when the meta group holds none).
const bootMarkerFile = "bootstrapping"

// joinMarkerFile is kept in the data dir of a node joining a cluster
// until it has recorded the cluster's id. A join that failed (no node
// reachable through --join) left a meta group without state, so the next
// start without --join took the data dir for a member's and waited 60 s
// for a meta leader that would never count it, then failed saying only
// that the meta group was not readable. With the marker there, such a
// start is refused at once, saying why; one with --join joins again.
const joinMarkerFile = "joining"

// bootUnfinished reports whether dataDir holds a bootstrap's marker.
func bootUnfinished(dataDir string) bool { return marked(dataDir, bootMarkerFile) }

func markBoot(dataDir string) error {
	return mark(dataDir, bootMarkerFile, "cluster bootstrap in progress", "the bootstrap")
}

func unmarkBoot(dataDir string) error { return unmark(dataDir, bootMarkerFile, "the bootstrap") }

// joinUnfinished reports whether dataDir holds a join's marker.
func joinUnfinished(dataDir string) bool { return marked(dataDir, joinMarkerFile) }

func markJoin(dataDir string) error {
	return mark(dataDir, joinMarkerFile, "joining a cluster", "the join")
}

func unmarkJoin(dataDir string) error { return unmark(dataDir, joinMarkerFile, "the join") }

func marked(dataDir, name string) bool {
	_, err := os.Stat(filepath.Join(dataDir, name))
	return err == nil
}

func mark(dataDir, name, text, what string) error {
	if err := shard.WriteFileSynced(filepath.Join(dataDir, name), []byte(text+"\n"), 0o600); err != nil {
		return fmt.Errorf("cannot mark %s: %w", what, err)
	}
	return nil
}

func unmark(dataDir, name, what string) error {
	if err := os.Remove(filepath.Join(dataDir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot end %s: %w", what, err)
	}
	return shard.SyncDir(dataDir)
}
