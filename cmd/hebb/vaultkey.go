package main

import (
	"log/slog"
	"os"
	"path/filepath"

	"github.com/hebbdb/hebb/router/vault"
)

// loadVault loads the vault master key ring (HEBB_VAULT_KEY, else the data
// dir's key file) and warns when it had to draw a new key where one was
// needed already. holdsCluster and joining describe the data dir before
// the start: a data dir that held a cluster lost its key file, and a node
// joining a cluster needs the key the other nodes seal with (the OAuth
// and chat signing keys in the meta group are sealed by whichever node
// made them).
func loadVault(log *slog.Logger, dataDir string, holdsCluster, joining bool) (*vault.Ring, error) {
	env := os.Getenv("HEBB_VAULT_KEY")
	ring, created, err := vault.Load(env, dataDir)
	if err != nil {
		return ring, err
	}
	file := filepath.Join(dataDir, vault.KeyFile)
	if env != "" {
		warnEnvMissesFile(log, ring, dataDir, file)
	}
	if !created {
		return ring, nil
	}
	if holdsCluster || joining {
		ring.RefuseNewKeys() // no signing key is made with a key the others lack
	}
	switch {
	case holdsCluster:
		log.Warn("the vault key file was missing from a data dir that holds a cluster: a new vault master key "+
			"was created, which cannot open what the previous one sealed (the OAuth and chat signing keys: "+
			"those sign-ins answer 503; and the value of every vault secret stored before); "+
			"restore the previous key (this file, or HEBB_VAULT_KEY)", "file", file)
	case joining:
		log.Warn("this node, joining a cluster, drew a vault master key of its own: what the other nodes sealed "+
			"(the OAuth and chat signing keys) cannot be opened here, so those sign-ins answer 503 on this node, and none is made with it; "+
			"give every node the same key (HEBB_VAULT_KEY, or the first node's vault.key copied into the data dir "+
			"before the first start)", "file", file)
	}
	return ring, nil
}

// warnEnvMissesFile warns when HEBB_VAULT_KEY, which takes the place of the
// data dir's key file, lacks a key of that file: what the file's key sealed
// (the signing keys, the secrets' values) cannot be opened. It names
// neither key.
func warnEnvMissesFile(log *slog.Logger, ring *vault.Ring, dataDir, file string) {
	fromFile, err := vault.FileRing(dataDir)
	switch {
	case err != nil:
		log.Warn("HEBB_VAULT_KEY is set and the data dir's vault key file cannot be read; it is not used", "file", file, "err", err)
	case fromFile != nil && !ring.Holds(fromFile):
		ring.RefuseNewKeys()
		log.Warn("HEBB_VAULT_KEY does not hold the key of the data dir's vault key file, and takes its place: "+
			"what that key sealed (the OAuth and chat signing keys, the value of every vault secret stored under it) "+
			"cannot be opened, and no new signing key is made with it (503); set HEBB_VAULT_KEY to the file's content, or add its key to the ring "+
			"(id:base64,id:base64, the first key seals)", "file", file)
	}
}
