package vecmath

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"
	"unsafe"
)

// codesOf encodes rows afresh.
func codesOf(q *Quantizer, rows [][]float32) *Codes {
	c := NewCodes(q)
	for _, v := range rows {
		c.Append(v)
	}
	return c
}

// equalCodes compares the codes of live rows (and the zeroed padding of
// the last block, which Truncate and encode keep clear).
func equalCodes(t *testing.T, got, want *Codes) {
	t.Helper()
	if got.n != want.n || got.inexact != want.inexact {
		t.Fatalf("rows %d (inexact %d), want %d (inexact %d)", got.n, got.inexact, want.n, want.inexact)
	}
	same := slices.Equal(got.bits, want.bits) && slices.Equal(got.nib, want.nib) &&
		slices.Equal(got.c1, want.c1) && slices.Equal(got.sd1, want.sd1) &&
		slices.Equal(got.s4, want.s4) && slices.Equal(got.nrm, want.nrm)
	if !same {
		t.Fatal("codes differ from a fresh encoding of the same rows")
	}
}

func TestCodesFollowSwapRemove(t *testing.T) {
	const dim = 100
	q := NewQuantizer(dim)
	r := newRand(21)
	rows := randRows(r, 70, dim, func(i int, v []float32) {
		if i%17 == 3 {
			v[0] = nan // exact-only rows move too
		}
	})
	c := codesOf(q, rows)
	// Remove rows the way domainIndex does: the last row moves into the
	// freed slot, then the codes shrink by one.
	for _, victim := range []int{0, 33, 5, 64, 31, 31, 0} {
		if victim >= len(rows) {
			continue
		}
		last := len(rows) - 1
		rows[victim] = rows[last]
		rows = rows[:last]
		c.Move(victim, last)
		c.Truncate(last)
		equalCodes(t, c, codesOf(q, rows))
	}
	// Set re-encodes in place; Truncate(0) empties.
	rows[2] = randUnit(r, dim)
	c.Set(2, rows[2])
	equalCodes(t, c, codesOf(q, rows))
	c.Truncate(0)
	equalCodes(t, c, NewCodes(q))
	if c.Bytes() == 0 {
		t.Fatal("Bytes counts no memory")
	}
}

// TestCodesReserve: the rows Reserve made room for append without moving
// the codes, and the codes are those of appends without it.
func TestCodesReserve(t *testing.T) {
	const dim = 100
	q := NewQuantizer(dim)
	r := newRand(5)
	var rows [][]float32
	c := NewCodes(q)
	for _, upTo := range []int{3, 40, 41, 70} {
		c.Reserve(upTo)
		c.Reserve(len(rows)) // no room needed: nothing changes
		at := [...]any{unsafe.SliceData(c.bits), unsafe.SliceData(c.nib), unsafe.SliceData(c.c1),
			unsafe.SliceData(c.sd1), unsafe.SliceData(c.s4), unsafe.SliceData(c.nrm)}
		for len(rows) < upTo {
			rows = append(rows, randUnit(r, dim))
			c.Append(rows[len(rows)-1])
		}
		now := [...]any{unsafe.SliceData(c.bits), unsafe.SliceData(c.nib), unsafe.SliceData(c.c1),
			unsafe.SliceData(c.sd1), unsafe.SliceData(c.s4), unsafe.SliceData(c.nrm)}
		if at != now {
			t.Fatalf("appending up to %d reserved rows moved the codes", upTo)
		}
		equalCodes(t, c, codesOf(q, rows))
	}
}

// TestCodesClipped: clipped codes equal the reserved ones, hold less
// memory, and take appends like any codes.
func TestCodesClipped(t *testing.T) {
	const dim = 100
	q := NewQuantizer(dim)
	r := newRand(6)
	var rows [][]float32
	c := NewCodes(q)
	c.Reserve(500)
	for range 45 {
		rows = append(rows, randUnit(r, dim))
		c.Append(rows[len(rows)-1])
	}
	got := c.Clipped()
	equalCodes(t, got, codesOf(q, rows))
	if got.Bytes() >= c.Bytes()/2 {
		t.Fatalf("clipped codes hold %d bytes, reserved ones %d", got.Bytes(), c.Bytes())
	}
	rows = append(rows, randUnit(r, dim))
	got.Append(rows[len(rows)-1])
	equalCodes(t, got, codesOf(q, rows))
}

