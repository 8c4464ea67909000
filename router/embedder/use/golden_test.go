package use

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"strings"
	"testing"
)

// builtinGolden is the SHA-256 of the bits of the builtin vectors of every
// text of testdata/memory-pairs.tsv (both columns, in file order) and of a
// few edge texts. The vectors are pinned: a change of a kernel's rounding
// or summation order would change what stored vectors mean.
const builtinGolden = "c2e109db296cabcf7905aa2bbfb41b1ae3969805774b18f28cc331f49338a616"

func TestBuiltinVectorsPinned(t *testing.T) {
	f, err := os.Open("testdata/memory-pairs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	texts := []string{"", " ", "x", "ÅNGSTRÖM 東京 🙂 naïve café", strings.Repeat("long text of many words ", 60)}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		texts = append(texts, cols[1:]...)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	e, err := New()
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	var b [4]byte
	for _, v := range vecs {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != builtinGolden {
		t.Fatalf("%d texts: vectors hash %s, want %s", len(texts), got, builtinGolden)
	}
}
