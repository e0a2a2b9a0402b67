package retrieve_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/rerank"
	"github.com/ragd/ragd/internal/retrieve"
)

// TestNamedDocument: a question that names a document by a word of its title page gets that document's
// passages first, though a long document uses the question's words — the name included — far more often;
// without the document signal the long one wins.
func TestNamedDocument(t *testing.T) {
	b := setup(t)
	b.add(t, "c", "minutes.txt", paragraphs(30, "Session %d. The chair read the assessment of the harbour levy and its deadline; members discussed the assessment again and set no deadline for item %d."), nil)
	var report strings.Builder
	report.WriteString("ASSESSMENT\nHarbour levy\n\n")
	for i := range 8 {
		fmt.Fprintf(&report, "Paragraph %d weighs the costs of the charge for fishing boats, ferries and cargo ships in some detail, one after another.\n\n", i)
	}
	report.WriteString("The charge would take effect after a deadline of six months.\n")
	rep := b.add(t, "c", "doc-17.txt", report.String(), nil)
	if rep.ChunkCount < 2 {
		t.Fatalf("the assessment has %d passages; the test needs several", rep.ChunkCount)
	}
	q := rag.SearchRequest{Query: "assessment: what deadline for the levy", K: 5}
	res, err := b.retriever(t, retrieve.Options{DocumentWeight: 0.2}).Search(context.Background(), rag.LocalPrincipal, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].DocumentID != rep.ID || res.Hits[0].DocumentRank == 0 {
		t.Fatalf("first hit %+v, want a passage of the assessment with its document rank", first(res.Hits))
	}
	off, err := b.retriever(t, retrieve.Options{}).Search(context.Background(), rag.LocalPrincipal, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(off.Hits) == 0 || off.Hits[0].DocumentID == rep.ID || off.Hits[0].DocumentRank != 0 {
		t.Fatalf("without the document signal the first hit is %+v; the test no longer shows the signal's effect", first(off.Hits))
	}
	// A request's own weight (the answer service's) turns the signal on where the retriever has it off.
	q.DocumentWeight = rag.AnswerDocumentWeight
	asked, err := b.retriever(t, retrieve.Options{}).Search(context.Background(), rag.LocalPrincipal, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked.Hits) == 0 || asked.Hits[0].DocumentID != rep.ID || asked.Hits[0].DocumentRank == 0 {
		t.Fatalf("with the request's document weight the first hit is %+v, want a passage of the assessment", first(asked.Hits))
	}
}

// paragraphs is n paragraphs of format, each filled with its number twice.
func paragraphs(n int, format string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format+"\n\n", i, i)
	}
	return b.String()
}

func first(hits []rag.Hit) any {
	if len(hits) == 0 {
		return nil
	}
	return hits[0].Title + ": " + hits[0].Text
}

