package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	hebb "github.com/hebbdb/hebb/client"
	"github.com/hebbdb/hebb/router/embedder"
)

const (
	maxImportChunk = 500
	maxImportLine  = 16 << 20
	// maxImportBytes bounds a write-batch request's rows (the server's cap
	// is 16 MiB): 500 rows of 60 KB metadata made an 18 MB request, 413,
	// and the import stopped with nothing written.
	maxImportBytes = 8 << 20
	maxShownFails  = 20
)

// importStats is the summary of an import.
type importStats struct {
	Rows           int `json:"rows"`
	Stored         int `json:"stored"`
	Filtered       int `json:"filtered"`
	Failed         int `json:"failed"`
	SkippedSecrets int `json:"skipped_secrets"`
	ChainLinks     int `json:"chain_links"`    // supersede links made again
	LinksNotMade   int `json:"links_not_made"` // a predecessor was filtered: its successor could not supersede it
	Unwritten      int `json:"unwritten"`      // rows read but not written: the import stopped
}

// importRow is one export line kept for writing.
type importRow struct {
	line int
	atom hebb.Atom
}

// importer re-writes an export into the caller's account. Atoms outside
// any supersede chain go through write-batch in chunks; chain members are
// written last, one by one through write, predecessors first, with their
// supersedes mapped to the fresh IDs so that the chains are made again.
type importer struct {
	c        *hebb.Client
	env      *cliEnv
	chunk    int
	pending  []importRow
	pendingB int // the export bytes of pending
	held     []importRow
	stats    importStats
	failures []string
	notes    []string
	// made maps the fresh ID of a chain member this import stored to the
	// fresh IDs of the predecessors it superseded.
	made  map[string][]string
	index map[string]int // exported atom ID → its place in held
}

// abortLine is how an export the server could not finish ends
// (router/export.go).
const abortLine = "export aborted before its end"

// cmdImport is `hebb import FILE`.
func cmdImport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "import", "[flags] FILE (an export; \"-\": stdin)")
	var cf commonFlags
	cf.register(fs, env, 0)
	chunk := fs.Int("chunk", maxImportChunk, "atoms per write-batch request, 1 to 500")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 1, 1); err != nil {
		return err
	}
	if *chunk < 1 || *chunk > maxImportChunk {
		return fmt.Errorf("--chunk must be 1 to %d", maxImportChunk)
	}
	in, size, err := openInput(env, pos[0])
	if err != nil {
		return err
	}
	defer in.Close()
	c, ctx, cancel, err := cf.connect(ctx, env)
	if err != nil {
		return err
	}
	defer cancel()
	im := &importer{c: c, env: env, chunk: *chunk}
	runErr := im.run(ctx, in, size)
	im.report(pos[0], cf.json, runErr != nil)
	if runErr != nil {
		return fmt.Errorf("import stopped: %w", runErr)
	}
	if n := im.stats.Failed; n > 0 { // exit 1: a script must see that rows were not imported
		return fmt.Errorf("%d rows failed to import (listed above)", n)
	}
	return nil
}

func openInput(env *cliEnv, path string) (io.ReadCloser, int64, error) {
	if path == "-" {
		return io.NopCloser(env.stdin), 0, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot open %s: %w", path, err)
	}
	var size int64
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return f, size, nil
}

func (im *importer) run(ctx context.Context, in io.Reader, size int64) error {
	cr := &countingReader{r: in}
	sc := bufio.NewScanner(cr)
	sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
	p := newProgress(im.env, "importing")
	defer p.clear()
	line := 0
	for sc.Scan() {
		line++
		if err := im.add(ctx, line, sc.Bytes()); err != nil {
			return err
		}
		p.show(cr.n, size, im.progressText(), false)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("cannot read line %d: %w", line+1, err)
	}
	if err := im.flush(ctx); err != nil {
		return err
	}
	p.show(cr.n, size, im.progressText(), true)
	return im.writeChains(ctx, p)
}

