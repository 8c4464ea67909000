// Package vecmath holds hebb's vector kernels: dot products (single, over a
// contiguous arena, over selected arena rows), L2 normalisation, top-k
// selection, maximal marginal relevance (MMR) and the write gate's
// nearest-neighbour scan.
//
// It is the leaf of the dependency graph: it imports only
// github.com/viterin/vek and the standard library, does no I/O, starts no
// goroutines and keeps no state besides the CPU feature flag read at start-up.
//
// # Conventions
//
//   - Vectors are []float32 that callers L2-normalise (see Normalize), so a dot
//     product is the cosine similarity.
//   - An arena is a contiguous []float32 of n rows of dim floats; row i is
//     arena[i*dim:(i+1)*dim]. Kernels never retain an arena or a vector.
//   - Violated preconditions (a query whose length is not dim, an arena shorter
//     than n*dim, a row index out of range) are caller bugs and panic.
//
// # SIMD and references
//
// Dot uses vek's AVX2+FMA kernel when vek reports acceleration (Accelerated)
// and a scalar loop otherwise. Every kernel has a plain scalar reference
// (DotRef, DotArenaRef, DotRowsRef, NearestRef, TopKRef, MMRRef) that the tests
// compare against. DotRef accumulates in float64 and rounds once, so it is the
// most accurate and gives bit-identical results on every platform; Dot's SIMD
// and scalar paths are each deterministic for given inputs on a given machine
// (no dependence on alignment or on where a row sits in an arena), but they
// round differently from each other, so results can differ in the last bits
// between a machine with AVX2 and one without. Callers that must agree bit for
// bit across heterogeneous CPUs (a replicated state machine) can use the Ref
// kernels at a cost in speed.
//
// # NaN and Inf
//
//   - Dot follows IEEE 754: a NaN operand gives NaN, Inf·0 gives NaN, an Inf
//     product gives ±Inf unless products of both signs are infinite (NaN).
//     Finite sums that overflow float32 may overflow in one summation order and
//     not in another; unit vectors never come close.
//   - Normalize leaves a vector containing NaN or ±Inf as all zeros.
//   - A NaN score is never selected: TopK skips NaN scores, Nearest skips rows
//     whose dot is NaN, and MMR never picks a candidate whose MMR score is NaN
//     (NaN relevance, or a NaN similarity to an already picked candidate).
//     ±Inf scores are ordinary values (+Inf ranks first, -Inf last), and -0 and
//     +0 compare equal, so ties between them go to the lower index.
package vecmath
