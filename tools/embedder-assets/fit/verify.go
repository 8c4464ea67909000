package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"

	"github.com/hebbdb/hebb/router/embedder/use"
)

// reference is one text of generate.js's reference set.
type reference struct {
	Text string    `json:"text"`
	IDs  []int32   `json:"ids"`
	Emb  []float64 `json:"emb"`
}

// minForwardCos is the least cosine the Go port may reach against a TF.js
// reference embedding.
const minForwardCos = 0.999

func readReferences(path string) ([]reference, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read references: %w", err)
	}
	var refs []reference
	if err := json.Unmarshal(b, &refs); err != nil {
		return nil, fmt.Errorf("cannot decode references: %w", err)
	}
	return refs, nil
}

// verify checks the Go tokenizer id for id and the Go forward pass against
// the TF.js references.
func verify(m *model, tok *use.Tokenizer, refs []reference) error {
	worst := 1.0
	for _, r := range refs {
		got := tok.Encode(r.Text)
		if !slices.Equal(got, r.IDs) && len(got)+len(r.IDs) > 0 {
			return fmt.Errorf("tokenizer differs from the reference on %q: %v, want %v", r.Text, got, r.IDs)
		}
		if len(r.Emb) == 0 {
			continue
		}
		_, out := m.forward([][]int32{r.IDs[:min(len(r.IDs), maxLen)]})
		var c float64
		for k, v := range out[0] {
			c += float64(v) * r.Emb[k]
		}
		worst = min(worst, c)
		if c < minForwardCos {
			return fmt.Errorf("forward pass differs from the reference on %q: cosine %.6f", r.Text, c)
		}
	}
	slog.Info("verified against the TF.js reference", "texts", len(refs), "worst cosine", worst)
	return nil
}
