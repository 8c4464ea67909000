package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
)

// maxExportLine bounds one JSONL line (the server's hard body cap).
const maxExportLine = 16 << 20

// ExportLine is one line of an export: the decoded atom and the line as the
// server sent it (without the newline), for a byte-exact copy.
type ExportLine struct {
	Atom Atom
	Raw  []byte
}

// errStopExport ends an export early on the caller's request.
var errStopExport = errors.New("client: export stopped")

// Export streams every atom of the caller's account (superseded revisions
// and secrets' rows included; never room atoms) and calls fn once per line,
// in the server's order. Only one line is held in memory at a time. An
// error from fn stops the export and is returned. The request is retried
// until the answer starts; a stream cut short is an error and is not
// resumed (the export has no cursor).
func (c *Client) Export(ctx context.Context, fn func(*ExportLine) error) error {
	r := &request{method: http.MethodGet, path: "/memory/export", safe: true,
		header: http.Header{"Accept": {"application/x-ndjson"}}}
	resp, err := c.c.open(ctx, r)
	if err != nil {
		return err
	}
	// Closed unread: a caller that stops early must not wait for more of
	// the stream (the connection is not reused then).
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxExportLine)
	sc.Split(wholeLines)
	n := 0
	for sc.Scan() {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		n++
		line := &ExportLine{Raw: append([]byte(nil), b...)}
		if err := json.Unmarshal(line.Raw, &line.Atom); err != nil {
			return fmt.Errorf("client: export line %d: cannot decode: %w", n, err)
		}
		if err := fn(line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return c.c.transportErr(r, fmt.Errorf("export cut after %d lines: %w", n, err))
	}
	return nil
}

// errCutMidLine is a stream that ended inside a line.
var errCutMidLine = errors.New("the stream ended inside a line")

// wholeLines splits a stream into its lines and refuses a last one without
// its newline: the stream was cut there (the server ends every line). A
// failed read (a cancelled context, a reset) keeps its own error: the
// scanner reports the first.
func wholeLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(bytes.TrimSpace(data)) > 0 {
		return 0, nil, errCutMidLine
	}
	if atEOF {
		return len(data), nil, nil
	}
	return 0, nil, nil
}

// ExportLines is Export as an iterator. Breaking out of the loop ends the
// stream; an error is yielded last.
func (c *Client) ExportLines(ctx context.Context) iter.Seq2[*ExportLine, error] {
	return func(yield func(*ExportLine, error) bool) {
		err := c.Export(ctx, func(l *ExportLine) error {
			if !yield(l, nil) {
				return errStopExport
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopExport) {
			yield(nil, err)
		}
	}
}

// ExportTo copies the export to w as JSONL and returns the number of atoms
// and bytes written.
func (c *Client) ExportTo(ctx context.Context, w io.Writer) (atoms int, bytes int64, err error) {
	err = c.Export(ctx, func(l *ExportLine) error {
		n, err := w.Write(append(l.Raw, '\n'))
		bytes += int64(n)
		if err != nil {
			return fmt.Errorf("client: cannot write export: %w", err)
		}
		atoms++
		return nil
	})
	return atoms, bytes, err
}
