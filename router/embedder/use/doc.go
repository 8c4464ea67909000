// Package use is hebb's builtin semantic embedder, derived from Universal
// Sentence Encoder lite and shipped inside the binary.
//
// USE lite is a 2-layer transformer (width 512, feed-forward 1536, up to 128
// word pieces) that mean-pools its last hidden states, applies a tanh dense
// layer and normalises to a 512-d unit vector. A forward pass costs tens of
// milliseconds in Go; this package instead keeps a static per-piece table
// fitted to the model: for every piece, the least-squares share of the
// model's mean-pooled hidden state over a corpus (WordNet glosses), already
// multiplied by the dense layer. Embedding a text is then: tokenize, average
// the rows of its pieces, add the bias, tanh, normalise (about a
// microsecond per piece). The table is int8 with one scale per row.
//
// Embedder, the "builtin" embedder, concatenates that semantic vector with
// the hashing embedder's vector (router/embedder.Hash), weighted so that the
// cosine of two texts is w times their semantic cosine plus 1-w times their
// hashing cosine (DefaultSemanticWeight). The hashing half keeps exact words,
// names and numbers; the semantic half matches paraphrases.
//
// Tokenizer reproduces the reference TF.js tokenizer of
// @energetic-ai/embeddings id for id (tested on the reference set in
// testdata/): NFKC, SentencePiece's word marker, a Viterbi search over the
// 8,000-piece vocabulary with the reference's tie-breaking, its UTF-16
// backtracking and its null scores counted as 0, runs of unknown characters
// merged into id 0 (which the model embeds like any piece).
//
// Assets. assets/ holds the vocabulary as published (vocab.json.gz), the
// table (table.bin.gz) and the model's licence and attribution (LICENSE,
// NOTICE). `make embedder-assets` regenerates them with
// tools/embedder-assets: a node script loads the model with TF.js to write
// the vocabulary, the corpus and the reference set, then a Go program checks
// its port of the model against TF.js (cosine >= 0.999), runs it over the
// corpus and fits the table. Building and testing need no node.
//
// Invariants:
//   - Every vector has length Dim() and unit L2 norm, for any text, the
//     empty text included: never a zero vector, never NaN.
//   - Embedding is deterministic and the same on every architecture: the
//     sums run in a fixed order and every product is rounded to float32
//     before it is added (no fused multiply-add).
//   - The assets are decoded once, on first use; an Embedder is read-only
//     afterwards and safe for concurrent use.
//   - Changing the assets, the weight or the hashing embedder changes every
//     vector: it is a new embedder, and stored vectors must be re-embedded.
package use
