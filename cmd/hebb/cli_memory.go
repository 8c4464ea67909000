package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	hebb "github.com/hebbdb/hebb/client"
)

const cmdTimeout = time.Minute

// cmdWrite is `hebb write`: store one memory.
func cmdWrite(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "write", "[flags] <content> (\"-\" or nothing: read stdin)")
	var cf commonFlags
	cf.register(fs, env, cmdTimeout)
	domain := fs.String("domain", "", "domain (default general; xroom:<room_id> for a room)")
	concepts := fs.String("concepts", "", "comma-separated key concepts (default: extracted)")
	metadata := fs.String("metadata", "", "metadata as a JSON object")
	fingerprint := fs.String("fingerprint", "", "exact-match fingerprint")
	ref := fs.String("external-ref", "", "client reference; writing it again stores nothing")
	supersedes := fs.String("supersedes", "", "comma-separated atom IDs this memory replaces")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	content, err := argsOrStdin(env, pos)
	if err != nil {
		return err
	}
	req := hebb.WriteRequest{Content: content, Domain: *domain, Concepts: splitList(*concepts),
		Fingerprint: *fingerprint, ExternalRef: *ref, Supersedes: splitList(*supersedes)}
	if *metadata != "" {
		if !json.Valid([]byte(*metadata)) {
			return errors.New("--metadata is not valid JSON")
		}
		req.Metadata = json.RawMessage(*metadata)
	}
	c, ctx, cancel, err := cf.connect(ctx, env)
	if err != nil {
		return err
	}
	defer cancel()
	res, err := c.Write(ctx, req)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(env.stdout, res)
	}
	switch {
	case res.Stored:
		fmt.Fprintf(env.stdout, "stored %s (importance %.2f)\n", res.ID(), res.Importance)
	case res.AtomID != nil:
		fmt.Fprintf(env.stdout, "not stored: %s (atom %s)\n", res.Reason, res.ID())
	default:
		fmt.Fprintf(env.stdout, "not stored: %s\n", res.Reason)
	}
	if len(res.Superseded) > 0 {
		fmt.Fprintf(env.stdout, "superseded %s\n", strings.Join(res.Superseded, ", "))
	}
	return nil
}

// argsOrStdin joins the positional words, or reads stdin for none or "-".
func argsOrStdin(env *cliEnv, pos []string) (string, error) {
	if len(pos) > 0 && !(len(pos) == 1 && pos[0] == "-") {
		return strings.Join(pos, " "), nil
	}
	b, err := io.ReadAll(env.stdin)
	if err != nil {
		return "", fmt.Errorf("cannot read stdin: %w", err)
	}
	s := strings.TrimRight(string(b), "\r\n")
	if strings.TrimSpace(s) == "" {
		return "", errors.New("nothing to write: give the content as arguments or on stdin")
	}
	return s, nil
}

// cmdRead is `hebb read`: search memories.
func cmdRead(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "read", "[flags] <query>")
	var cf commonFlags
	cf.register(fs, env, cmdTimeout)
	domain := fs.String("domain", "", "only this domain (a room: xroom:<room_id>)")
	var topK optInt
	var minRel, diversity optFloat
	fs.Var(&topK, "top-k", "results wanted, 1 to 500 (default 10)")
	fs.Var(&minRel, "min-relevance", "relevance floor, 0 to 1 (default 0.3)")
	fs.Var(&diversity, "diversity", "0 to 1: trade relevance for variety (default 0)")
	history := fs.Bool("history", false, "include superseded revisions")
	concepts := fs.String("concepts", "", "comma-separated concept hints")
	fingerprint := fs.String("fingerprint", "", "exact-match fingerprint")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 1, -1); err != nil {
		return err
	}
	c, ctx, cancel, err := cf.connect(ctx, env)
	if err != nil {
		return err
	}
	defer cancel()
	res, err := c.Read(ctx, hebb.ReadRequest{Query: strings.Join(pos, " "), Domain: *domain, TopK: topK.v,
		MinRelevance: minRel.v, Diversity: diversity.v, IncludeHistory: *history, Concepts: splitList(*concepts),
		Fingerprint: *fingerprint})
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(env.stdout, res)
	}
	if len(res.Items) == 0 {
		fmt.Fprintln(env.stdout, "no memories found")
		return nil
	}
	for i, it := range res.Items {
		note := ""
		if it.SupersededBy != nil {
			note = " (replaced by " + *it.SupersededBy + ")"
		}
		fmt.Fprintf(env.stdout, "%d. [%.2f] %s\n   %s · %s · %s%s\n", i+1, it.Relevance, oneLine(it.Content, 120),
			it.Domain, it.AtomID, it.Source, note)
	}
	return nil
}

