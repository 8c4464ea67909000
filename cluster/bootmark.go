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

// bootUnfinished reports whether dataDir holds a bootstrap's marker.
func bootUnfinished(dataDir string) bool {
	_, err := os.Stat(filepath.Join(dataDir, bootMarkerFile))
	return err == nil
}

func markBoot(dataDir string) error {
	if err := shard.WriteFileSynced(filepath.Join(dataDir, bootMarkerFile), []byte("cluster bootstrap in progress\n"), 0o600); err != nil {
		return fmt.Errorf("cannot mark the bootstrap: %w", err)
	}
	return nil
}

func unmarkBoot(dataDir string) error {
	if err := os.Remove(filepath.Join(dataDir, bootMarkerFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot end the bootstrap: %w", err)
	}
	return shard.SyncDir(dataDir)
}
