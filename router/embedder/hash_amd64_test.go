package embedder

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"testing"
)

// TestHashBits pins the hash embedder's vectors bit for bit on amd64, where
// the servers that made the stored vectors ran (TestHashGolden allows for
// other architectures' rounding): a speed-up must not move a bit, or a
// node built with it would find different nearest rows than its replicas.
func TestHashBits(t *testing.T) {
	const want = "01352baccb28075bb2b3a57af7473801b2e7c47f31eec55f3af1ffc10f13f5c4"
	texts := append(madeUpTexts(300), "The user prefers dark themes in editors", "?!", "",
		"Naïve café, don't: ÜBER-fast 漢字 and ひらがな 42 ٣")
	vecs, err := NewHash(HashDim).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, v := range vecs {
		for _, f := range v {
			h.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(f)))
		}
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Fatalf("vectors hash %s, want %s", got, want)
	}
}
