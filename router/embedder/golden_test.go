package embedder

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/hash-golden.json")

const goldenPath = "testdata/hash-golden.json"

type goldenVector struct {
	Text   string    `json:"text"`
	Vector []float32 `json:"vector"`
}

// TestHashGolden pins the hash embedder's output. Stored vectors were made
// by it, so any change to tokens, stems, features, weights or hashing is a
// new embedder, not a fix: if this fails on purpose, give the new one its own
// name rather than running -update-golden.
func TestHashGolden(t *testing.T) {
	texts := []string{
		"The user prefers dark themes in editors",
		"Deploy the API to production only after the migration has finished.",
		"?!",
	}
	e := NewHash(HashDim)
	if *updateGolden {
		var golden []goldenVector
		for _, text := range texts {
			golden = append(golden, goldenVector{text, embedOne(t, e, text)})
		}
		data, err := json.Marshal(golden)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("cannot read golden vectors: %v", err)
	}
	var golden []goldenVector
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatalf("cannot decode golden vectors: %v", err)
	}
	if len(golden) != len(texts) {
		t.Fatalf("golden file holds %d vectors, want %d", len(golden), len(texts))
	}
	for _, g := range golden {
		t.Run(g.Text, func(t *testing.T) {
			got := embedOne(t, e, g.Text)
			if len(got) != len(g.Vector) {
				t.Fatalf("dim %d, golden %d", len(got), len(g.Vector))
			}
			for i := range got {
				// A tolerance, not bit equality: other architectures may fuse
				// multiply-adds and round differently in the last place.
				if math.Abs(float64(got[i]-g.Vector[i])) > 1e-5 {
					t.Fatalf("component %d = %v, golden %v", i, got[i], g.Vector[i])
				}
			}
		})
	}
}
