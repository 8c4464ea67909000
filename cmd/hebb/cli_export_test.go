package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	hebb "github.com/hebbdb/hebb/client"
)

// exportedRow is what must survive an export → import round trip: every
// field a client wrote and the shape of the supersede chains, but not IDs,
// timestamps or scores, which the server assigns afresh.
type exportedRow struct {
	Content, Domain, AtomType string
	Concepts                  []string
	Metadata                  string
	Fingerprint, ExternalRef  string
	Replaces                  []string // contents of the atoms this one supersedes
	ReplacedBy                string   // content of the atom that superseded this one
}

// readExport loads an export file as comparable rows (secrets apart).
func readExport(t *testing.T, path string) (rows []string, secrets int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var atoms []hebb.Atom
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a hebb.Atom
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("bad export line %q: %v", sc.Text(), err)
		}
		atoms = append(atoms, a)
	}
	content := map[string]string{}
	for _, a := range atoms {
		content[a.AtomID] = a.Content
	}
	for _, a := range atoms {
		if a.AtomType == hebb.AtomSecret {
			secrets++
			continue
		}
		var meta any
		_ = json.Unmarshal(a.Metadata, &meta)
		mb, _ := json.Marshal(meta)
		r := exportedRow{Content: a.Content, Domain: a.Domain, AtomType: a.AtomType, Concepts: a.Concepts,
			Metadata: string(mb), Fingerprint: deref(a.Fingerprint), ExternalRef: deref(a.ExternalRef)}
		for _, id := range a.Supersedes {
			r.Replaces = append(r.Replaces, content[id])
		}
		sort.Strings(r.Replaces)
		if a.SupersededBy != nil {
			r.ReplacedBy = content[*a.SupersededBy]
		}
		b, _ := json.Marshal(r)
		rows = append(rows, string(b))
	}
	sort.Strings(rows)
	return rows, secrets
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestCLIExportImportRoundTrip(t *testing.T) {
	s := startCLIServer(t)
	src, dst := s.newKey(t, "cli-export-src"), s.newKey(t, "cli-export-dst")
	dir := t.TempDir()

	// The source account: plain atoms, a chain of three revisions, a merge
	// (one atom superseding two), metadata, a fingerprint, an external_ref,
	// a second domain, and a secret.
	write := func(args ...string) string {
		t.Helper()
		res := decodeJSON[hebb.WriteResult](t, s.run(src, "", false, append([]string{"write", "--json"}, args...)...).must(t))
		if !res.Stored {
			t.Fatalf("write %v not stored: %+v", args, res)
		}
		return res.ID()
	}
	write("--metadata", `{"source":"chat","n":[1,2]}`, "--fingerprint", "fp-1", "The user prefers a dark theme")
	write("--external-ref", "ticket-42", "--concepts", "deploy,tuesday", "Deploys happen on Tuesdays")
	write("--domain", "infra", "Staging runs Postgres 16")
	v1 := write("--domain", "prefs", "Standup is at 9:30")
	v2 := write("--domain", "prefs", "--supersedes", v1, "Standup moved to 10:00")
	write("--domain", "prefs", "--supersedes", v2, "Standup moved to 10:15")
	a := write("--domain", "team", "Alice owns the billing service")
	b := write("--domain", "team", "Bob owns the search service")
	write("--domain", "team", "--supersedes", a+","+b, "Carol owns billing and search")
	s.run(src, "sk_live_123\n", false, "vault", "put", "--context", "payment provider key", "stripe").must(t)

	exported := filepath.Join(dir, "src.jsonl")
	r := s.run(src, "", true, "export", "-o", exported)
	out := r.must(t)
	if !strings.HasPrefix(out, "exported 10 atoms") || !strings.Contains(r.stderr, "exporting [") {
		t.Fatalf("export: stdout %q stderr %q", out, r.stderr)
	}
	if st, err := os.Stat(exported); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("export file: %v %v", st, err)
	}

	r = s.run(dst, "", true, "import", exported)
	out = r.must(t)
	want := "imported " + exported + ": 9 stored, 0 filtered, 0 failed (10 rows, 1 secrets skipped, 4 supersede links made again)"
	if strings.TrimSpace(out) != want {
		t.Fatalf("import summary:\n got %q\nwant %q", out, want)
	}
	if !strings.Contains(r.stderr, "1 secret rows skipped") || !strings.Contains(r.stderr, "importing") {
		t.Fatalf("import stderr: %q", r.stderr)
	}

	again := filepath.Join(dir, "dst.jsonl")
	if js := decodeJSON[exportSummary](t, s.run(dst, "", false, "export", "--json", again).must(t)); js.Atoms != 9 || js.File != again {
		t.Fatalf("second export: %+v", js)
	}
	srcRows, srcSecrets := readExport(t, exported)
	dstRows, dstSecrets := readExport(t, again)
	if srcSecrets != 1 || dstSecrets != 0 {
		t.Fatalf("secrets: source %d, copy %d", srcSecrets, dstSecrets)
	}
	if !reflect.DeepEqual(srcRows, dstRows) {
		t.Fatalf("contents differ:\nsource:\n%s\ncopy:\n%s", strings.Join(srcRows, "\n"), strings.Join(dstRows, "\n"))
	}

	// Importing the same export again: the write gate refuses what
	// duplicates a live atom (the 3 plain atoms and the 2 chain heads); it
	// compares with live atoms only, so the replaced revisions are written
	// again, then removed when their chain's head turns out to be here
	// already: no live copy of a replaced memory is left.
	st := decodeJSON[importStats](t, s.run(dst, "", false, "import", "--json", "--chunk", "2", exported).must(t))
	if st.Stored != 0 || st.Filtered != 9 || st.Failed != 0 || st.SkippedSecrets != 1 || st.ChainLinks != 0 {
		t.Fatalf("second import: %+v", st)
	}

	t.Run("export to stdout", func(t *testing.T) {
		r := s.run(dst, "", false, "export")
		if lines := strings.Count(r.must(t), "\n"); lines != 9 || !strings.Contains(r.stderr, "exported 9 atoms") {
			t.Fatalf("stdout export: %d lines, stderr %q", lines, r.stderr)
		}
	})
	t.Run("a link whose predecessor is filtered is reported", func(t *testing.T) {
		// The older revision repeats a live memory's text: the gate filters
		// it, so the newer one cannot supersede it in the copy.
		k := s.newKey(t, "cli-export-dup")
		w := func(args ...string) string {
			t.Helper()
			res := decodeJSON[hebb.WriteResult](t, s.run(k, "", false, append([]string{"write", "--json"}, args...)...).must(t))
			return res.ID()
		}
		old := w("--domain", "team", "Lunch is at noon in the canteen")
		w("--domain", "team", "--supersedes", old, "Lunch moved to one o'clock in the canteen")
		w("--domain", "team", "--metadata", `{"again":true}`, "Lunch is at noon in the canteen")
		f := filepath.Join(dir, "dup.jsonl")
		s.run(k, "", false, "export", "-o", f).must(t)
		r := s.run(s.newKey(t, "cli-export-dup-dst"), "", false, "import", "--json", f)
		st := decodeJSON[importStats](t, r.must(t))
		if st.LinksNotMade != 1 || !strings.Contains(r.stderr, "that link is not made") {
			t.Fatalf("a lost link: %+v stderr %q", st, r.stderr)
		}
	})
	t.Run("large rows go in smaller requests", func(t *testing.T) {
		// 300 rows of 60 KB metadata in chunks of 500 made an 18 MB request
		// (413 over the 16 MiB cap): the import stopped, nothing written.
		big := filepath.Join(dir, "big.jsonl")
		var b strings.Builder
		pad := strings.Repeat("x", 60000)
		for i := range 300 {
			fmt.Fprintf(&b, `{"atom_id":"%d","content":"Sensor reading %d from station %d","domain":"sensors","metadata":{"pad":"%s"},"atom_type":"episode","supersedes":[],"superseded_by":null}`+"\n",
				i, i*7919, i%13, pad)
		}
		if err := os.WriteFile(big, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		r := s.run(s.newKey(t, "cli-import-big"), "", false, "import", "--json", big)
		if st := decodeJSON[importStats](t, r.must(t)); st.Rows != 300 || st.Failed != 0 || st.Stored+st.Filtered != 300 {
			t.Fatalf("large rows: %+v stderr %q", st, r.stderr)
		}
	})
	t.Run("a concept no write takes is left out", func(t *testing.T) {
		// An earlier server extracted words of any length as concepts; a
		// write refuses one over 200 characters, so the row failed.
		long := filepath.Join(dir, "long.jsonl")
		body := `{"atom_id":"1","content":"Checksum noted for the release build","concepts":["checksum","` + strings.Repeat("f", 201) +
			`"],"domain":"general","atom_type":"episode","supersedes":[],"superseded_by":null}` + "\n"
		if err := os.WriteFile(long, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		r := s.run(s.newKey(t, "cli-import-long"), "", false, "import", "--json", long)
		if st := decodeJSON[importStats](t, r.must(t)); st.Stored != 1 || st.Failed != 0 || !strings.Contains(r.stderr, "over 200 characters left out") {
			t.Fatalf("long concept: %+v stderr %q", st, r.stderr)
		}
	})
	t.Run("a cut export is named", func(t *testing.T) {
		cut := filepath.Join(dir, "cut.jsonl")
		body := `{"atom_id":"1","content":"A fact before the cut","domain":"general","atom_type":"episode","supersedes":[],"superseded_by":null}
{"error":"export aborted before its end: run it again"}`
		if err := os.WriteFile(cut, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		r := s.run(dst, "", false, "import", cut)
		if r.err == nil || !strings.Contains(r.stderr, "the export is incomplete") {
			t.Fatalf("cut export: err %v stderr %q", r.err, r.stderr)
		}
	})
	t.Run("bad rows fail alone", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.jsonl")
		body := `{"atom_id":"1","content":"A fresh fact about kites","domain":"general","atom_type":"episode","supersedes":[],"superseded_by":null}
not json
{"atom_id":"2","content":"","domain":"general","atom_type":"episode","supersedes":[],"superseded_by":null}
{"atom_id":"3","content":"Another fresh fact about lanterns","domain":"general","atom_type":"episode","supersedes":[],"superseded_by":null}
`
		if err := os.WriteFile(bad, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		r := s.run(dst, "", false, "import", "--json", bad)
		st := decodeJSON[importStats](t, r.stdout)
		if st.Rows != 4 || st.Stored != 2 || st.Failed != 2 || !strings.Contains(r.stderr, "line 3: body.items.1.content") {
			t.Fatalf("bad rows: %+v stderr %q", st, r.stderr)
		}
		// The import goes on past them, and its exit status says some failed.
		if r.err == nil || !strings.Contains(r.err.Error(), "2 rows failed") {
			t.Errorf("an import with failed rows returned %v", r.err)
		}
	})
}

// TestImportResumesAChain: an import stopped in the middle of a chain (here
// by the atom limit) and run again makes the chain whole, where the rest of
// it became a chain of its own and the copy already there stayed live.
func TestImportResumesAChain(t *testing.T) {
	s := startCLIServer(t)
	ctx := context.Background()
	src := s.newKey(t, "resume-src")
	prev := ""
	for i, text := range []string{"The staging database runs on host alpha", "The staging database moved to host bravo",
		"The staging database moved to host charlie", "The staging database moved to host delta",
		"The staging database moved to host echo", "The staging database moved to host foxtrot"} {
		args := []string{"write", "--json", "--domain", "ops"}
		if i > 0 {
			args = append(args, "--supersedes", prev)
		}
		res := decodeJSON[hebb.WriteResult](t, s.run(src, "", false, append(args, text)...).must(t))
		prev = res.ID()
	}
	file := filepath.Join(t.TempDir(), "chain.jsonl")
	s.run(src, "", false, "export", "-o", file).must(t)

	org, err := s.admin.CreateOrg(ctx, "resume-dst")
	if err != nil {
		t.Fatal(err)
	}
	limit := func(n int64) {
		t.Helper()
		if _, err := s.admin.UpdateSettings(ctx, org.OrgID, hebb.SettingsUpdate{Plan: &hebb.PlanUpdate{AtomLimit: hebb.Ptr(n)}}); err != nil {
			t.Fatal(err)
		}
	}
	limit(3)
	if r := s.run(org.APIKey, "", false, "import", file); r.err == nil {
		t.Fatalf("the import passed the atom limit: %q", r.stdout)
	}
	limit(0) // no limit
	s.run(org.APIKey, "", false, "import", file).must(t)

	again := filepath.Join(t.TempDir(), "again.jsonl")
	s.run(org.APIKey, "", false, "export", "-o", again).must(t)
	raw, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	var rows, live int
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		a := decodeJSON[hebb.Atom](t, line)
		rows++
		if a.SupersededBy == nil {
			live++
		}
	}
	if rows != 6 || live != 1 {
		t.Fatalf("after the second run: %d rows, %d live (want one chain of 6):\n%s", rows, live, raw)
	}
}
