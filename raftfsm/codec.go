package raftfsm

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// enc appends a compact binary encoding. It is used for commands and
// snapshots alike, so both are deterministic byte for byte. A snapshot's
// encoder passes its bytes on in chunks as it goes (cut): one buffer the
// size of a large state would be regrown and copied over and over.
type enc struct{ b []byte }

// chunkBytes is the size from which cut passes a chunk on.
const chunkBytes = 1 << 20

// cut passes the bytes so far to out once they reach chunkBytes and starts
// the next chunk in the same buffer: out must be done with a chunk when it
// returns (write it, hash it, copy it), so that a snapshot allocates one
// buffer, not one a megabyte.
func (e *enc) cut(out func(chunk []byte)) {
	if len(e.b) >= chunkBytes {
		out(e.b)
		e.b = e.b[:0]
	}
}

func (e *enc) u8(v uint8)       { e.b = append(e.b, v) }
func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) f64(v float64)    { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v)) }
func (e *enc) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) bytes(p []byte)   { e.uvarint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *enc) id(id ID)         { e.b = append(e.b, id[:]...) }

func (e *enc) bool(v bool) {
	if v {
		e.u8(1)
		return
	}
	e.u8(0)
}

func (e *enc) strs(s []string) {
	e.uvarint(uint64(len(s)))
	for _, v := range s {
		e.str(v)
	}
}

func (e *enc) ids(ids []ID) {
	e.uvarint(uint64(len(ids)))
	for _, id := range ids {
		e.id(id)
	}
}

func (e *enc) f32s(v []float32) {
	e.uvarint(uint64(len(v)))
	n := len(e.b)
	e.b = slices.Grow(e.b, 4*len(v))[:n+4*len(v)]
	if littleEndian {
		copy(e.b[n:], f32Bytes(v)) // the encoding is the memory: one copy
		return
	}
	for i, f := range v {
		binary.LittleEndian.PutUint32(e.b[n+4*i:], math.Float32bits(f))
	}
}

// littleEndian reports whether this machine stores a float32 as the codec
// does (little-endian IEEE 754), so vectors are encoded and decoded by copy.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// f32Bytes is v's memory as bytes.
func f32Bytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

// getF32s decodes len(v) little-endian float32s from b into v.
func getF32s(v []float32, b []byte) {
	if littleEndian {
		copy(f32Bytes(v), b[:4*len(v)])
		return
	}
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// dec reads what enc wrote. The first failure is kept in err and every later
// read returns zero values, so decoders check err once at the end. b holds
// the bytes not yet decoded: all of them, or with src the part of a stream
// read so far (src.fill reads on as decoders need more).
type dec struct {
	b    []byte
	err  error
	src  *window
	cids []int32 // the concept ids of the list interned last (interned)
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("raftfsm: truncated or corrupt %s", what)
	}
	d.b = nil
}

// has reports whether the next k bytes are in b, reading on if need be.
func (d *dec) has(k int) bool {
	return len(d.b) >= k || d.src != nil && d.src.fill(d, k)
}

// left is how many bytes are still to decode.
func (d *dec) left() int {
	if d.src != nil {
		return len(d.b) + int(d.src.left)
	}
	return len(d.b)
}

func (d *dec) u8() uint8 {
	if !d.has(1) {
		d.fail("byte")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) uvarint() uint64 {
	d.has(binary.MaxVarintLen64) // fewer only at the end
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) varint() int64 {
	d.has(binary.MaxVarintLen64)
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) f64() float64 {
	if !d.has(8) {
		d.fail("float64")
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *dec) n(max int) int {
	v := d.uvarint()
	if v > uint64(max) {
		d.fail("length")
		return 0
	}
	return int(v)
}

// count reads a length prefix of elements that take at least size bytes
// each, and fails unless that many fit in what is left after the prefix.
func (d *dec) count(size int) int {
	v := d.uvarint()
	if v > uint64(d.left()/size) {
		d.fail("length")
		return 0
	}
	return int(v)
}

// next returns the next n bytes, not copied: valid until b is read on
// twice more (window.fill); nil when they are not there.
func (d *dec) next(n int, what string) []byte {
	if !d.has(n) {
		d.fail(what)
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string { return string(d.view()) }

// view is str's bytes, not copied (see next).
func (d *dec) view() []byte { return d.next(d.count(1), "string") }

func (d *dec) bytes() []byte {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	return slices.Clone(d.next(n, "bytes"))
}

func (d *dec) id() ID {
	var id ID
	copy(id[:], d.next(16, "id"))
	return id
}

func (d *dec) bool() bool { return d.u8() == 1 }

func (d *dec) strs() []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	s := make([]string, n)
	for i := range s {
		s[i] = d.str()
	}
	return s
}

// interned is strs with each string interned in c, its names returned.
// interned reads a list of concepts as c's interned copies, their ids
// left in d.cids.
func (d *dec) interned(c *conceptIDs) []string {
	d.cids = d.cids[:0]
	n := d.count(1)
	if n == 0 {
		return nil
	}
	s := make([]string, n)
	for i := range s {
		id := c.internBytes(d.view())
		s[i] = c.names[id]
		d.cids = append(d.cids, id)
	}
	return s
}

func (d *dec) ids() []ID {
	n := d.count(16)
	if n == 0 {
		return nil
	}
	ids := make([]ID, n)
	for i := range ids {
		ids[i] = d.id()
	}
	return ids
}

func (d *dec) f32s() []float32 {
	n := d.count(4)
	if n == 0 {
		return nil
	}
	b := d.next(4*n, "vector")
	if b == nil {
		return nil
	}
	v := make([]float32, n)
	getF32s(v, b)
	return v
}
