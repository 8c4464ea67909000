//go:build linux

package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2EDiskFull fills the disk under a node (a tmpfs, so it needs the
// privilege to mount one): the write its leader cannot log gets 503,
// retryable, reason storage_unavailable; once there is room the node takes
// writes again by itself, and after a restart it holds every acknowledged
// atom and nothing else.
func TestE2EDiskFull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=24m"); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	s := spec{dataDir: dir + "/data", args: []string{"--embedder", "hash"}}
	n := start(t, s)
	key := n.printedKey()

	rng := rand.New(rand.NewPCG(7, 7))
	acked := 0.0
	batch := func() (int, map[string]any) {
		items := make([]map[string]any, 200)
		for i := range items {
			var words []string
			for range 40 {
				words = append(words, fmt.Sprintf("w%d", rng.IntN(1_000_000)))
			}
			items[i] = map[string]any{"content": strings.Join(words, " ")}
		}
		st, body := n.call("POST", "/memory/write_batch", key, map[string]any{"items": items})
		if st == 200 {
			acked += body["stored_count"].(float64)
		}
		return st, body
	}
	var full map[string]any
	for i := 0; full == nil; i++ {
		switch st, body := batch(); {
		case st == 503:
			full = body
		case st != 200:
			t.Fatalf("batch %d on a filling disk: %d %v", i, st, body)
		case i == 200:
			t.Fatalf("the disk never filled (%v atoms written)", acked)
		}
	}
	details, _ := full["details"].(map[string]any)
	if full["retryable"] != true || details["reason"] != "storage_unavailable" {
		t.Fatalf("answer on a full disk: %v", full)
	}

	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, "size=256m"); err != nil {
		t.Fatalf("remount: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for st, body := batch(); st != 200; st, body = batch() {
		if st != 503 || time.Now().After(deadline) {
			t.Fatalf("write once the disk has room: %d %v", st, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code := n.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("SIGTERM exit code %d", code)
	}
	n = start(t, s)
	if st, body := n.call("GET", "/memory/stats", key, nil); st != 200 || body["total_atoms"] != acked {
		t.Fatalf("stats after a restart: %d %v, want %v atoms", st, body, acked)
	}
}
