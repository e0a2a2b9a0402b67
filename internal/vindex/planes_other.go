//go:build !amd64

package vindex

const useAsm = false

func planeSumsAsm(codes *uint64, rows, nw int, planes *uint64, out *uint32) {
	panic("no assembly kernel")
}
