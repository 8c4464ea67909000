package raftfsm

import (
	"encoding/hex"
	"errors"
)

// ID is an atom identifier (a UUID, version 7 when hebb assigns it).
type ID [16]byte

// IsZero reports whether id is the zero ID, used for "none".
func (id ID) IsZero() bool { return id == ID{} }

// String formats id in the canonical 8-4-4-4-12 form.
func (id ID) String() string {
	b := id.canonical()
	return string(b[:])
}

// canonical is id in the 8-4-4-4-12 form.
func (id ID) canonical() (b [36]byte) {
	hex.Encode(b[0:8], id[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:], id[10:])
	return b
}

var errBadID = errors.New("raftfsm: malformed UUID")

// ParseID parses the canonical 36-character UUID form (any hex case).
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, errBadID
	}
	src := []byte(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36])
	if _, err := hex.Decode(id[:], src); err != nil {
		return id, errBadID
	}
	return id, nil
}

func compareID(a, b ID) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
