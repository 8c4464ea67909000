package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
)

// argon2id parameters (the OWASP baseline: 19 MiB, 2 passes, 1 lane).
// A stored hash carries its own, so they can be raised later.
var argonParams = struct {
	memory  uint32 // KiB
	time    uint32
	threads uint8
}{memory: 19 * 1024, time: 2, threads: 1}

// Password bounds.
const (
	minPassword = 10
	maxPassword = 200
)

// checkPassword tells what is wrong with a new password, or "".
func checkPassword(pw string) string {
	switch n := utf8.RuneCountInString(pw); {
	case n < minPassword:
		return fmt.Sprintf("Use at least %d characters.", minPassword)
	case len(pw) > maxPassword:
		return fmt.Sprintf("Use at most %d characters.", maxPassword)
	}
	return ""
}

// hashSlots bounds the password hashes computed at once: an argon2id hash
// holds 19 MiB and a core for tens of milliseconds, and sign-in and
// sign-up are open to anyone, so 100 parallel sign-ins took a node from
// 85 MB to 970 MB resident. At most maxHashWaiters more wait for a slot;
// past that a check answers ErrBusy at once.
var (
	hashSlots   = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))
	hashWaiters atomic.Int64
)

const maxHashWaiters = 64

// withHashSlot runs f holding one of hashSlots.
func withHashSlot(ctx context.Context, f func()) error {
	if hashWaiters.Add(1) > maxHashWaiters {
		hashWaiters.Add(-1)
		return ErrBusy
	}
	select {
	case hashSlots <- struct{}{}:
		hashWaiters.Add(-1)
	case <-ctx.Done():
		hashWaiters.Add(-1)
		return fmt.Errorf("waiting to check a password: %w", ctx.Err())
	}
	defer func() { <-hashSlots }()
	f()
	return nil
}

// HashPassword returns the argon2id hash of pw as a PHC string, or
// ErrBusy (hashSlots).
func HashPassword(ctx context.Context, pw string) (out string, err error) {
	if slotErr := withHashSlot(ctx, func() { out, err = hashPassword(pw) }); slotErr != nil {
		return "", slotErr
	}
	return out, err
}

func hashPassword(pw string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("cannot draw a salt: %w", err)
	}
	p := argonParams
	key := argon2.IDKey([]byte(pw), salt, p.time, p.memory, p.threads, 32)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.memory, p.time, p.threads,
		enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// VerifyPassword reports whether pw matches hash (argon2id PHC or
// bcrypt), or ErrBusy (hashSlots).
func VerifyPassword(ctx context.Context, hash, pw string) (ok bool, err error) {
	if slotErr := withHashSlot(ctx, func() { ok, err = verifyPassword(hash, pw) }); slotErr != nil {
		return false, slotErr
	}
	return ok, err
}

func verifyPassword(hash, pw string) (bool, error) {
	if strings.HasPrefix(hash, "$2a$") || strings.HasPrefix(hash, "$2b$") || strings.HasPrefix(hash, "$2y$") {
		err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw))
		return err == nil, nil
	}
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, ErrBadPasswordHash
	}
	var version int
	var mem, iters uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, ErrBadPasswordHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &iters, &threads); err != nil || mem == 0 || iters == 0 ||
		threads == 0 || mem > 1<<22 || iters > 64 {
		return false, ErrBadPasswordHash
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[4])
	want, err2 := enc.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) < 16 || len(want) > 64 {
		return false, ErrBadPasswordHash
	}
	got := argon2.IDKey([]byte(pw), salt, iters, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyHash is verified against when an e-mail address is unknown, so a
// sign-in takes as long whether or not the account exists. Made at the
// first such sign-in, not at start-up: an argon2 hash took 95 ms of every
// process's start (hebb --help, hebb mcp, the CLI) before main ran.
var dummyHash = sync.OnceValue(func() string {
	h, _ := hashPassword("not a password of anyone")
	return h
})