// TestDuplicatePassages: a document that repeats a passage word for word, or again inside a longer passage,
// gets it once in a result, with and without re-ranking; the same text in another document is another source
// and stays, and a short passage inside a longer one (a heading) is no repeat.
func TestDuplicatePassages(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	commit := func(title string, texts ...string) {
		t.Helper()
		c, err := b.store.EnsureCollection(ctx, "c", "")
		if err != nil {
			t.Fatal(err)
		}
		d := &rag.Document{CollectionID: c.ID, ExternalID: title, Title: title, Source: title, Status: rag.StatusQueued,
			Stage: rag.StageQueued, Owner: rag.LocalPrincipal.ID, PendingHash: title}
		if err := b.store.CreateDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
		vecs, err := b.emb.EmbedDocuments(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		chunks := make([]rag.Chunk, len(texts))
		for i, text := range texts {
			chunks[i] = rag.Chunk{Index: i, Text: text, Vector: vecs[i], Kind: rag.KindText}
		}
		if _, err := b.store.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: title, Title: title,
			Space: b.emb.Space(), Chunks: chunks}); err != nil {
			t.Fatal(err)
		}
	}
	same := "Other uses of the suspense account should be rare, for example Mosaic payments."
	commit("handbook", same, "A chapter on trustees.", "  "+strings.ReplaceAll(same, " ", "  ")+"\n", "Godzilla and Mosaic were early browsers.")
	commit("copy elsewhere", same)
	// The manual repeats a section in another chapter, chunked at other bounds: the second chunk holds the
	// whole first one and goes on. Its heading alone is a chunk too, held by both.
	section := "Suspense accounts. " + strings.Repeat("A suspense account holds Mosaic receipts that cannot be posted yet, and is closed at year end. ", 3)
	commit("manual", "Suspense accounts.", section, section+"Management reports are run monthly to find Godzilla-sized mistakes.")
	for _, opt := range []retrieve.Options{{}, {Rerank: rerank.Options{Weights: rerank.Weights{Similarity: 1, Recency: 0.2}}}} {
		res, err := b.retriever(t, opt).Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: "Mosaic and Godzilla suspense account", K: 10})
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, h := range res.Hits {
			n[h.Title]++
			n[h.Title+"|"+strings.Join(strings.Fields(h.Text), " ")]++
		}
		if n["handbook|"+same] != 1 || n["copy elsewhere|"+same] != 1 || n["handbook"] != 2 {
			t.Errorf("options %+v: hits %v, want the handbook's repeated passage once, its copy under another title once and the Godzilla passage", opt, n)
		}
		if n["manual"] != 2 || n["manual|Suspense accounts."] != 1 {
			t.Errorf("options %+v: hits %v, want the manual's section once and its heading", opt, n)
		}
	}
}

// TestMaxPerDocument: a long document that matches a question in every passage takes at most two places
// ahead of another document's passage (the default); without the cap it fills the top k.
func TestMaxPerDocument(t *testing.T) {
	b := setup(t)
	b.add(t, "c", "long.txt", paragraphs(30, "Section %d. The harbour levy applies to every vessel, and the harbour levy is collected monthly by the harbour office for section %d."), nil)
	other := b.add(t, "c", "other.txt", "Ferries pay the harbour levy once a year.", nil)
	q := rag.SearchRequest{Query: "harbour levy", K: 5}
	docsOf := func(opt retrieve.Options) []string {
		t.Helper()
		res, err := b.retriever(t, opt).Search(context.Background(), rag.LocalPrincipal, q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, h.DocumentID)
		}
		return ids
	}
	capped := docsOf(retrieve.Options{MaxPerDocument: 2})
	if len(capped) != 5 || !slices.Contains(capped[:3], other.ID) {
		t.Errorf("capped: documents %v, want the other document among the first 3 of 5", capped)
	}
	// With re-ranking (the cap applies after it) and with a cap of 1.
	for opt, within := range map[*retrieve.Options]int{{MaxPerDocument: 2, Rerank: rerank.Options{Weights: rerank.Weights{Similarity: 1, Recency: 0.1}}}: 3, {MaxPerDocument: 1}: 2} {
		if got := docsOf(*opt); len(got) != 5 || !slices.Contains(got[:within], other.ID) {
			t.Errorf("options %+v: documents %v, want the other document among the first %d", *opt, got, within)
		}
	}
	if got := docsOf(retrieve.Options{}); len(got) != 5 || !slices.Contains(got[:3], other.ID) { // on by default
		t.Errorf("defaults: documents %v, want the other document among the first 3 of 5", got)
	}
	// Keyword feedback alone lifts the other document (its short passage holds the question's words) into
	// the top 5 here, so the cap's effect is shown against the ranking without it.
	if got := docsOf(retrieve.Options{MaxPerDocument: -1, KeywordFeedback: -1}); slices.Contains(got, other.ID) {
		t.Errorf("uncapped: documents %v; the long document no longer fills the top 5, so the test shows nothing", got)
	}
}
