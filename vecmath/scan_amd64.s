//go:build amd64

#include "textflag.h"

// PAIR looks up one pair of nibble positions at byte offset off of the
// codes (R11) and tables (R10) and accumulates it into Y0 and Y1 (see
// scanBitsAVX2); a, b, c and d are scratch registers.
#define PAIR(off, a, b, c, d) \
	VMOVDQU        off(R11), a; \
	VPSRLW         $4, a, b; \
	VPAND          Y15, a, a; \
	VPAND          Y15, b, b; \
	VBROADCASTI128 off(R10), c; \
	VBROADCASTI128 off+16(R10), d; \
	VPSHUFB        a, c, c; \
	VPSHUFB        b, d, d; \
	VPADDB         d, c, c; \
	VPADDW         c, Y0, Y0; \
	VPSRLW         $8, c, c; \
	VPADDW         c, Y1, Y1

// PAIRS accumulates the pairs of a block (R12 of them, R10 the tables,
// R11 the codes) into Y0 and Y1: one pair at a time until a multiple of
// four is left, then four at a time. one, four and done are the loop's
// labels, distinct in each function that uses it.
#define PAIRS(one, four, done) \
	TESTQ $3, R12; \
	JZ    four; \
one:; \
	PAIR(0, Y2, Y3, Y4, Y5); \
	ADDQ  $32, R10; \
	ADDQ  $32, R11; \
	DECQ  R12; \
	JZ    done; \
	TESTQ $3, R12; \
	JNZ   one; \
four:; \
	PAIR(0, Y2, Y3, Y4, Y5); \
	PAIR(32, Y6, Y7, Y8, Y9); \
	PAIR(64, Y2, Y3, Y4, Y5); \
	PAIR(96, Y6, Y7, Y8, Y9); \
	ADDQ $128, R10; \
	ADDQ $128, R11; \
	SUBQ $4, R12; \
	JNZ  four; \
done:

// func scanBitsAVX2(lut, codes *byte, blocks, pairs, stride int, out *uint16)
//
// Per block of 32 rows and per pair of nibble positions: split the 32 code
// bytes into low and high nibbles, look both up with VPSHUFB in the pair's
// two 16-entry tables (broadcast to both lanes), add the two byte results
// (at most 240) and accumulate them as 16-bit words. Y0 sums whole words
// (even row + 256 * odd row, wrapping) and Y1 sums the high bytes (odd
// rows), so even rows are Y0 - Y1<<8. The two are interleaved back into row
// order and stored as 32 uint16. Pairs are taken one at a time until a
// multiple of four is left, then four at a time.
TEXT ·scanBitsAVX2(SB), NOSPLIT, $0-48
	MOVQ lut+0(FP), SI
	MOVQ codes+8(FP), DI
	MOVQ blocks+16(FP), CX
	MOVQ pairs+24(FP), DX
	MOVQ stride+32(FP), R8
	MOVQ out+40(FP), R9
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	VMOVQ AX, X15
	VPBROADCASTQ X15, Y15

block:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	MOVQ  SI, R10
	MOVQ  DI, R11
	MOVQ  DX, R12

	PAIRS(pair1, pair4, pdone)

	VPSLLW     $8, Y1, Y2
	VPSUBW     Y2, Y0, Y0
	VPUNPCKLWD Y1, Y0, Y2
	VPUNPCKHWD Y1, Y0, Y3
	VPERM2I128 $0x20, Y3, Y2, Y4
	VPERM2I128 $0x31, Y3, Y2, Y5
	VMOVDQU    Y4, (R9)
	VMOVDQU    Y5, 32(R9)
	ADDQ       $64, R9
	ADDQ       R8, DI
	DECQ       CX
	JNZ        block

	VZEROUPPER
	RET

