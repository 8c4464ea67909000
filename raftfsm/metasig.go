package raftfsm

import "unicode/utf8"

// A metadata signature summarises an atom's metadata in 128 bits, kept per
// domain row (domainIndex.sigs), so that a search under a metadata filter
// rules out most rows the filter refuses without reading their atoms: at
// min_relevance 0 a filter few atoms pass had the search read and match
// every atom of the tenant, one cache miss each (15-19 ms a read at 100k
// atoms, 175 ms at 1M).
//
// The signature sets, for each top-level key of the metadata (every
// occurrence of a repeated key), the key's bit, and for a scalar value
// (string, number, true, false, null) three bits of the key and the
// value's canonical key (appendCanon: equal values, equal keys); a string
// value also sets three bits of the key and a string mark, and an array
// value three bits of the key and each of its scalar elements. A condition
// needs its top-level key's bit; an eq of a top-level field with a scalar
// operand needs that pair's bits too, an in of scalars the bits of one of
// its elements, a contains of a scalar those of an array element equal to
// it or, for a string operand, the string mark. A filter passes an atom
// only if every condition holds, and a condition holds only if the key is
// there with such a value, so a signature without what a condition needs
// belongs to an atom the filter refuses: the test has false positives
// (bits set by other keys and values), which the filter itself then
// refuses, and no false negatives (TestFilterMatchesReference and
// FuzzFilter check it). Metadata that does not scan as an object, which no
// filter passes, gets every bit.
//
// Width and bits a value: at 64 bits and two a value, metadata of three
// keys and a two-element array set a dozen bits, and an eq or contains of
// a value no atom holds let 4-8% of the rows through (some values far
// more: their bits fell on bits every atom sets); 100k such atoms, 20
// absent values each, mean p50 of a read at min_relevance 0 in process:
// 3.2 ms (eq) and 17.4 ms (contains) at 64 bits and two, 1.6 and 2.5-3.0
// at 128 and two, 0.8-1.0 and 1.7-2.1 at 128 and three, for 8 more bytes
// a row.

// signature is the 128 bits of a metadata signature.
type signature [2]uint64

// has reports whether s has every bit of m.
func (s signature) has(m signature) bool { return s[0]&m[0] == m[0] && s[1]&m[1] == m[1] }

// add sets the bits of m in s.
func (s *signature) add(m signature) { s[0] |= m[0]; s[1] |= m[1] }

// sigBit is the signature of bit h%128.
func sigBit(h uint64) signature {
	var s signature
	s[h>>6&1] = 1 << (h & 63)
	return s
}

// allSigBits is the signature that rules nothing out.
var allSigBits = signature{^uint64(0), ^uint64(0)}

// maxSigValues is the most elements of an in list the test checks one by
// one; a longer list needs the key's bit alone.
const maxSigValues = 8

// sigTest is what a filter's conditions need of a signature: every bit of
// need, and, for each list of anyOf, the bits of one of its entries (the
// elements of an in).
type sigTest struct {
	need  signature
	anyOf [][]signature
}

// metaSig returns the signature of an atom's metadata: 0 for none (no
// condition holds), allSigBits for metadata no filter passes.
func metaSig(metadata []byte) signature {
	if len(metadata) == 0 {
		return signature{}
	}
	var b sigBuilder
	sc := scan{sig: &b}
	if !sc.scanMetadata(metadata, nil, nil) {
		return allSigBits
	}
	return b.sig
}

// sigBuilder collects a signature from the top-level members of a scan.
type sigBuilder struct {
	sig  signature
	room [64]byte // canonical keys of short values
}

// Marks that start the keys of the other bits a key's value sets, bytes no
// canonical key starts with: a string value (which a contains of a string
// may hold), and each scalar element of an array value.
const (
	sigString  = 0x00
	sigElement = 0x01
)

// maxSigElements is the most elements of an array value the signature
// lists; a longer array gives the atom every bit.
const maxSigElements = 32

// member adds the top-level member whose quoted key is q and whose value
// (valid JSON) is v.
func (b *sigBuilder) member(q, v []byte) {
	key := unquoted(q)
	b.sig.add(keyBit(key))
	switch v[0] {
	case '{':
		return // only scalar operands are tested by value
	case '[':
		b.elements(key, v)
	case '"':
		b.sig.add(valueBits(key, appendCanonString(b.room[:0], unquoted(v))))
		b.sig.add(valueBits(key, []byte{sigString}))
	default:
		b.sig.add(valueBits(key, appendCanonRaw(b.room[:0], v)))
	}
}

