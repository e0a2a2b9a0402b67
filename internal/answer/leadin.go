package answer

import (
	"context"
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

// Chunks loads chunks with their documents' facts by ID: rag.Store.
type Chunks interface {
	// Hits is rag.Store.Hits.
	Hits(ctx context.Context, ids []int64) ([]rag.Hit, error)
}

// nextSpan is how many IDs after a chunk's own are looked at for the document's next chunk: a document's
// chunks are stored in order in one transaction, so the next one is normally the next ID.
const nextSpan = 4

// continueLeadIns appends to every passage whose last line announces what follows — it ends in a colon,
// "The agency estimates the following costs to comply with this proposed AD:", "다음 서류를 내야 합니다:" — the
// next chunk of its document (same version, next index), without the sentences the two chunks share (the
// chunker's overlap). A lead-in cut from its list or table at a chunk boundary is no answer; with what it
// announces, it is. hits are the passages' hits, in the same order; passages are changed in place.
func continueLeadIns(ctx context.Context, chunks Chunks, passages []rag.Passage, hits []rag.Hit) error {
	if chunks == nil {
		return nil
	}
	for i := range passages {
		if i >= len(hits) || !endsLeadIn(passages[i].Text) {
			continue
		}
		h := hits[i]
		ids := make([]int64, nextSpan)
		for j := range ids {
			ids[j] = h.ID + int64(j) + 1
		}
		loaded, err := chunks.Hits(ctx, ids)
		if err != nil {
			return err
		}
		for _, n := range loaded {
			if n.DocumentID != h.DocumentID || n.Version != h.Version || n.Index != h.Index+1 {
				continue
			}
			if rest := strings.TrimSpace(afterOverlap(passages[i].Text, n.Text)); rest != "" {
				passages[i].Text = strings.TrimRight(passages[i].Text, " \n") + "\n\n" + rest
				passages[i].PageEnd = max(passages[i].PageEnd, n.PageEnd)
			}
			break
		}
	}
	return nil
}

// endsLeadIn reports whether the last non-blank line of text ends in a colon.
func endsLeadIn(text string) bool {
	return strings.HasSuffix(strings.TrimRight(text, " \t\n"), ":")
}

// afterOverlap returns next without its opening that repeats the end of prev: the longest tail of prev
// (from a line or sentence start) that next begins with.
func afterOverlap(prev, next string) string {
	for i := 0; i < len(prev); i++ {
		if i > 0 && prev[i-1] != ' ' && prev[i-1] != '\n' {
			continue
		}
		if tail := prev[i:]; strings.TrimSpace(tail) != "" && strings.HasPrefix(next, tail) {
			return next[len(tail):]
		}
	}
	return next
}
