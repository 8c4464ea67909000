package bench

import "errors"

var (
	// ErrUnknownWorkload is returned for a workload name Run does not know.
	ErrUnknownWorkload = errors.New("bench: unknown workload")
	// ErrBadConfig is returned for a flag value out of range.
	ErrBadConfig = errors.New("bench: invalid configuration")
	// ErrNoKey is returned when a workload needs an API key and none was given.
	ErrNoKey = errors.New("bench: no API key (use --key, MNEMOVERSE_API_KEY or HEBB_API_KEY)")
	// ErrNoAdminToken is returned when a workload needs the admin API.
	ErrNoAdminToken = errors.New("bench: no admin token (use --admin-token)")
	// ErrStatus is wrapped by API calls answered with a non-2xx status.
	ErrStatus = errors.New("bench: unexpected HTTP status")
	// ErrServerExited is returned when a local server stops before it is ready.
	ErrServerExited = errors.New("bench: local server exited")
	// ErrNotReady is returned when a server's /health/ready does not report
	// ready in time: a measurement would include its start-up.
	ErrNotReady = errors.New("bench: server not ready")
)
