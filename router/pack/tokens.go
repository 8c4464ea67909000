package pack

import (
	"fmt"
	"sync"

	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// Encodings the tokenizer supports.
const (
	EncodingCL100K = "cl100k_base"
	EncodingO200K  = "o200k_base"
	// DefaultEncoding is used when a request names none.
	DefaultEncoding = EncodingCL100K
)

// Encodings lists the supported encodings, the default first.
func Encodings() []string { return []string{EncodingCL100K, EncodingO200K} }

// rankFiles names the rank file of each encoding; the files are embedded
// in the loader module, so nothing is ever downloaded.
var rankFiles = map[string]string{
	EncodingCL100K: "cl100k_base.tiktoken",
	EncodingO200K:  "o200k_base.tiktoken",
}

// Counter counts the tokens of a text.
type Counter interface {
	Count(text string) int
}

// Tokenizer is a BPE tokenizer of one encoding. It is safe for concurrent
// use.
type Tokenizer struct {
	name string
	bpe  *bpe
}

type loaded struct {
	once sync.Once
	tok  *Tokenizer
	err  error
}

var tokenizers = map[string]*loaded{EncodingCL100K: {}, EncodingO200K: {}}

// NewTokenizer returns the tokenizer of encoding, loading it on first use
// (a few hundred milliseconds); later calls share it.
func NewTokenizer(encoding string) (*Tokenizer, error) {
	l, ok := tokenizers[encoding]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownEncoding, encoding)
	}
	l.once.Do(func() {
		ranks, err := tiktokenloader.NewOfflineLoader().LoadTiktokenBpe(rankFiles[encoding])
		if err != nil {
			l.err = fmt.Errorf("cannot load encoding %s: %w", encoding, err)
			return
		}
		b, err := newBPE(encoding, ranks)
		if err != nil {
			l.err = err
			return
		}
		l.tok = &Tokenizer{name: encoding, bpe: b}
	})
	return l.tok, l.err
}

// Name is the encoding's name.
func (t *Tokenizer) Name() string { return t.name }

// Count is the number of tokens of text. Special-token markers such as
// <|endoftext|> count as ordinary text.
func (t *Tokenizer) Count(text string) int {
	if text == "" {
		return 0
	}
	return t.bpe.count(text)
}
