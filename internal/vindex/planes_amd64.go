package vindex

import "golang.org/x/sys/cpu"

// useAsm: the AVX-512 kernel needs VPOPCNTQ on 256-bit registers (AVX512_VPOPCNTDQ with AVX512VL).
var useAsm = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VPOPCNTDQ

//go:noescape
func planeSumsAsm(codes *uint64, rows, nw int, planes *uint64, out *uint32)