// elements adds the scalar elements of the array v, the value of key.
func (b *sigBuilder) elements(key, v []byte) {
	s := scan{m: v}
	n := 0
	for i := skipSpace(v, 1); i < len(v) && v[i] != ']'; {
		end := s.value(i, 1)
		if n++; end < 0 || n > maxSigElements {
			b.sig = allSigBits
			return
		}
		e := v[i:end]
		canon := append(b.room[:0], sigElement)
		switch e[0] {
		case '[', '{':
			canon = nil // contains tests such an operand by key alone
		case '"':
			canon = appendCanonString(canon, unquoted(e))
		default:
			canon = appendCanonRaw(canon, e)
		}
		if canon != nil {
			b.sig.add(valueBits(key, canon))
		}
		if i = skipSpace(v, end); i < len(v) && v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
}

// compileSig sets f.sig from f's conditions.
func (f *filter) compileSig() {
	for i := range f.conds {
		c := &f.conds[i]
		top := c.path[0]
		f.sig.need.add(keyBit(top))
		if len(c.path) > 1 {
			continue
		}
		switch {
		case c.op == "eq" && scalarCanon(c.want):
			f.sig.need.add(valueBits(top, c.want))
		case c.op == "contains" && scalarCanon(c.want):
			// An array holding the operand, or a string value when the
			// operand is a string.
			elem := valueBits(top, append([]byte{sigElement}, c.want...))
			if c.str {
				f.sig.anyOf = append(f.sig.anyOf, []signature{elem, valueBits(top, []byte{sigString})})
			} else {
				f.sig.need.add(elem)
			}
		case c.op == "in" && len(c.set) <= maxSigValues:
			vals := make([]signature, 0, len(c.set))
			for k := range c.set {
				if !scalarCanon([]byte(k)) {
					vals = nil // such an element is tested by key alone
					break
				}
				vals = append(vals, valueBits(top, []byte(k)))
			}
			if len(vals) == 1 {
				f.sig.need.add(vals[0])
			} else if len(vals) > 1 {
				f.sig.anyOf = append(f.sig.anyOf, vals)
			}
		}
	}
}

// maybe reports whether an atom whose metadata has signature sig may pass
// f; false means f refuses it.
func (f *filter) maybe(sig signature) bool {
	if f.never || !sig.has(f.sig.need) {
		return false
	}
	for _, vals := range f.sig.anyOf {
		ok := false
		for _, v := range vals {
			if sig.has(v) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// prune sets out[i] for the rows from+i of d that f refuses by their
// signature (vecmath SearchOptions.Prune).
func (f *filter) prune(d *domainIndex, from int, out []bool) {
	sigs := d.sigs[from : from+len(out)]
	if need := f.sig.need; !f.never && len(f.sig.anyOf) == 0 {
		for i, sig := range sigs {
			out[i] = !sig.has(need)
		}
		return
	}
	for i, sig := range sigs {
		out[i] = !f.maybe(sig)
	}
}

// scalarCanon reports whether canon is the canonical key of a scalar.
func scalarCanon(canon []byte) bool {
	return len(canon) > 0 && canon[0] != canonArray && canon[0] != canonObject
}

// keyBit is the signature bit of a top-level key.
func keyBit[T string | []byte](key T) signature {
	return sigBit(sigMix(fnvAdd(fnvOffset, key)))
}

// valueBits are the three signature bits of a top-level key holding the
// value of canonical key canon.
func valueBits[T string | []byte](key T, canon []byte) signature {
	h := sigMix(fnvAdd(fnvAdd(fnvAdd(fnvOffset, key), "\xff"), canon))
	s := sigBit(h)
	s.add(sigBit(h >> 7))
	s.add(sigBit(h >> 14))
	return s
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvAdd folds s into the FNV-1a hash h.
func fnvAdd[T string | []byte](h uint64, s T) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// sigMix spreads the hash's bits (the finaliser of SplitMix64), so that
// its low fourteen bits pick the signature bits evenly.
func sigMix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// unquoted returns the text of the valid JSON string q as the decoder
// reads it (rawString), without a copy when it needs no decoding.
func unquoted(q []byte) []byte {
	in := q[1 : len(q)-1]
	for _, c := range in {
		if c == '\\' {
			return []byte(rawString(q))
		}
	}
	if !utf8.Valid(in) {
		return []byte(rawString(q))
	}
	return in
}
