// Package vecmath holds hebb's vector kernels: dot products (single, over a
// contiguous arena, over selected arena rows), L2 normalisation, top-k
// selection, maximal marginal relevance (MMR), the write gate's
// nearest-neighbour scan, and a quantised search over compact row codes.
//
// It is the leaf of the dependency graph: it imports only
// github.com/viterin/vek and the standard library, does no I/O, starts no
// goroutines and keeps no state besides the CPU feature flags read at start-up.
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
// kernels at a cost in speed, or DotFixed: float64 partial sums in a fixed
// order that its AVX2 kernel and its Go loop both follow, so the same bits on
// every CPU at about a sixth of DotRef's time (DotRef's one running sum waits
// on each addition).
//
// # Quantised search
//
// Searcher finds the K best rows of large arenas without reading their
// float32 vectors. Codes keep, per row, a RaBitQ-style code of the row after
// a fixed random rotation (Quantizer: random signs and Walsh-Hadamard
// transforms, orthogonal, the same on every machine): one sign bit per
// coordinate plus a 4-bit code (256 bytes a row at dim 384, a sixth of the
// float32 row). A search runs in stages, each bounding what it cannot see:
//
//  1. Fast scan: the 1-bit codes of every row are scanned with a 4-bit lookup
//     table of the query (AVX2 shuffle kernel, scalar reference), giving an
//     estimate of each row's dot and an upper bound bitsEps deviations above
//     it (the estimator's error is close to Gaussian with a deviation known
//     per row).
//  2. Seeds: the rows of largest upper bound are refined with their 4-bit
//     codes and the best of those evaluated exactly (with the caller's
//     Weight), until K rows are eligible; the K-th exact score is the
//     threshold tau. (The scan keeps only each row's upper bound, not its
//     estimate: one float a row to write and read back, not two.)
//  3. Candidates: every other row whose stage-1 upper bound can reach tau is
//     refined with its 4-bit code (bound int4Eps deviations), and those whose
//     refined bound still reaches tau are evaluated exactly. The scan keeps
//     each 32-row block's largest bound too, so listing the candidates
//     skips the blocks that cannot hold one (most of them).
//
// A caller that can rule rows out in bulk (SearchOptions.Prune, asked per
// stage-1 task) has them marked handled before stage 2: they are never
// refined, weighed or evaluated.
//
// The result is the exact top K (ties at the K-th included) unless a row's
// true score lies more than its bound's width above an estimate, which at
// these widths happens for about one row in 10^4 to 10^6 evaluated; the
// recall benchmarks (BenchmarkRecall) measure it on hebb's bench texts and on
// random vectors. Rows that cannot be coded (NaN, Inf) are always evaluated
// exactly. With Exact set to DotRef (or DotFixed) and codes built from the same rows,
// every replica returns the same rows and scores.
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
