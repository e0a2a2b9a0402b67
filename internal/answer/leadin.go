package answer

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// Chunks loads chunks with their documents' facts by ID: rag.Store.
type Chunks interface {
	// Hits is rag.Store.Hits.
	Hits(ctx context.Context, p rag.Principal, ids []int64) ([]rag.Hit, error)
}

// nextSpan is how many IDs after a chunk's own are looked at for the document's next chunk: a document's
// chunks are stored in order in one transaction, so the next one is normally the next ID.
const nextSpan = 4

// continueLeadIns completes passages cut at a chunk boundary from their document's next chunk (same version,
// next index), without the sentences the two chunks share (the chunker's overlap):
//   - a passage whose last line announces what follows — it ends in a colon, "The agency estimates the
//     following costs to comply with this proposed AD:", "다음 서류를 내야 합니다:" — gets the whole next chunk:
//     a lead-in cut from its list or table is no answer; with what it announces, it is;
//   - a passage whose last paragraph goes on in the next chunk gets the rest of that paragraph, up to
//     maxParagraphRest characters: a lecture states a problem at the end of one chunk and gives what to do
//     in the next ("학습 제한을 푸는 방법도 그 반대로 … 비슷한 광고 세트를 하나로 합쳐서 … | 타겟을 넓히세요.").
//
// hits are the passages' hits, in the same order; passages are changed in place.
func continueLeadIns(ctx context.Context, p rag.Principal, chunks Chunks, passages []rag.Passage, hits []rag.Hit) error {
	if chunks == nil {
		return nil
	}
	var ids []int64
	for i := range passages {
		if i < len(hits) {
			for j := range nextSpan {
				ids = append(ids, hits[i].ID+int64(j)+1)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	loaded, err := chunks.Hits(ctx, p, ids)
	if err != nil {
		return err
	}
	for i := range passages {
		if i >= len(hits) {
			continue
		}
		h := hits[i]
		for _, n := range loaded {
			if n.DocumentID != h.DocumentID || n.Version != h.Version || n.Index != h.Index+1 {
				continue
			}
			rest, overlap := afterOverlap(passages[i].Text, n.Text)
			if !endsLeadIn(passages[i].Text) {
				// Without an overlap the next chunk may as well open a paragraph of its own.
				rest = paragraphRest(rest, overlap)
			}
			if rest = strings.TrimSpace(rest); rest != "" {
				sep := "\n\n"
				if !endsLeadIn(passages[i].Text) {
					sep = " "
				}
				passages[i].Text = strings.TrimRight(passages[i].Text, " \n") + sep + rest
				passages[i].PageEnd = max(passages[i].PageEnd, n.PageEnd)
			}
			break
		}
	}
	return nil
}

// maxParagraphRest is the most characters of a cut paragraph's rest that a passage is completed with.
const maxParagraphRest = 400

// paragraphRest returns the opening of rest (the next chunk after the overlap, which the chunker cut from
// the document with the text between them) that continues the previous chunk's last paragraph: up to the
// first line break, when rest does not open with one, cut after its last sentence within
// maxParagraphRest characters; "" when there was no overlap to tell where rest starts.
func paragraphRest(rest string, overlap bool) string {
	if !overlap || strings.HasPrefix(strings.TrimLeft(rest, " \t"), "\n") {
		return ""
	}
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	if utf8.RuneCountInString(rest) <= maxParagraphRest {
		return rest
	}
	cut := string([]rune(rest)[:maxParagraphRest])
	end := -1
	for _, p := range []string{". ", "? ", "! ", "。"} {
		if i := strings.LastIndex(cut, p); i >= 0 {
			end = max(end, i+len(p))
		}
	}
	if end < 0 {
		return ""
	}
	return cut[:end]
}

// endsLeadIn reports whether the last non-blank line of text ends in a colon.
func endsLeadIn(text string) bool {
	return strings.HasSuffix(strings.TrimRight(text, " \t\n"), ":")
}

// afterOverlap returns next without its opening that repeats the end of prev — the longest tail of prev
// (from a line or sentence start) that next begins with — and whether there was one.
func afterOverlap(prev, next string) (string, bool) {
	for i := 0; i < len(prev); i++ {
		if i > 0 && prev[i-1] != ' ' && prev[i-1] != '\n' {
			continue
		}
		if tail := prev[i:]; strings.TrimSpace(tail) != "" && strings.HasPrefix(next, tail) {
			return next[len(tail):], true
		}
	}
	return next, false
}
