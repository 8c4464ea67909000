package shard

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileSynced writes a small file that must survive a power cut once
// written (a node's identity, the vault key): the data goes to a
// temporary file, synced, then renamed over path, and the directory is
// synced. os.WriteFile alone can leave an empty file after a crash, while
// the Raft state written beside it, synced, survives: a node that then
// draws a new identity is no longer the voter its groups know.
func WriteFileSynced(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("cannot create %s: %w", tmp, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir syncs a directory, so that a file created, renamed or removed in
// it stays so after a power cut.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("cannot sync %s: %w", dir, err)
	}
	return nil
}
