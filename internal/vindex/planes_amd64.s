#include "textflag.h"

// func planeSumsAsm(codes *uint64, rows, nw int, planes *uint64, out *uint32)
TEXT ·planeSumsAsm(SB), NOSPLIT, $0-40
	MOVQ codes+0(FP), SI
	MOVQ rows+8(FP), CX
	MOVQ nw+16(FP), R9
	MOVQ planes+24(FP), R8
	MOVQ out+32(FP), DI
	SHLQ $3, R9              // bytes a row (and a plane)
	LEAQ (R8)(R9*1), R12     // plane 1
	LEAQ (R12)(R9*1), R13    // plane 2
	LEAQ (R13)(R9*1), R14    // plane 3
	TESTQ CX, CX
	JZ done

row:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	XORQ R11, R11

group:
	VMOVDQU (SI)(R11*1), Y4
	VPAND (R8)(R11*1), Y4, Y5
	VPOPCNTQ Y5, Y5
	VPADDQ Y5, Y0, Y0
	VPAND (R12)(R11*1), Y4, Y6
	VPOPCNTQ Y6, Y6
	VPADDQ Y6, Y1, Y1
	VPAND (R13)(R11*1), Y4, Y7
	VPOPCNTQ Y7, Y7
	VPADDQ Y7, Y2, Y2
	VPAND (R14)(R11*1), Y4, Y8
	VPOPCNTQ Y8, Y8
	VPADDQ Y8, Y3, Y3
	ADDQ $32, R11
	CMPQ R11, R9
	JLT group

	// ((s3·2 + s2)·2 + s1)·2 + s0, then the four lanes summed
	VPSLLQ $1, Y3, Y3
	VPADDQ Y2, Y3, Y3
	VPSLLQ $1, Y3, Y3
	VPADDQ Y1, Y3, Y3
	VPSLLQ $1, Y3, Y3
	VPADDQ Y0, Y3, Y3
	VEXTRACTI128 $1, Y3, X4
	VPADDQ X4, X3, X3
	VPSHUFD $0x4e, X3, X4
	VPADDQ X4, X3, X3
	VMOVD X3, (DI)
	ADDQ R9, SI
	ADDQ $4, DI
	DECQ CX
	JNZ row

done:
	VZEROUPPER
	RET
