package raftfsm

import (
	"errors"
	"fmt"
	"io"
)

// windowBytes is how much of a snapshot a streaming restore reads at a time.
const windowBytes = 4 << 20

// window feeds a dec from a stream of known length, so a restore decodes a
// snapshot of gigabytes holding a few megabytes of it at a time. It reads
// into two buffers in turn: bytes a decoder took without copying (dec.next)
// stay valid through the next fill.
type window struct {
	r    io.Reader
	left int64 // bytes r still holds
	size int   // bytes read at a time
	bufs [2][]byte
	cur  int
}

// streamDec decodes the n bytes r holds as they are read, size at a time.
func streamDec(r io.Reader, n int64, size int) *dec {
	return &dec{src: &window{r: r, left: n, size: size}}
}

// fill moves what d has not decoded to the front of the other buffer and
// reads on behind it, as much as fits; it reports whether d then holds k
// bytes. A read failure, or a stream shorter than it said, is d's error.
func (w *window) fill(d *dec, k int) bool {
	if w.left == 0 || d.err != nil {
		return false
	}
	w.cur ^= 1
	buf := w.bufs[w.cur]
	if size := max(w.size, k); cap(buf) < size {
		buf = make([]byte, size)
		w.bufs[w.cur] = buf
	}
	buf = buf[:max(w.size, k)]
	m := copy(buf, d.b)
	want := int(min(int64(len(buf)-m), w.left))
	n, err := io.ReadFull(w.r, buf[m:m+want])
	w.left -= int64(n)
	d.b = buf[:m+n]
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		d.err, d.b, w.left = fmt.Errorf("cannot read snapshot: %w", err), nil, 0
		return false
	}
	return len(d.b) >= k
}

// trailing reports whether r holds more than it said.
func (w *window) trailing() bool {
	var one [1]byte
	n, _ := io.ReadFull(w.r, one[:])
	return n > 0
}
