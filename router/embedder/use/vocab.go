package use

import (
	"encoding/json"
	"fmt"
)

// ParseVocab builds a Tokenizer from the model's vocab.json: an array of
// [piece, score] pairs in id order. A null score counts as 0, as JavaScript's
// arithmetic makes it in the reference.
func ParseVocab(data []byte) (*Tokenizer, error) {
	var raw []struct {
		Text  string
		Score *float64
	}
	var pairs [][]json.RawMessage
	if err := json.Unmarshal(data, &pairs); err != nil {
		return nil, fmt.Errorf("cannot decode vocabulary: %w", err)
	}
	for i, p := range pairs {
		if len(p) != 2 {
			return nil, fmt.Errorf("cannot decode vocabulary entry %d: %w", i, ErrBadAssets)
		}
		var e struct {
			Text  string
			Score *float64
		}
		if err := json.Unmarshal(p[0], &e.Text); err != nil {
			return nil, fmt.Errorf("cannot decode vocabulary entry %d: %w", i, err)
		}
		if err := json.Unmarshal(p[1], &e.Score); err != nil {
			return nil, fmt.Errorf("cannot decode vocabulary entry %d: %w", i, err)
		}
		raw = append(raw, e)
	}
	if len(raw) <= reservedPieces {
		return nil, fmt.Errorf("cannot use a vocabulary of %d pieces: %w", len(raw), ErrBadAssets)
	}
	pieces := make([]piece, len(raw))
	for i, e := range raw {
		var score float64
		if e.Score != nil {
			score = *e.Score
		}
		pieces[i] = piece{text: e.Text, score: score, utf16n: utf16Len(e.Text)}
	}
	return newTokenizer(pieces), nil
}
