package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	hebb "github.com/hebbdb/hebb/client"
)

// cmdExport is `hebb export`: stream every atom of the account as JSONL to
// a file (written under a temporary name and renamed when complete) or to
// stdout, with a progress bar when stderr is a terminal.
func cmdExport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "export", "[flags] [FILE] (default: stdout)")
	var cf commonFlags
	cf.register(fs, env, 0)
	out := fs.String("o", "", "write to FILE instead of stdout")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 0, 1); err != nil {
		return err
	}
	path := *out
	if len(pos) == 1 {
		path = pos[0]
	}
	c, ctx, cancel, err := cf.connect(ctx, env)
	if err != nil {
		return err
	}
	defer cancel()
	total := exportEstimate(ctx, c, env)
	sink, err := openSink(env, path)
	if err != nil {
		return err
	}
	atoms, bytes, err := streamExport(ctx, c, env, sink.w, total)
	if err = sink.close(err); err != nil {
		return err
	}
	summary := exportSummary{Atoms: atoms, Bytes: bytes, File: sink.name}
	switch {
	case sink.stdout:
		fmt.Fprintf(env.stderr, "exported %d atoms (%s)\n", atoms, humanBytes(bytes))
	case cf.json:
		return printJSON(env.stdout, summary)
	default:
		fmt.Fprintf(env.stdout, "exported %d atoms (%s) to %s\n", atoms, humanBytes(bytes), sink.name)
	}
	return nil
}

type exportSummary struct {
	Atoms int    `json:"atoms"`
	Bytes int64  `json:"bytes"`
	File  string `json:"file"`
}

// exportEstimate is the expected number of rows (atoms plus secrets), for
// the progress bar only; 0 when unknown or not drawn.
func exportEstimate(ctx context.Context, c *hebb.Client, env *cliEnv) int64 {
	if !env.stderrTTY {
		return 0
	}
	st, err := c.Stats(ctx)
	if err != nil {
		return 0
	}
	secrets, err := c.Secrets(ctx)
	if err != nil {
		return 0
	}
	return int64(st.TotalAtoms + len(secrets))
}

func streamExport(ctx context.Context, c *hebb.Client, env *cliEnv, w io.Writer, total int64) (int, int64, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	p := newProgress(env, "exporting")
	atoms, bytes := 0, int64(0)
	err := c.Export(ctx, func(l *hebb.ExportLine) error {
		if _, err := bw.Write(l.Raw); err != nil {
			return fmt.Errorf("cannot write export: %w", err)
		}
		if err := bw.WriteByte('\n'); err != nil {
			return fmt.Errorf("cannot write export: %w", err)
		}
		atoms++
		bytes += int64(len(l.Raw)) + 1
		p.show(int64(atoms), total, fmt.Sprintf("%d atoms · %s", atoms, humanBytes(bytes)), false)
		return nil
	})
	p.clear()
	if err != nil {
		return atoms, bytes, err
	}
	if err := bw.Flush(); err != nil {
		return atoms, bytes, fmt.Errorf("cannot write export: %w", err)
	}
	return atoms, bytes, nil
}

// sink is where an export goes: stdout, or a temporary file renamed to
// its name once the export is complete.
type sink struct {
	w      io.Writer
	name   string
	stdout bool
	tmp    *os.File
}

func openSink(env *cliEnv, path string) (*sink, error) {
	if path == "" || path == "-" {
		return &sink{w: env.stdout, name: "stdout", stdout: true}, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".partial-*")
	if err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", path, err)
	}
	return &sink{w: tmp, name: path, tmp: tmp}, nil
}

// close finishes the sink after the export ended with err: a complete
// export replaces the file, a failed one leaves no file behind.
func (s *sink) close(err error) error {
	if s.tmp == nil {
		return err
	}
	cerr := s.tmp.Close()
	if err == nil && cerr != nil {
		err = fmt.Errorf("cannot write %s: %w", s.name, cerr)
	}
	if err == nil {
		if rerr := os.Rename(s.tmp.Name(), s.name); rerr != nil {
			err = fmt.Errorf("cannot write %s: %w", s.name, rerr)
		}
	}
	if err != nil {
		_ = os.Remove(s.tmp.Name())
	}
	return err
}
