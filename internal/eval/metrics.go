package eval

import (
	"math"
	"sort"
)

// NDCG returns nDCG@k of ranked document ids against graded judgments, with exponential gain 2^grade − 1
// (the convention of the reference figures in shared/eval/README.md).
func NDCG(ranked []string, rel map[string]int, k int) float64 {
	dcg := 0.0
	for i, id := range ranked[:min(k, len(ranked))] {
		if g := rel[id]; g > 0 {
			dcg += (math.Exp2(float64(g)) - 1) / math.Log2(float64(i+2))
		}
	}
	var grades []int
	for _, g := range rel {
		if g > 0 {
			grades = append(grades, g)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	idcg := 0.0
	for i, g := range grades[:min(k, len(grades))] {
		idcg += (math.Exp2(float64(g)) - 1) / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Recall returns the share of relevant documents (grade > 0) found in the top k.
func Recall(ranked []string, rel map[string]int, k int) float64 {
	total, found := 0, 0
	for _, g := range rel {
		if g > 0 {
			total++
		}
	}
	for _, id := range ranked[:min(k, len(ranked))] {
		if rel[id] > 0 {
			found++
		}
	}
	if total == 0 {
		return 0
	}
	return float64(found) / float64(total)
}

// Precision returns the share of the top k that is relevant (divided by k, as trec_eval does).
func Precision(ranked []string, rel map[string]int, k int) float64 {
	found := 0
	for _, id := range ranked[:min(k, len(ranked))] {
		if rel[id] > 0 {
			found++
		}
	}
	return float64(found) / float64(k)
}

// MRR returns the reciprocal rank of the first relevant document within the top k (0 when none).
func MRR(ranked []string, rel map[string]int, k int) float64 {
	for i, id := range ranked[:min(k, len(ranked))] {
		if rel[id] > 0 {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// percentile returns the p-th percentile (0..100) of xs by nearest rank; xs is sorted in place.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}