// givenFlags renders the flags given on the command line, but for skip, as
// shell words: the next page's command keeps the filters of this one.
func givenFlags(fs *flag.FlagSet, skip ...string) string {
	var b strings.Builder
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(skip, f.Name) {
			return
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			if f.Value.String() == "true" {
				fmt.Fprintf(&b, " --%s", f.Name) // "--all true" would make true an argument
			} else {
				fmt.Fprintf(&b, " --%s=%s", f.Name, f.Value)
			}
			return
		}
		fmt.Fprintf(&b, " --%s %s", f.Name, shellWord(f.Value.String()))
	})
	return b.String()
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@+=,", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// cmdRecent is `hebb recent`: the feed, newest first.
func cmdRecent(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "recent", "[flags]")
	var cf commonFlags
	cf.register(fs, env, cmdTimeout)
	domain := fs.String("domain", "", "only this domain (a room: xroom:<room_id>)")
	limit := fs.Int("limit", 20, "entries per page, 1 to 100")
	since := fs.String("since", "", "oldest instant, inclusive (RFC 3339 or YYYY-MM-DD)")
	until := fs.String("until", "", "newest instant, inclusive")
	cursor := fs.String("cursor", "", "continue from a previous page")
	all := fs.Bool("all", false, "follow the cursor to the end of the feed")
	history := fs.Bool("history", false, "include superseded revisions")
	exclude := fs.String("exclude-author", "", "drop entries by this author principal")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 0, 0); err != nil {
		return err
	}
	req := hebb.RecentRequest{Domain: *domain, Limit: *limit, Cursor: *cursor, IncludeHistory: *history,
		ExcludeAuthor: *exclude}
	if req.Since, err = parseWhen(*since, "--since"); err != nil {
		return err
	}
	if req.Until, err = parseWhen(*until, "--until"); err != nil {
		return err
	}
	c, ctx, cancel, err := cf.connect(ctx, env)
	if err != nil {
		return err
	}
	defer cancel()
	resume := func(cursor string) string {
		return "hebb recent" + givenFlags(fs, "cursor", "json", "url", "timeout") + " --cursor " + cursor
	}
	if *all && !flagGiven(fs, "limit") {
		req.Limit = 100 // the fewest calls (each counts against the daily query quota)
	}
	var items []hebb.RecentItem
	page, err := recentPages(ctx, c, req, *all, func(p *hebb.RecentResponse) {
		if cf.json {
			items = append(items, p.Items...)
			return
		}
		for _, it := range p.Items { // as they come: a later page's failure keeps them
			fmt.Fprintf(env.stdout, "%s  %s  %s  %s\n", formatTime(it.CreatedAt), it.AtomID, it.Domain, oneLine(it.Content, 100))
		}
		items = append(items, p.Items...)
	})
	if err != nil {
		if page != nil && page.NextCursor != nil {
			return fmt.Errorf("%w (to go on from here: %s)", err, resume(*page.NextCursor))
		}
		return err
	}
	if cf.json {
		if *all {
			page.Items = append([]hebb.RecentItem{}, items...)
		}
		return printJSON(env.stdout, page)
	}
	if len(items) == 0 {
		fmt.Fprintln(env.stdout, "no memories")
	}
	if page.NextCursor != nil {
		fmt.Fprintf(env.stdout, "more: %s\n", resume(*page.NextCursor))
	}
	return nil
}

// flagGiven reports whether the command line set flag name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// recentPages reads one page, or with all every page from req's cursor on,
// handing each to each. It returns the last page read: on an error, the
// one before it, whose cursor the reading goes on from.
func recentPages(ctx context.Context, c *hebb.Client, req hebb.RecentRequest, all bool,
	each func(*hebb.RecentResponse)) (*hebb.RecentResponse, error) {
	var last *hebb.RecentResponse
	for {
		p, err := c.Recent(ctx, req)
		if err != nil {
			return last, err
		}
		each(p)
		last = p
		if !all || p.NextCursor == nil || *p.NextCursor == "" {
			return last, nil
		}
		req.Cursor = *p.NextCursor
	}
}

// parseWhen reads an instant flag: RFC 3339, or a date (midnight UTC).
func parseWhen(s, name string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return &t, nil
		}
	}
	return nil, fmt.Errorf("%s: %q is not an RFC 3339 instant or a YYYY-MM-DD date", name, s)
}

// cmdStats is `hebb stats`.
func cmdStats(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "stats", "[flags]")
	var cf commonFlags
	cf.register(fs, env, cmdTimeout)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 0, 0); err != nil {
		return err
	}
	c, ctx, cancel, err := cf.connect(ctx, env)
	if err != nil {
		return err
	}
	defer cancel()
	st, err := c.Stats(ctx)
	if err != nil {
		return err
	}
	if cf.json {
		return printJSON(env.stdout, st)
	}
	domains := strings.Join(st.Domains, ", ")
	if domains == "" {
		domains = "(none)"
	}
	fmt.Fprintf(env.stdout, "atoms           %d (episodes %d, prototypes %d, singletons %d)\n",
		st.TotalAtoms, st.Episodes, st.Prototypes, st.Singletons)
	fmt.Fprintf(env.stdout, "hebbian edges   %d\n", st.HebbianEdges)
	fmt.Fprintf(env.stdout, "fingerprints    %d\n", st.EpisodicFingerprints)
	fmt.Fprintf(env.stdout, "domains         %s\n", domains)
	fmt.Fprintf(env.stdout, "avg valence     %.3f\n", st.AvgValence)
	fmt.Fprintf(env.stdout, "avg importance  %.3f\n", st.AvgImportance)
	return nil
}