func (im *importer) progressText() string {
	s := im.stats
	return fmt.Sprintf("%d rows · %d stored · %d filtered · %d failed", s.Rows, s.Stored, s.Filtered, s.Failed)
}

// add takes one export line.
func (im *importer) add(ctx context.Context, line int, b []byte) error {
	if strings.TrimSpace(string(b)) == "" {
		return nil
	}
	im.stats.Rows++
	var a hebb.Atom
	if err := json.Unmarshal(b, &a); err != nil {
		im.fail(line, "not an export row: "+err.Error())
		return nil
	}
	if a.AtomID == "" && strings.Contains(string(b), abortLine) {
		im.fail(line, "the export is incomplete (the server stopped it here): export again")
		return nil
	}
	if long := dropLongConcepts(&a); long > 0 {
		im.notes = append(im.notes, fmt.Sprintf("line %d: %d concept(s) over %d characters left out (an earlier server "+
			"extracted them; no write takes one)", line, long, embedder.MaxConceptChars))
	}
	switch {
	case a.AtomType == hebb.AtomSecret:
		im.stats.SkippedSecrets++
	case len(a.Supersedes) > 0 || a.SupersededBy != nil:
		im.held = append(im.held, importRow{line: line, atom: a})
	default:
		if len(im.pending) > 0 && im.pendingB+len(b) > maxImportBytes {
			if err := im.flush(ctx); err != nil {
				return err
			}
		}
		im.pending = append(im.pending, importRow{line: line, atom: a})
		im.pendingB += len(b)
		if len(im.pending) >= im.chunk {
			return im.flush(ctx)
		}
	}
	return nil
}

// dropLongConcepts removes the concepts a write refuses (over
// embedder.MaxConceptChars) and returns how many there were.
func dropLongConcepts(a *hebb.Atom) int {
	n := len(a.Concepts)
	a.Concepts = slices.DeleteFunc(a.Concepts, func(c string) bool {
		return utf8.RuneCountInString(c) > embedder.MaxConceptChars
	})
	return n - len(a.Concepts)
}

// writeRequestOf is what is written again of an exported atom: its
// content, concepts, domain, metadata, fingerprint and external_ref.
func writeRequestOf(a *hebb.Atom) hebb.WriteRequest {
	req := hebb.WriteRequest{Content: a.Content, Concepts: a.Concepts, Domain: a.Domain}
	if len(a.Metadata) > 0 && string(a.Metadata) != "null" {
		req.Metadata = a.Metadata
	}
	if a.Fingerprint != nil {
		req.Fingerprint = *a.Fingerprint
	}
	if a.ExternalRef != nil {
		req.ExternalRef = *a.ExternalRef
	}
	return req
}

// flush writes the pending rows through write-batch. Items the server
// rejects by location (a 400 naming body.items.N) are counted as failed
// and the rest is sent again; any other error stops the import.
func (im *importer) flush(ctx context.Context) error {
	rows := im.pending
	im.pending, im.pendingB = nil, 0
	for len(rows) > 0 {
		req := hebb.BatchWriteRequest{Items: make([]hebb.WriteRequest, len(rows))}
		for i := range rows {
			req.Items[i] = writeRequestOf(&rows[i].atom)
		}
		res, err := im.c.WriteBatch(ctx, req)
		if err == nil {
			im.tally(rows, res)
			return nil
		}
		bad := rejectedItems(err, len(rows))
		if len(bad) == 0 {
			return err
		}
		kept := rows[:0]
		for i, r := range rows {
			if msg, ok := bad[i]; ok {
				im.fail(r.line, msg)
			} else {
				kept = append(kept, r)
			}
		}
		rows = kept
	}
	return nil
}

