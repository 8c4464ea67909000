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
	ring, created, err := vault.Load(os.Getenv("HEBB_VAULT_KEY"), dataDir)
	if err != nil || !created {
		return ring, err
	}
	file := filepath.Join(dataDir, vault.KeyFile)
	switch {
	case holdsCluster:
		log.Warn("the vault key file was missing from a data dir that holds a cluster: a new vault master key "+
			"was created, which cannot open what the previous one sealed (the OAuth and chat signing keys: "+
			"those sign-ins answer 503; and the value of every vault secret stored before); "+
			"restore the previous key (this file, or HEBB_VAULT_KEY)", "file", file)
	case joining:
		log.Warn("this node joined a cluster with a vault master key of its own: what the other nodes sealed "+
			"(the OAuth and chat signing keys) cannot be opened here, so those sign-ins answer 503 on this node; "+
			"give every node the same key (HEBB_VAULT_KEY, or the first node's vault.key copied into the data dir "+
			"before the first start)", "file", file)
	}
	return ring, nil
}