// func dotInt4RowsAVX2(q *int8, codes *byte, rowBytes int, rows *int32, n, chunks int, out *int32)
//
// Per row and per 64 coordinates: split 32 code bytes into low and high
// nibbles (unsigned), multiply them with the query's signed bytes by
// VPMADDUBSW (pairs of products, at most 2*15*127 in magnitude, so no
// saturation), add the two, widen to 32 bits by VPMADDWD with ones and
// accumulate; finally sum the eight lanes.
TEXT ·dotInt4RowsAVX2(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ codes+8(FP), DI
	MOVQ rowBytes+16(FP), R8
	MOVQ rows+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ chunks+40(FP), DX
	MOVQ out+48(FP), R9
	// VEX moves only: a legacy-SSE move into X14 once Y15 is dirty cost
	// ~110 ns a call (BenchmarkDotInt4Rows, call-a-row).
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	VMOVQ AX, X15
	VPBROADCASTQ X15, Y15
	MOVQ $0x0001000100010001, AX
	VMOVQ AX, X14
	VPBROADCASTQ X14, Y14

row:
	// Prefetch the row 16 places ahead (its first 256 bytes): rows are
	// scattered, so the hardware prefetcher cannot guess them, and a row
	// takes far less time to compute than to fetch.
	CMPQ        CX, $16
	JLE         noprefetch
	MOVLQSX     64(BX), AX
	IMULQ       R8, AX
	PREFETCHT0  (DI)(AX*1)
	PREFETCHT0  64(DI)(AX*1)
	PREFETCHT0  128(DI)(AX*1)
	PREFETCHT0  192(DI)(AX*1)

noprefetch:
	MOVLQSX (BX), AX
	IMULQ   R8, AX
	LEAQ    (DI)(AX*1), R11
	MOVQ    SI, R10
	MOVQ    DX, R12
	VPXOR   Y0, Y0, Y0

chunk:
	VMOVDQU    (R11), Y2
	VPSRLW     $4, Y2, Y3
	VPAND      Y15, Y2, Y2
	VPAND      Y15, Y3, Y3
	VPMADDUBSW (R10), Y2, Y2
	VPMADDUBSW 32(R10), Y3, Y3
	VPADDW     Y3, Y2, Y2
	VPMADDWD   Y14, Y2, Y2
	VPADDD     Y2, Y0, Y0
	ADDQ       $32, R11
	ADDQ       $64, R10
	DECQ       R12
	JNZ        chunk

	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, (R9)
	ADDQ         $4, R9
	ADDQ         $4, BX
	DECQ         CX
	JNZ          row

	VZEROUPPER
	RET

// EST leaves the upper bounds of 8 rows in U and stores them.
#define EST(Y, U, off) \
	VPSUBD    Y14, Y, Y; \
	VCVTDQ2PS Y, Y; \
	VMULPS    Y13, Y, Y; \
	VMOVUPS   off(R13), Y10; \
	VMULPS    Y10, Y, Y; \
	VMULPS    off(R14), Y12, Y2; \
	VMULPS    Y10, Y11, Y3; \
	VADDPS    Y3, Y2, Y2; \
	VADDPS    Y2, Y, U; \
	VMOVUPS   U, off(R15)

// ESTBLOCK turns a block's scan sums (Y0 and Y1, as PAIRS leaves them)
// into the upper bounds of its 32 rows, stored at R15 (c1 at R13, sd1 at
// R14, the constants in Y11-Y14), and its largest bound, stored at BX; it
// advances the four pointers past the block.
#define ESTBLOCK \
	VPSLLW       $8, Y1, Y2; \
	VPSUBW       Y2, Y0, Y0; \
	VPUNPCKLWD   Y1, Y0, Y2; \
	VPUNPCKHWD   Y1, Y0, Y3; \
	VPERM2I128   $0x20, Y3, Y2, Y4; \
	VPERM2I128   $0x31, Y3, Y2, Y5; \
	VPMOVZXWD    X4, Y6; \
	VEXTRACTI128 $1, Y4, X7; \
	VPMOVZXWD    X7, Y7; \
	VPMOVZXWD    X5, Y8; \
	VEXTRACTI128 $1, Y5, X9; \
	VPMOVZXWD    X9, Y9; \
	EST(Y6, Y0, 0); \
	EST(Y7, Y1, 32); \
	EST(Y8, Y4, 64); \
	EST(Y9, Y5, 96); \
	VMAXPS       Y1, Y0, Y0; \
	VMAXPS       Y5, Y4, Y4; \
	VMAXPS       Y4, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VMAXPS       X1, X0, X0; \
	VPERMILPS    $0x4e, X0, X1; \
	VMAXPS       X1, X0, X0; \
	VPERMILPS    $0xb1, X0, X1; \
	VMAXPS       X1, X0, X0; \
	VMOVSS       X0, (BX); \
	ADDQ         $4, BX; \
	ADDQ         $128, R13; \
	ADDQ         $128, R14; \
	ADDQ         $128, R15

// ESTCONSTS loads the bound constants of the estConsts at AX that
// ESTBLOCK uses: a5 in Y14, s5 in Y13, e1 in Y12, k1 in Y11. (The
// arguments themselves are loaded in each function: vet checks FP
// references against the function they appear in, not through a macro.)
#define ESTCONSTS \
	VPBROADCASTD 0(AX), Y14; \
	VBROADCASTSS 4(AX), Y13; \
	VBROADCASTSS 8(AX), Y12; \
	VBROADCASTSS 12(AX), Y11

// func scanEstAVX2(lut, codes *byte, blocks, pairs, stride int, c1, sd1 *float32, k *estConsts, ub, bmax *float32)
//
// scanBitsAVX2 followed, per block, by the stage-1 upper bounds of its 32
// rows, with the same float32 operations in the same order as estRef:
// t = float32(sum - a5) * s5; est = c1 * t; ub = est + (sd1*e1 + c1*k1);
// bmax gets the block's largest upper bound. Estimates are not stored.
TEXT ·scanEstAVX2(SB), NOSPLIT, $0-80
	MOVQ         lut+0(FP), SI
	MOVQ         codes+8(FP), DI
	MOVQ         blocks+16(FP), CX
	MOVQ         pairs+24(FP), DX
	MOVQ         stride+32(FP), R8
	MOVQ         c1+40(FP), R13
	MOVQ         sd1+48(FP), R14
	MOVQ         k+56(FP), AX
	MOVQ         ub+64(FP), R15
	MOVQ         bmax+72(FP), BX
	ESTCONSTS
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	VMOVQ AX, X15
	VPBROADCASTQ X15, Y15

eblock:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	MOVQ  SI, R10
	MOVQ  DI, R11
	MOVQ  DX, R12

	PAIRS(epair1, epair4, edone)

	ESTBLOCK

	ADDQ R8, DI
	DECQ CX
	JNZ  eblock

	VZEROUPPER
	RET

// PAIR512 accumulates pairs m and m+1 of a block (the 64 code bytes at
// R11) into Z0 and Z1: the low 256 bits hold pair m's sums as PAIR leaves
// Y0 and Y1, the high 256 bits pair m+1's. R9 points at the two pairs'
// tables laid out for it (wideLUT): each 128-bit lane of the codes is
// looked up in its own pair's table.
#define PAIR512 \
	VMOVDQU64 (R11), Z2; \
	VPSRLW    $4, Z2, Z3; \
	VPANDQ    Z15, Z2, Z2; \
	VPANDQ    Z15, Z3, Z3; \
	VMOVDQU64 (R9), Z4; \
	VMOVDQU64 64(R9), Z5; \
	VPSHUFB   Z2, Z4, Z4; \
	VPSHUFB   Z3, Z5, Z5; \
	VPADDB    Z5, Z4, Z4; \
	VPADDW    Z4, Z0, Z0; \
	VPSRLW    $8, Z4, Z4; \
	VPADDW    Z4, Z1, Z1

// func scanEstAVX512(lut, wide, codes *byte, blocks, pairs, stride int, c1, sd1 *float32, k *estConsts, ub, bmax *float32)
//
// scanEstAVX2 with AVX-512: a block's pairs two at a time (PAIR512, wide
// the tables of wideLUT), the two halves of the sums then added (16-bit
// sums wrap alike either way), an odd last pair by PAIR (lut), and
// ESTBLOCK as in scanEstAVX2, so the bounds are the same float32
// operations in the same order.
TEXT ·scanEstAVX512(SB), NOSPLIT, $0-88
	MOVQ         lut+0(FP), SI
	MOVQ         codes+16(FP), DI
	MOVQ         blocks+24(FP), CX
	MOVQ         pairs+32(FP), DX
	MOVQ         stride+40(FP), R8
	MOVQ         c1+48(FP), R13
	MOVQ         sd1+56(FP), R14
	MOVQ         k+64(FP), AX
	MOVQ         ub+72(FP), R15
	MOVQ         bmax+80(FP), BX
	ESTCONSTS
	MOVQ         $0x0f0f0f0f0f0f0f0f, AX
	VPBROADCASTQ AX, Z15
	MOVQ         wide+8(FP), AX

wblock:
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	MOVQ   SI, R10
	MOVQ   AX, R9
	MOVQ   DI, R11
	MOVQ   DX, R12
	SHRQ   $1, R12
	JZ     wfold

wpair:
	PAIR512
	ADDQ $64, R10
	ADDQ $128, R9
	ADDQ $64, R11
	DECQ R12
	JNZ  wpair

wfold:
	VEXTRACTI64X4 $1, Z0, Y2
	VPADDW        Y2, Y0, Y0
	VEXTRACTI64X4 $1, Z1, Y3
	VPADDW        Y3, Y1, Y1
	TESTQ         $1, DX
	JZ            west
	PAIR(0, Y2, Y3, Y4, Y5)

west:
	ESTBLOCK
	ADDQ R8, DI
	DECQ CX
	JNZ  wblock

	VZEROUPPER
	RET

// func filterGEAVX2(v *float32, n int, t float32, base int32, out *int32, perm *int32) int
//
// Appends base+i to out for every i < n (a multiple of 8) with v[i] >= t
// (NaN never qualifies) and returns how many it wrote. Without a branch on
// the data: per 8 values, the comparison's mask picks a row of perm (the
// lanes set in the mask, first) that packs the qualifying indices to the
// front of a vector, stored whole; the output advances by the mask's
// population. A store writes 8 slots however many qualify, so out must
// have room for n.
TEXT ·filterGEAVX2(SB), NOSPLIT, $0-48
	MOVQ         v+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS t+16(FP), Y1
	MOVL         base+20(FP), AX
	VMOVD        AX, X4
	VPBROADCASTD X4, Y4
	MOVQ         out+24(FP), DI
	MOVQ         perm+32(FP), R11
	MOVQ         DI, R10
	MOVQ         $0x0706050403020100, AX
	VMOVQ        AX, X5
	VPMOVZXBD    X5, Y5 // 0..7
	VPADDD       Y5, Y4, Y4 // base+0..7
	MOVL         $8, AX
	VMOVD        AX, X5
	VPBROADCASTD X5, Y5 // 8s
	XORQ         DX, DX
	TESTQ        CX, CX
	JZ           fdone

fblock:
	VMOVUPS   (SI)(DX*4), Y0
	VCMPPS    $0x1d, Y1, Y0, Y2
	VMOVMSKPS Y2, AX
	MOVQ      AX, BX
	SHLQ      $5, BX
	VMOVDQU   (R11)(BX*1), Y3
	VPERMD    Y4, Y3, Y6
	VMOVDQU   Y6, (DI)
	POPCNTL   AX, AX
	LEAQ      (DI)(AX*4), DI
	VPADDD    Y5, Y4, Y4
	ADDQ      $8, DX
	CMPQ      DX, CX
	JL        fblock

fdone:
	SUBQ DI, R10
	NEGQ R10
	SHRQ $2, R10
	MOVQ R10, ret+40(FP)
	VZEROUPPER
	RET

// func fwhtAVX2(a *float32)
//
// fwhtRef over 128 floats: stages 1, 2 and 4 inside each 8-float register
// (a permuted copy, its sum and difference, blended), stages 8, 16 and 32
// across eight registers at a time, stage 64 across the two halves. Every
// output is the same sum or difference of the same operands as in fwhtRef.
TEXT ·fwhtAVX2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), SI
	MOVQ SI, DI
	MOVQ $16, CX

