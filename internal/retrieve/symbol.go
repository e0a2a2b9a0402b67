package retrieve

import (
	"context"
	"strings"
	"unicode"

	"github.com/ragd/ragd/internal/chunk"
	"github.com/ragd/ragd/internal/rag"
)

// symbolWindow is how many fused hits are loaded when the query could name a code symbol, so that the
// definition it names can be brought forward from below the top k.
const symbolWindow = 20

// queryIdentifiers returns the words of a query as written, case kept, with their dots: the names a
// question can give a function or method ("LimitListener", "byteBudget.reserve"). Only ASCII words count:
// the splitters name symbols in the languages' ASCII identifiers, and a question in Korean (or any other
// script) with no such word then costs no extra store lookup (see symbolsFirst).
func queryIdentifiers(query string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(query, func(r rune) bool {
		return r > unicode.MaxASCII || !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '.'
	}) {
		if w = strings.Trim(w, "."); w != "" && (unicode.IsLetter(rune(w[0])) || w[0] == '_') {
			out[w] = true
		}
	}
	return out
}

// namesSymbol reports whether the query's identifiers name the symbol path sym ("server.byteBudget.reserve"):
// its last part or its last two parts, case and all.
func namesSymbol(ids map[string]bool, sym string) bool {
	parts := strings.Split(sym, ".")
	n := len(parts)
	if n >= 2 && ids[parts[n-2]+"."+parts[n-1]] {
		return true
	}
	return n >= 2 && ids[parts[n-1]]
}

// symbolsFirst moves the code chunks among the best symbolWindow fused candidates whose symbol the query
// names exactly (see namesSymbol) ahead of the others, each group in its fused order: a question that
// names a function wants its definition before the code that calls it or the tests that mention it, which
// share its words as much or more. Prose has no symbol, so a corpus without code keeps its order.
func (r *Retriever) symbolsFirst(ctx context.Context, p rag.Principal, read hitCache, fused []scored, query string) ([]scored, error) {
	ids := queryIdentifiers(query)
	if len(ids) == 0 || len(fused) == 0 {
		return fused, nil
	}
	top := fused[:min(len(fused), symbolWindow)]
	chunkIDs := make([]int64, len(top))
	for i, s := range top {
		chunkIDs[i] = s.id
	}
	loaded, err := read.hits(ctx, r.store, p, chunkIDs)
	if err != nil {
		return nil, err
	}
	named := map[int64]bool{}
	for _, h := range loaded {
		if sym := chunk.CodeSymbol(h.Section); h.Kind == rag.KindCode && sym != "" && namesSymbol(ids, sym) {
			named[h.ID] = true
		}
	}
	if len(named) == 0 {
		return fused, nil
	}
	out := make([]scored, 0, len(fused))
	for _, s := range top {
		if named[s.id] {
			out = append(out, s)
		}
	}
	for _, s := range top {
		if !named[s.id] {
			out = append(out, s)
		}
	}
	return append(out, fused[len(top):]...), nil
}
