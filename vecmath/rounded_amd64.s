//go:build amd64

#include "textflag.h"

// func dotColumns32AVX2(out, m, x *float32, rows, stride int)
// Four accumulators of eight columns each; per row, every product is
// rounded (VMULPS) before it is added (VADDPS): the scalar loop's bits.
TEXT ·dotColumns32AVX2(SB), NOSPLIT, $0-40
	MOVQ   out+0(FP), DI
	MOVQ   m+8(FP), SI
	MOVQ   x+16(FP), DX
	MOVQ   rows+24(FP), CX
	MOVQ   stride+32(FP), R8
	SHLQ   $2, R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

colloop:
	VBROADCASTSS (DX), Y4
	VMULPS       (SI), Y4, Y5
	VMULPS       32(SI), Y4, Y6
	VMULPS       64(SI), Y4, Y7
	VMULPS       96(SI), Y4, Y8
	VADDPS       Y5, Y0, Y0
	VADDPS       Y6, Y1, Y1
	VADDPS       Y7, Y2, Y2
	VADDPS       Y8, Y3, Y3
	ADDQ         $4, DX
	ADDQ         R8, SI
	DECQ         CX
	JNZ          colloop

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET

// func addScaledInt8AVX2(acc *float32, row *int8, scale float32, n int)
TEXT ·addScaledInt8AVX2(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), DI
	MOVQ         row+8(FP), SI
	VBROADCASTSS scale+16(FP), Y1
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX

int8loop:
	VPMOVSXBD (SI), Y2
	VCVTDQ2PS Y2, Y2
	VMULPS    Y1, Y2, Y2
	VADDPS    (DI), Y2, Y2
	VMOVUPS   Y2, (DI)
	ADDQ      $8, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       int8loop

	VZEROUPPER
	RET