inlane:
	VMOVUPS    (DI), Y0
	VPERMILPS  $0xb1, Y0, Y1
	VADDPS     Y1, Y0, Y2
	VSUBPS     Y0, Y1, Y3
	VBLENDPS   $0xaa, Y3, Y2, Y0
	VPERMILPS  $0x4e, Y0, Y1
	VADDPS     Y1, Y0, Y2
	VSUBPS     Y0, Y1, Y3
	VBLENDPS   $0xcc, Y3, Y2, Y0
	VPERM2F128 $0x01, Y0, Y0, Y1
	VADDPS     Y1, Y0, Y2
	VSUBPS     Y0, Y1, Y3
	VBLENDPS   $0xf0, Y3, Y2, Y0
	VMOVUPS    Y0, (DI)
	ADDQ       $32, DI
	DECQ       CX
	JNZ        inlane

#define BFLY(X, Y) \
	VSUBPS  Y, X, Y15; \
	VADDPS  Y, X, X; \
	VMOVAPS Y15, Y

	MOVQ SI, DI
	MOVQ $2, CX

cross:
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	BFLY(Y0, Y1)
	BFLY(Y2, Y3)
	BFLY(Y4, Y5)
	BFLY(Y6, Y7)
	BFLY(Y0, Y2)
	BFLY(Y1, Y3)
	BFLY(Y4, Y6)
	BFLY(Y5, Y7)
	BFLY(Y0, Y4)
	BFLY(Y1, Y5)
	BFLY(Y2, Y6)
	BFLY(Y3, Y7)
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ    $256, DI
	DECQ    CX
	JNZ     cross

	MOVQ SI, DI
	MOVQ $8, CX

