package pack_test

import (
	"errors"
	"testing"

	"github.com/hebbdb/hebb/router/pack"
)

func TestTokenizerCounts(t *testing.T) {
	cases := []struct {
		enc  string
		text string
		want int
	}{
		// Reference counts of OpenAI's tiktoken.
		{pack.EncodingCL100K, "", 0},
		{pack.EncodingCL100K, "hello world", 2},
		{pack.EncodingCL100K, "The user prefers a dark theme.", 7},
		{pack.EncodingO200K, "hello world", 2},
		{pack.EncodingCL100K, "<|endoftext|>", 7},
	}
	for _, tc := range cases {
		t.Run(tc.enc+"/"+tc.text, func(t *testing.T) {
			tok, err := pack.NewTokenizer(tc.enc)
			if err != nil {
				t.Fatal(err)
			}
			if tok.Name() != tc.enc {
				t.Errorf("name %q", tok.Name())
			}
			if got := tok.Count(tc.text); got != tc.want {
				t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
			}
		})
	}
}

func TestTokenizerUnknown(t *testing.T) {
	if _, err := pack.NewTokenizer("gpt2"); !errors.Is(err, pack.ErrUnknownEncoding) {
		t.Fatalf("err %v, want ErrUnknownEncoding", err)
	}
}

func TestTokenizerShared(t *testing.T) {
	a, err := pack.NewTokenizer(pack.DefaultEncoding)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pack.NewTokenizer(pack.DefaultEncoding)
	if a != b {
		t.Error("second call loaded the encoding again")
	}
}
