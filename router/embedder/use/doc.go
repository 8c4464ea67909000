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
// The table's 512-d vectors share a large common component (two unrelated
// sentences have cosine about 0.45). The semantic part is therefore their
// projection: subtract the mean vector of the fitting corpus, drop its first
// principal direction, keep the next 128, normalise (the classic "remove the
// common component" step of static sentence embeddings; mean and directions
// are computed by the generator on the fitting corpus, assets/projection).
//
// Embedder, the "builtin" embedder, concatenates that 128-d semantic vector
// with a 768-d hashing vector (router/embedder.Hash at LexicalDim), weighted
// so that the cosine of two texts is w times their semantic cosine plus 1-w
// times their hashing cosine (DefaultSemanticWeight); 896 dimensions in
// all. The hashing part keeps exact words, names and numbers and, at twice
// the hash embedder's width, loses less to collisions; the semantic part
// matches paraphrases.
//
// Figures (bench/embedder_eval.go, nDCG@10 on queries sharing < 45% of
// their words with the target; hash is the 384-d hashing embedder):
// agent-memory set 0.415 against 0.282; paraphrase set (first 5,000 verse
// pairs) 0.710 against 0.620, 0.812 against 0.766 over distinct query
// texts. That set's low-overlap figure hangs on one query repeated 71
// times, so it jumps with any change of weight (0.637 at w = 0.3); two
// held-out slices of the same file (pairs 5,001-10,000 and 10,001-15,000)
// give 0.944 against 0.926 and 0.895 against 0.831. Weights 0.2 to 0.4 all
// beat hashing on the memory set by 0.11 to 0.16.
//
// Tokenizer reproduces the reference TF.js tokenizer of
// @energetic-ai/embeddings id for id (tested on the reference set in
// testdata/): NFKC, SentencePiece's word marker, a Viterbi search over the
// 8,000-piece vocabulary with the reference's tie-breaking, its UTF-16
// backtracking and its null scores counted as 0, runs of unknown characters
// merged into id 0 (which the model embeds like any piece).
//
// Assets. assets/ holds the vocabulary as published (vocab.json.gz), the
// table (table.bin.gz), the projection (projection.bin.gz: the mean and
// 128 directions, float32) and the model's licence and attribution
// (LICENSE, NOTICE). `make embedder-assets` regenerates them with
// tools/embedder-assets: a node script loads the model with TF.js to write
// the vocabulary, the corpus and the reference set, then a Go program checks
// its port of the model against TF.js (cosine >= 0.999), runs it over the
// corpus, fits the table and computes the projection from the written
// table. Building and testing need no node.
//
// Invariants:
//   - Every vector has length Dim() and unit L2 norm, for any text, the
//     empty text included: never a zero vector, never NaN.
//   - Embedding is deterministic and the same on every architecture: the
//     sums run in a fixed order and every product is rounded to float32
//     before it is added (no fused multiply-add).
//   - The assets are decoded once, on first use; an Embedder is read-only
//     afterwards and safe for concurrent use.
//   - Changing the assets, the weight, LexicalDim or the hashing embedder
//     changes every vector: it is a new embedder, and stored vectors must be
//     re-embedded.
package use
