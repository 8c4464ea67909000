// Package embedder turns text into vectors and concepts for hebb.
//
// The router embeds a write's content and a query's text once, before
// proposing to Raft (the state machine never embeds), and extracts concepts
// when the client gives none.
//
// Embedders. An Embedder maps texts to float32 vectors of a fixed dimension.
// New picks one by name: "hash" is Hash, a feature-hashing embedder with no
// model and no network; "builtin" here is, for now, the same hashing
// embedder under another name (the server's "builtin" is the semantic
// embedder of router/embedder/use, which holds this one as its lexical
// part). Hash
// hashes stemmed word unigrams (stop words at low weight), bigrams of
// consecutive content words and character 3-4-grams of each word padded with
// boundary markers, with term weight 1+ln(tf), into signed buckets (FNV-1a
// 64, one hash bit gives the sign, three buckets per feature). Its weights
// were tuned on a paraphrase-retrieval set; eval_test.go holds the evaluation
// and the figures.
//
// HTTP (NewHTTP, selected by "http") calls an OpenAI-compatible POST
// {url}/v1/embeddings (OpenAI, Ollama, vLLM, Hugging Face TEI, llama.cpp
// server). It learns its dimension from one probe call when built, so the
// server must be up at boot, and is named "http:" + model. It sends texts in
// batches, retries timeouts, network errors, 429 and 5xx with jittered
// exponential backoff (honouring Retry-After and the context's deadline) and
// fails with an *Error wrapping ErrUnavailable whose Reason the router puts
// in its 503. It is deterministic only as far as the server is; its API key
// never appears in an error.
//
// Invariants:
//   - Every vector Embed returns has length Dim() and unit L2 norm, even for
//     an empty text or one of punctuation only: never a zero vector, never NaN.
//   - Embedding is deterministic: the same text gives the same vector, call
//     after call and release after release (testdata/hash-golden.json pins
//     it; other architectures may differ in the last float place). Changing
//     tokens, stems, features or weights changes stored vectors' meaning, so
//     it makes a new embedder, not a fix.
//   - Embedders are safe for concurrent use.
//
// Concepts. Tokens splits text into lowercase Unicode word tokens; Concepts
// drops stop words and single digits, stems with Stem (a light suffix
// stripper, deterministic), deduplicates and keeps first-seen order, at most
// MaxConcepts. The search code stems query words with the same Stem.
// Client-supplied concepts only go through NormalizeConcept (lowercase, trim,
// no stemming).
package embedder
