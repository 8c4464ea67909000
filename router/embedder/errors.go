package embedder

import "errors"

// ErrUnknownEmbedder is returned by New for a name it does not know.
var ErrUnknownEmbedder = errors.New("embedder: unknown embedder")
