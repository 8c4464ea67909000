package use

import (
	"errors"
	"math"
	"testing"
)

func TestTableRoundTrip(t *testing.T) {
	const dim = 4
	rows := []float32{
		1, -0.5, 0.25, 0,
		0, 0, 0, 0,
		-3, 2, 1, 0.5,
	}
	bias := []float32{0.1, -0.2, 0.3, -0.4}
	tab, err := decodeTable(EncodeTable(rows, bias, dim))
	if err != nil {
		t.Fatal(err)
	}
	if tab.vocab != 3 || tab.dim != dim {
		t.Fatalf("decoded %d x %d, want 3 x %d", tab.vocab, tab.dim, dim)
	}
	for i, want := range bias {
		if tab.bias[i] != want {
			t.Errorf("bias[%d] = %v, want %v", i, tab.bias[i], want)
		}
	}
	for r := range 3 {
		for k := range dim {
			got := tab.scale[r] * float32(tab.rows[r*dim+k])
			if want := rows[r*dim+k]; math.Abs(float64(got-want)) > 0.5*float64(tab.scale[r])+1e-7 {
				t.Errorf("row %d col %d = %v, want %v", r, k, got, want)
			}
		}
	}
}

func TestDecodeTableRejects(t *testing.T) {
	good := EncodeTable([]float32{1, 2, 3, 4}, []float32{0, 0}, 2)
	cases := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"bad magic", append([]byte("HEBBUSE0"), good[8:]...)},
		{"truncated", good[:len(good)-1]},
		{"trailing", append(append([]byte{}, good...), 0)},
		{"header only", good[:16]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := decodeTable(c.b); !errors.Is(err, ErrBadAssets) {
				t.Errorf("decodeTable error = %v, want ErrBadAssets", err)
			}
		})
	}
}

func TestParseVocab(t *testing.T) {
	cases := []struct {
		name, json string
		ok         bool
	}{
		{"not json", "{", false},
		{"not pairs", `[["a"]]`, false},
		{"too few", `[["a",0]]`, false},
		{"null scores", `[["u",0],["s",0],["e",0],["x",0],["y",0],["z",0],["▁a",null],["b",-1.5]]`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok, err := ParseVocab([]byte(c.json))
			if (err == nil) != c.ok {
				t.Fatalf("ParseVocab error = %v, want ok=%v", err, c.ok)
			}
			if c.ok && tok.pieces[6].score != 0 {
				t.Errorf("null score parsed as %v, want 0", tok.pieces[6].score)
			}
		})
	}
}

// FuzzTokenize checks that any input tokenizes without panicking into ids
// of the vocabulary, and that the builtin vector stays a unit vector.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", " ", "hello world", "🙂🙂", "a:b", "ﬁ", "\xff", "東京"} {
		f.Add(s)
	}
	tok := testTokenizer(f)
	m, err := loadedAssets()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range tok.Encode(s) {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("Encode(%q): id %d out of range", s, id)
			}
		}
		vec := make([]float32, m.dim())
		m.embed(s, vec, m.scratch())
		var ss float64
		for _, v := range vec {
			ss += float64(v) * float64(v)
		}
		if math.Abs(ss-1) > 1e-4 {
			t.Fatalf("embed(%q): squared norm %v", s, ss)
		}
	})
}
