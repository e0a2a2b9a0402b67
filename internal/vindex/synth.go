package vindex

import (
	"math"
	"math/rand/v2"

	"github.com/viterin/vek/vek32"
)

// Clustered returns n L2-normalised vectors of dim dimensions (row-major) and q query vectors drawn the same
// way, clustered the way embeddings of text are: n/1000 topics (at least one), each with subtopics (n/100 in
// all) around it, each row near one subtopic. spread is the noise per dimension around a subtopic relative
// to a topic's own size (a subtopic sits at distance 1 per dimension from its topic): at 1 neighbours of a
// row are spread over its topic's subtopics, which is what makes a coarse quantiser miss some. The same seed
// gives the same vectors.
func Clustered(n, q, dim int, spread float64, seed uint64) (vecs, queries []float32) {
	rng := rand.New(rand.NewPCG(seed, 1))
	topics := max(1, n/1000)
	centres := make([]float32, max(1, n/100)*dim)
	topic := make([]float32, topics*dim)
	for i := range topic {
		topic[i] = float32(rng.NormFloat64())
	}
	for c := 0; c < len(centres)/dim; c++ {
		t := rng.IntN(topics)
		for d := range dim {
			centres[c*dim+d] = topic[t*dim+d] + float32(rng.NormFloat64())
		}
	}
	draw := func(out []float32) {
		c := rng.IntN(len(centres) / dim)
		centre := centres[c*dim : (c+1)*dim]
		var norm float64
		for d := range out {
			x := float64(centre[d]) + spread*rng.NormFloat64()
			out[d] = float32(x)
			norm += x * x
		}
		inv := float32(1 / math.Sqrt(norm))
		for d := range out {
			out[d] *= inv
		}
	}
	vecs = make([]float32, n*dim)
	for i := range n {
		draw(vecs[i*dim : (i+1)*dim])
	}
	queries = make([]float32, q*dim)
	for i := range q {
		draw(queries[i*dim : (i+1)*dim])
	}
	return vecs, queries
}

// Exact returns the best k rows of vecs for q by dot product, ties to the lower row: the reference a
// search's recall is measured against.
func Exact(q, vecs []float32, dim, k int) []Hit {
	t := topK{h: make([]Hit, 0, k)}
	for r := 0; r*dim < len(vecs); r++ {
		t.offer(Hit{Row: int32(r), Score: vek32.Dot(q, vecs[r*dim:(r+1)*dim])}, k)
	}
	return t.sorted()
}

// Recall is the fraction of want's rows found in got.
func Recall(got, want []Hit) float64 {
	if len(want) == 0 {
		return 1
	}
	in := make(map[int32]bool, len(got))
	for _, h := range got {
		in[h.Row] = true
	}
	found := 0
	for _, h := range want {
		if in[h.Row] {
			found++
		}
	}
	return float64(found) / float64(len(want))
}
