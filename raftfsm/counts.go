package raftfsm

import (
	"math"
	"math/bits"
)

// counts holds a tenant's statistics (interface §2.9), kept as its atoms
// change, so that Stats reads them instead of walking every atom: at a
// million atoms the walk took ~24 ms under the state's read lock, and a
// write waiting for that lock holds every later search behind it.
// Secrets are never counted.
type counts struct {
	byType     [Secret]int // episodes, prototypes, singletons
	valence    fixedSum
	importance fixedSum
	prints     int // fingerprints some non-secret atom carries
}

// add counts a non-secret atom entering the tenant.
func (y *counts) add(a *Atom) {
	if a.Type == Secret {
		return
	}
	y.byType[kindOf(a.Type)]++
	y.valence.add(a.Valence)
	y.importance.add(a.Importance)
}

// remove uncounts a non-secret atom leaving the tenant.
func (y *counts) remove(a *Atom) {
	if a.Type == Secret {
		return
	}
	y.byType[kindOf(a.Type)]--
	y.valence.sub(a.Valence)
	y.importance.sub(a.Importance)
}

// retype moves a non-secret atom's count to type to (the caller then sets
// its Type).
func (y *counts) retype(a *Atom, to AtomType) {
	y.byType[kindOf(a.Type)]--
	y.byType[kindOf(to)]++
}

// revalue moves a non-secret atom's valence to v (the caller then sets it).
func (y *counts) revalue(a *Atom, v float64) {
	if a.Type != Secret {
		y.valence.sub(a.Valence)
		y.valence.add(v)
	}
}

// kindOf is the count a non-secret type goes to: Stats counts every type
// but a prototype and a singleton as an episode.
func kindOf(t AtomType) AtomType {
	if t == Prototype || t == Singleton {
		return t
	}
	return Episode
}

// atoms is total_atoms: every non-secret atom.
func (y *counts) atoms() int {
	n := 0
	for _, c := range y.byType {
		n += c
	}
	return n
}

// anyCounted reports whether list holds a non-secret atom.
func anyCounted(list []*Atom) bool {
	for _, a := range list {
		if a.Type != Secret {
			return true
		}
	}
	return false
}

// fixedSum is an exact sum of float64 values as a 128-bit two's-complement
// count of 2^-fixedFrac. Adding and then subtracting a value cancel
// exactly, in any order, so the sum of the same atoms is the same bits on
// every replica and after every restore, however the atoms came and went
// (a float64 running sum would carry each removed value's rounding and
// depend on the order of changes). Bits below 2^-fixedFrac (~1e-26) are
// dropped, alike for a value and its negation. Values are clamped to
// ±2^fixedMax; the sum overflows only past 2^(126-fixedFrac) ≈ 10^12 in
// magnitude, far beyond atoms of valence and importance in [-1, 1].
type fixedSum struct {
	hi int64
	lo uint64
}

const (
	fixedFrac = 86
	fixedMax  = 14
)

// fixedOf returns x (finite, |x| <= 2^fixedMax; else clamped, NaN as 0)
// times 2^fixedFrac, truncated toward zero.
func fixedOf(x float64) fixedSum {
	if x != x || x == 0 {
		return fixedSum{}
	}
	neg := x < 0
	ax := min(math.Abs(x), math.Ldexp(1, fixedMax))
	frac, exp := math.Frexp(ax)       // ax = frac·2^exp, frac in [0.5, 1)
	m := uint64(math.Ldexp(frac, 53)) // exact: a float64's 53-bit mantissa
	var v fixedSum
	switch s := exp - 53 + fixedFrac; {
	case s >= 64:
		v.hi = int64(m << (s - 64))
	case s > 0:
		v.hi, v.lo = int64(m>>(64-s)), m<<s
	case s > -64:
		v.lo = m >> -s
	}
	if neg {
		v = fixedSum{}.minus(v)
	}
	return v
}

func (f fixedSum) plus(g fixedSum) fixedSum {
	lo, c := bits.Add64(f.lo, g.lo, 0)
	return fixedSum{hi: f.hi + g.hi + int64(c), lo: lo}
}

func (f fixedSum) minus(g fixedSum) fixedSum {
	lo, b := bits.Sub64(f.lo, g.lo, 0)
	return fixedSum{hi: f.hi - g.hi - int64(b), lo: lo}
}

func (f *fixedSum) add(x float64) { *f = f.plus(fixedOf(x)) }
func (f *fixedSum) sub(x float64) { *f = f.minus(fixedOf(x)) }

// float returns the sum as a float64 (within a rounding or two).
func (f fixedSum) float() float64 {
	if f.hi < 0 {
		return -fixedSum{}.minus(f).float()
	}
	return math.Ldexp(float64(f.hi)*0x1p64+float64(f.lo), -fixedFrac)
}