// TestCodesAppendCode: rows encoded ahead (EncodeRow, one RowCode reused)
// and stored by AppendCode give the codes Append gives, exact-only and
// zero rows included; a row code of another dimension panics.
func TestCodesAppendCode(t *testing.T) {
	const dim = 100
	q := NewQuantizer(dim)
	r := newRand(8)
	rows := randRows(r, 70, dim, func(i int, v []float32) {
		switch i % 23 {
		case 4:
			v[1] = nan
		case 9:
			v[2] = float32(math.Inf(-1))
		case 15:
			clear(v)
		}
	})
	c := NewCodes(q)
	rc := q.RowCodeIn(make([]byte, q.RowCodeBytes()))
	for _, v := range rows {
		q.EncodeRow(v, &rc)
		c.AppendCode(&rc)
	}
	equalCodes(t, c, codesOf(q, rows))
	// A row re-encoded over an exact-only one keeps the count right.
	rows[4] = randUnit(r, dim)
	c.Set(4, rows[4])
	equalCodes(t, c, codesOf(q, rows))

	NewQuantizer(2*dim).EncodeRow(randUnit(r, 2*dim), &rc)
	defer func() {
		if recover() == nil {
			t.Fatal("a row code of another dimension was appended")
		}
	}()
	c.AppendCode(&rc)
}

func TestCodesPanics(t *testing.T) {
	q := NewQuantizer(8)
	c := codesOf(q, [][]float32{make([]float32, 8)})
	cases := map[string]func(){
		"move past the end":     func() { c.Move(0, 1) },
		"set past the end":      func() { c.Set(1, make([]float32, 8)) },
		"truncate up":           func() { c.Truncate(2) },
		"wrong vector length":   func() { c.Append(make([]float32, 9)) },
		"zero dimension":        func() { NewQuantizer(0) },
		"negative row to move":  func() { c.Move(-1, 0) },
		"negative truncate":     func() { c.Truncate(-1) },
		"vector of other width": func() { c.Set(0, make([]float32, 7)) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

func TestRotationIsOrthogonal(t *testing.T) {
	for _, dim := range []int{1, 8, 128, 300, 384, 1000} {
		t.Run(fmt.Sprintf("dim=%d", dim), func(t *testing.T) {
			q := NewQuantizer(dim)
			r := newRand(uint64(dim))
			a, b := randVec(r, dim), randVec(r, dim)
			ra, rb, tmp := make([]float32, q.pdim), make([]float32, q.pdim), make([]float32, q.pdim)
			q.rotate(a, ra, tmp)
			q.rotate(b, rb, tmp)
			for _, c := range []struct {
				what      string
				got, want float32
			}{
				{"norm", DotRef(ra, ra), DotRef(a, a)},
				{"dot", DotRef(ra, rb), DotRef(a, b)},
			} {
				if math.Abs(float64(c.got-c.want)) > 1e-4*math.Max(1, math.Abs(float64(c.want))) {
					t.Fatalf("%s after rotation %v, before %v", c.what, c.got, c.want)
				}
			}
		})
	}
}

// TestCodesGolden pins the encoding: replicas encode independently, so a
// change to the rotation or the quantisers changes which rows the write
// gate finds on upgraded nodes only. Change goldenCodes knowingly.
func TestCodesGolden(t *testing.T) {
	const goldenCodes = "2f2282a014620d86e397ce88ba2237ed168fef16c1bc32e5a2dab0d8a734ad80"
	forEachPath(t, func(t *testing.T) {
		q := NewQuantizer(384)
		r := newRand(31)
		c := NewCodes(q)
		for range 40 {
			c.Append(randUnit(r, 384))
		}
		h := sha256.New()
		h.Write(c.bits)
		h.Write(c.nib)
		for _, fs := range [][]float32{c.c1, c.sd1, c.s4, c.nrm} {
			for _, f := range fs {
				h.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(f)))
			}
		}
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != goldenCodes {
			t.Fatalf("codes hash %s, golden %s", got, goldenCodes)
		}
	})
}

// TestNonNegative: the branch-free sign bit agrees with x >= 0 at the edges
// (both zeros, the smallest and largest magnitudes, the infinities).
func TestNonNegative(t *testing.T) {
	tiny := math.Float32frombits(1)
	for _, x := range []float32{0, float32(math.Copysign(0, -1)), tiny, -tiny, 1, -1,
		math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1))} {
		want := uint64(0)
		if x >= 0 {
			want = 1
		}
		if got := nonNegative(x); got != want {
			t.Errorf("nonNegative(%g) (bits %#x) = %d, want %d", x, math.Float32bits(x), got, want)
		}
	}
}