half:
	VMOVUPS (DI), Y0
	VMOVUPS 256(DI), Y1
	VADDPS  Y1, Y0, Y2
	VSUBPS  Y1, Y0, Y3
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 256(DI)
	ADDQ    $32, DI
	DECQ    CX
	JNZ     half

	VZEROUPPER
	RET

// func dotFixedAVX2(a, b *float32, n int) float64
//
// Sixteen float64 partial sums in Y0-Y3 (lane l of Yk is sum 4k+l): each
// 16 floats of a and b are widened to float64, multiplied (exactly) and
// added to their sums. Then the fixed tree of dotFixedRef:
// t[l] = (p[l]+p[l+4]) + (p[l+8]+p[l+12]), and (t0+t2) + (t1+t3).
TEXT ·dotFixedAVX2(SB), NOSPLIT, $0-32
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	SHRQ   $4, CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

fixedloop:
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VCVTPS2PD (DI), Y8
	VCVTPS2PD 16(DI), Y9
	VCVTPS2PD 32(DI), Y10
	VCVTPS2PD 48(DI), Y11
	VMULPD    Y8, Y4, Y4
	VMULPD    Y9, Y5, Y5
	VMULPD    Y10, Y6, Y6
	VMULPD    Y11, Y7, Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ      $64, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       fixedloop

	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+24(FP)
	RET