// rejectedItems maps the item indexes a validation error names to its
// messages; nil when the error names none.
func rejectedItems(err error, n int) map[int]string {
	ae := hebb.AsAPIError(err)
	if ae == nil || ae.Code != hebb.CodeValidation {
		return nil
	}
	bad := map[int]string{}
	for _, fe := range ae.Errors {
		if len(fe.Loc) < 3 || fe.Loc[1] != "items" {
			continue
		}
		i, ok := fe.Loc[2].(float64)
		if ok && int(i) >= 0 && int(i) < n {
			bad[int(i)] = fe.LocString() + ": " + fe.Msg
		}
	}
	return bad
}

func (im *importer) tally(rows []importRow, res *hebb.BatchWriteResult) {
	for _, r := range res.Results {
		switch {
		case r.Failed():
			im.fail(rows[r.Index].line, string(r.Error))
		case r.Stored:
			im.stats.Stored++
		default:
			im.stats.Filtered++
		}
	}
}

func (im *importer) fail(line int, msg string) {
	im.stats.Failed++
	im.failures = append(im.failures, fmt.Sprintf("line %d: %s", line, msg))
}

// writeChains writes the chain members, a predecessor before what replaced
// it, each superseding the fresh IDs of its already written predecessors.
func (im *importer) writeChains(ctx context.Context, p *progress) error {
	index := make(map[string]int, len(im.held))
	for i := range im.held {
		index[im.held[i].atom.AtomID] = i
	}
	im.index = index
	fresh := map[string]string{}
	done := make([]bool, len(im.held))
	left, stuck := len(im.held), false
	for left > 0 {
		moved := false
		for i := range im.held {
			if done[i] || !stuck && !predecessorsDone(&im.held[i].atom, index, done) {
				continue
			}
			if err := im.writeChainAtom(ctx, &im.held[i], fresh); err != nil {
				return err
			}
			done[i], left, moved = true, left-1, true
			p.show(int64(len(im.held)-left), int64(len(im.held)), "chains · "+im.progressText(), false)
		}
		stuck = !moved // a cycle (never in a real export): write the rest as they come
	}
	return nil
}

func predecessorsDone(a *hebb.Atom, index map[string]int, done []bool) bool {
	for _, id := range a.Supersedes {
		if j, ok := index[id]; ok && !done[j] {
			return false
		}
	}
	return true
}

func (im *importer) writeChainAtom(ctx context.Context, r *importRow, fresh map[string]string) error {
	req := writeRequestOf(&r.atom)
	for _, old := range r.atom.Supersedes {
		if id, ok := fresh[old]; ok {
			req.Supersedes = append(req.Supersedes, id)
		} else if im.inFile(old) {
			im.stats.LinksNotMade++
			im.notes = append(im.notes, fmt.Sprintf("line %d: it replaced %s, which was not stored here "+
				"(filtered as a duplicate of a live memory, or failed): that link is not made", r.line, old))
		}
	}
	res, err := im.c.Write(ctx, req)
	if err != nil {
		ae := hebb.AsAPIError(err)
		if ae != nil && (ae.StatusCode == 400 || ae.StatusCode == 404 || ae.StatusCode == 409) {
			im.fail(r.line, ae.Message)
			return nil
		}
		return err
	}
	if !res.Stored {
		im.stats.Filtered++
		// Already here (an import run twice): the predecessors this run
		// stored for it would be live copies of replaced memories.
		if err := im.unmake(ctx, req.Supersedes); err != nil {
			return err
		}
		// The copy already here, when it is this very row, goes on the
		// chain: a re-run of an import that stopped mid-chain made the
		// rest of the chain a separate one, and left the copy live.
		if id, ok := im.sameAtomHere(ctx, res.Reason, req); ok {
			fresh[r.atom.AtomID] = id
		}
		return nil
	}
	im.stats.Stored++
	im.stats.ChainLinks += len(res.Superseded)
	fresh[r.atom.AtomID] = res.ID()
	if im.made == nil {
		im.made = map[string][]string{}
	}
	im.made[res.ID()] = req.Supersedes
	return nil
}

