package use

import "errors"

var (
	// ErrBadAssets is returned when the embedded model assets cannot be
	// decoded.
	ErrBadAssets = errors.New("use: bad model assets")
	// ErrBadWeight is returned by NewWeighted for a weight outside (0, 1].
	ErrBadWeight = errors.New("use: semantic weight outside (0, 1]")
)
