package vindex

import "math/bits"

// planeSums sets out[j] to Σ_p 2^p · popcount(code_j AND planes[p]) for every row j of codes (nw words a
// row, nw a multiple of 4) and the four bit planes of a query (planes[p*nw : (p+1)*nw]).
func planeSums(codes []uint64, nw int, planes []uint64, out []uint32) {
	if len(codes) == 0 {
		return
	}
	if useAsm {
		planeSumsAsm(&codes[0], len(codes)/nw, nw, &planes[0], &out[0])
		return
	}
	planeSumsGo(codes, nw, planes, out)
}

func planeSumsGo(codes []uint64, nw int, planes []uint64, out []uint32) {
	p0, p1, p2, p3 := planes[:nw], planes[nw:2*nw], planes[2*nw:3*nw], planes[3*nw:4*nw]
	for j := range out {
		row := codes[j*nw : (j+1)*nw]
		var s0, s1, s2, s3 int
		for w, x := range row {
			s0 += bits.OnesCount64(x & p0[w])
			s1 += bits.OnesCount64(x & p1[w])
			s2 += bits.OnesCount64(x & p2[w])
			s3 += bits.OnesCount64(x & p3[w])
		}
		out[j] = uint32(s0 + 2*s1 + 4*s2 + 8*s3)
	}
}
