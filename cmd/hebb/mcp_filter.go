package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/hebbdb/hebb/router/mcptools"
)

// maxMCPLine bounds one message line of the stdio tool server, as the SDK
// bounds its frames.
const maxMCPLine = 16 << 20

// drainWait bounds how long the stdio server, its input closed, waits for
// the answers to the requests it read (each tool call's REST call has 30 s).
const drainWait = 2 * time.Minute

// stdioFilter stands between stdin and the SDK's stdio session. The SDK
// ends the session on a line it cannot decode and, once its input closes,
// drops the requests it has not answered yet; a client that pipes its
// requests and closes stdin, or sends one bad line, lost everything after.
// The filter answers such lines itself (JSON-RPC -32700 or -32600, with
// the line's id when it has a usable one) and passes the others on; when
// stdin ends it waits for the answers to the requests it passed before it
// ends the SDK's input. It also answers what the SDK would drop: a request
// reusing a pending id, and a batch (passed message by message, answered
// with one array), and rewrites the SDK's own error texts.
type stdioFilter struct {
	in  io.Reader
	out io.Writer

	wmu     sync.Mutex // the SDK's messages and the filter's refusals, a line each
	mu      sync.Mutex
	pending map[string]int    // ids of requests passed and not yet answered
	batchOf map[string]*batch // ids of requests that came in a batch, until answered
	idle    chan struct{}     // closed once nothing is pending after stdin ended
	ended   bool
}

// batch collects the answers to the requests of one JSON-RPC batch, which
// the SDK's stdio transport refuses (protocol 2025-03-26 requires them; the
// filter passes its messages one by one and answers with one array).
type batch struct {
	want    int      // answers still to come
	replies [][]byte // answers so far
}

func newStdioFilter(in io.Reader, out io.Writer) *stdioFilter {
	return &stdioFilter{in: in, out: out, pending: map[string]int{}, batchOf: map[string]*batch{},
		idle: make(chan struct{})}
}

// transport returns the SDK's input (what the filter passes on) and output
// (the filter's writer, which notes each answer).
func (f *stdioFilter) transport() (io.ReadCloser, io.WriteCloser) {
	pr, pw := io.Pipe()
	go f.run(pw)
	return pr, nopCloser{f}
}

func (f *stdioFilter) run(pw *io.PipeWriter) {
	r := bufio.NewReaderSize(f.in, 64<<10)
	for {
		line, err := readLine(r, maxMCPLine)
		if len(line) > 0 {
			f.pass(pw, line)
		}
		if errors.Is(err, errLineTooLong) {
			f.write(mcptools.TooLarge(maxMCPLine))
			continue
		}
		if err != nil {
			break
		}
	}
	f.mu.Lock()
	f.ended = true
	f.checkIdle()
	f.mu.Unlock()
	select {
	case <-f.idle:
	case <-time.After(drainWait):
	}
	pw.Close()
}

// pass answers a line the SDK cannot take and hands it the others.
func (f *stdioFilter) pass(pw *io.PipeWriter, line []byte) {
	if refusal := mcptools.Refusal(line, true); refusal != nil {
		f.write(refusal)
		return
	}
	if trimmed := bytes.TrimSpace(line); trimmed[0] == '[' {
		f.passBatch(pw, trimmed)
		return
	}
	if !f.claim(mcptools.IDOf(line), nil) { // the SDK would drop it unanswered
		f.write(mcptools.InUse())
		return
	}
	_, _ = pw.Write(append(line, '\n'))
}

// claim notes a request id as pending (in batch b, if not nil); false when
// a request with that id is still pending. A notification (nil id) passes.
func (f *stdioFilter) claim(id json.RawMessage, b *batch) bool {
	if id == nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending[string(id)] > 0 {
		return false
	}
	f.pending[string(id)]++
	if b != nil {
		f.batchOf[string(id)] = b
		b.want++
	}
	return true
}

// passBatch hands the SDK a valid batch's messages one by one, every
// request claimed before the first is passed (an answer may come before
// the last is); their answers go out as one array (Write). A batch of
// notifications only is answered with nothing.
func (f *stdioFilter) passBatch(pw *io.PipeWriter, line []byte) {
	var items []json.RawMessage
	_ = json.Unmarshal(line, &items) // Refusal checked it
	b := &batch{}
	pass := items[:0:0]
	var refused [][]byte
	for _, it := range items {
		if f.claim(mcptools.IDOf(it), b) {
			pass = append(pass, it)
		} else {
			refused = append(refused, mcptools.InUse())
		}
	}
	f.mu.Lock()
	b.replies = append(b.replies, refused...)
	done := b.want == 0
	f.mu.Unlock()
	if done && len(refused) > 0 {
		f.write(joinBatch(refused))
	}
	for _, it := range pass {
		_, _ = pw.Write(append(bytes.Clone(it), '\n'))
	}
}

func joinBatch(replies [][]byte) []byte {
	return append(append([]byte{'['}, bytes.Join(replies, []byte{','})...), ']')
}

// Write is the SDK's output: one message a call. An error the SDK wrote in
// its own words (naming its Go types, code 0) is rewritten first.
func (f *stdioFilter) Write(p []byte) (int, error) {
	reply := p
	if clean := mcptools.CleanSDKError(p); clean != nil {
		reply = clean
	}
	if f.collect(p, reply) {
		return len(p), nil
	}
	if _, err := f.write(reply); err != nil {
		return 0, err
	}
	f.answered(p)
	return len(p), nil
}

// collect keeps the answer to a request that came in a batch, and writes
// the batch's array once it holds every answer; false for other messages.
func (f *stdioFilter) collect(p, reply []byte) bool {
	id := mcptools.AnsweredID(p)
	if id == nil {
		return false
	}
	f.mu.Lock()
	b := f.batchOf[string(id)]
	if b == nil {
		f.mu.Unlock()
		return false
	}
	delete(f.batchOf, string(id))
	b.replies = append(b.replies, bytes.TrimRight(bytes.Clone(reply), "\n"))
	b.want--
	done := b.want == 0
	f.mu.Unlock()
	if done {
		f.write(joinBatch(b.replies))
	}
	f.answered(p)
	return true
}

// answered notes the response p, if it is one, as no longer pending.
func (f *stdioFilter) answered(p []byte) {
	if id := mcptools.AnsweredID(p); id != nil {
		f.mu.Lock()
		if f.pending[string(id)]--; f.pending[string(id)] <= 0 {
			delete(f.pending, string(id))
		}
		f.checkIdle()
		f.mu.Unlock()
	}
}

func (f *stdioFilter) write(p []byte) (int, error) {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	if len(p) > 0 && p[len(p)-1] != '\n' {
		p = append(p[:len(p):len(p)], '\n')
	}
	return f.out.Write(p)
}

// checkIdle closes idle once stdin ended with no answer pending; f.mu held.
func (f *stdioFilter) checkIdle() {
	if f.ended && len(f.pending) == 0 {
		select {
		case <-f.idle:
		default:
			close(f.idle)
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its end, or errLineTooLong (and
// the line skipped) past max bytes.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