// sameAtomHere is the ID of the live atom a write was refused as a
// duplicate of (its reason "duplicate of <id>: ..."), when that atom holds
// everything the import writes of the row: an earlier run's copy of it,
// not another memory that only reads alike.
func (im *importer) sameAtomHere(ctx context.Context, reason string, req hebb.WriteRequest) (string, bool) {
	rest, ok := strings.CutPrefix(reason, "duplicate of ")
	if !ok || len(rest) < 36 {
		return "", false
	}
	a, err := im.c.Atom(ctx, rest[:36])
	if err != nil {
		return "", false
	}
	if a.SupersededBy != nil || !sameWrite(writeRequestOf(a), req) {
		return "", false
	}
	return a.AtomID, true
}

// sameWrite reports whether two writes store the same fields (their
// supersedes aside).
func sameWrite(x, y hebb.WriteRequest) bool {
	metadata := func(m any) string { raw, _ := m.(json.RawMessage); return string(raw) } // as writeRequestOf sets it
	return x.Content == y.Content && slices.Equal(x.Concepts, y.Concepts) && x.Domain == y.Domain &&
		metadata(x.Metadata) == metadata(y.Metadata) && x.Fingerprint == y.Fingerprint && x.ExternalRef == y.ExternalRef
}

// inFile reports whether an exported atom ID is a chain member of the
// file being imported.
func (im *importer) inFile(id string) bool {
	_, ok := im.index[id]
	return ok
}

// unmake deletes chain members this import stored, and their predecessors
// it stored, counting them filtered instead.
func (im *importer) unmake(ctx context.Context, ids []string) error {
	for _, id := range ids {
		preds, ok := im.made[id]
		if !ok {
			continue
		}
		delete(im.made, id)
		if _, err := im.c.DeleteAtom(ctx, id); err != nil {
			return fmt.Errorf("cannot remove the copy %s of a replaced memory already here: %w", id, err)
		}
		im.stats.Stored--
		im.stats.Filtered++
		im.stats.ChainLinks -= len(preds)
		if err := im.unmake(ctx, preds); err != nil {
			return err
		}
	}
	return nil
}

// report prints the summary (stdout) and the failures (stderr); stopped:
// the import ended on an error, so rows after those counted were not
// written.
func (im *importer) report(path string, asJSON, stopped bool) {
	if stopped {
		s := im.stats
		im.stats.Unwritten = s.Rows - s.Stored - s.Filtered - s.Failed - s.SkippedSecrets
	}
	for _, n := range im.notes {
		fmt.Fprintln(im.env.stderr, "note:", n)
	}
	shown := im.failures
	if len(shown) > maxShownFails {
		shown = shown[:maxShownFails]
	}
	for _, f := range shown {
		fmt.Fprintln(im.env.stderr, "failed:", f)
	}
	if n := len(im.failures) - len(shown); n > 0 {
		fmt.Fprintf(im.env.stderr, "failed: ... and %d more\n", n)
	}
	if im.stats.SkippedSecrets > 0 {
		fmt.Fprintf(im.env.stderr, "note: %d secret rows skipped: secret values are never exported; "+
			"store them again with `hebb vault put`\n", im.stats.SkippedSecrets)
	}
	if asJSON {
		_ = printJSON(im.env.stdout, im.stats)
		return
	}
	s := im.stats
	fmt.Fprintf(im.env.stdout, "imported %s: %d stored, %d filtered, %d failed (%d rows", path, s.Stored, s.Filtered, s.Failed, s.Rows)
	if s.SkippedSecrets > 0 {
		fmt.Fprintf(im.env.stdout, ", %d secrets skipped", s.SkippedSecrets)
	}
	if s.ChainLinks > 0 {
		fmt.Fprintf(im.env.stdout, ", %d supersede links made again", s.ChainLinks)
	}
	if s.LinksNotMade > 0 {
		fmt.Fprintf(im.env.stdout, ", %d not (noted above)", s.LinksNotMade)
	}
	if stopped {
		fmt.Fprintf(im.env.stdout, "; stopped: %d rows read were not written", s.Unwritten)
	}
	fmt.Fprintln(im.env.stdout, ")")
}
