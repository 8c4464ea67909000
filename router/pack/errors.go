package pack

import "errors"

var (
	// ErrUnknownEncoding is returned for a tokenizer encoding other than
	// those of Encodings.
	ErrUnknownEncoding = errors.New("pack: unknown encoding")
	// ErrUnknownPrivacy is returned for a privacy mode other than those of
	// PrivacyModes.
	ErrUnknownPrivacy = errors.New("pack: unknown privacy mode")
)
