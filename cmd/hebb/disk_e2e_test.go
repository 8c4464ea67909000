package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/hebbdb/hebb/bench"
)

// Vectors on disk, as an operator meets them: a node told to keep the rows
// of large domains in a file from 100 rows on stores and finds memories,
// keeps that file out of the data dir's listing, and answers the same
// after a kill and a restart (which rebuilds the file from the snapshot and
// the log).
func TestE2EVectorsOnDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"--embedder", "hash", "--daily-query-quota", "0", "--vectors-on-disk-above", "100"}
	n := start(t, spec{dataDir: dir, args: args})
	key := n.printedKey()
	texts := bench.NewTextGen(1)
	stored := 0
	for b := range 3 { // 1,500 rows: the domain is searched through codes
		var items []map[string]any
		for i := range 500 {
			items = append(items, map[string]any{"content": texts.Text(bench.StreamPopulate, uint64(500*b+i)), "domain": "notes"})
		}
		st, body := n.call("POST", "/memory/write-batch", key, map[string]any{"items": items})
		if st != 200 {
			t.Fatalf("write-batch: %d %v", st, body)
		}
		for _, r := range body["results"].([]any) {
			if r.(map[string]any)["stored"] == true {
				stored++
			}
		}
	}
	if stored < 1400 {
		t.Fatalf("only %d of 1,500 stored", stored)
	}
	if !holdsDeletedVectorFile(t, n.cmd.Process.Pid) {
		t.Fatal("the node keeps no vector file")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "vectors-") {
			t.Fatalf("the vector file is listed in the data dir: %s", e.Name())
		}
	}
	reads := func() []string {
		var out []string
		for q := range 10 {
			st, body := n.call("POST", "/memory/read", key, map[string]any{
				"query": texts.Query(bench.StreamPopulate, 1500, uint64(q)), "top_k": 5, "include_associations": true})
			if st != 200 {
				t.Fatalf("read: %d %v", st, body)
			}
			items := body["items"].([]any)
			if len(items) == 0 {
				t.Fatalf("query %d found nothing", q)
			}
			for _, it := range items {
				m := it.(map[string]any)
				out = append(out, fmt.Sprint(m["atom_id"], m["similarity"]))
			}
		}
		return out
	}
	before := reads()
	n.stop(syscall.SIGKILL)
	n = start(t, spec{dataDir: dir, args: args})
	if after := reads(); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("reads differ after the restart:\n%v\nwant\n%v", after, before)
	}
	if code := n.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM exit code %d", code)
	}
}

// holdsDeletedVectorFile reports whether process pid has an unlinked
// vector file open (Linux /proc; true elsewhere, where it cannot tell).
func holdsDeletedVectorFile(t *testing.T, pid int) bool {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Logf("cannot list the node's files: %v", err)
		return true
	}
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if strings.Contains(target, "vectors-") && strings.HasSuffix(target, "(deleted)") {
			return true
		}
	}
	return false
}
