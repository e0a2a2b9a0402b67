package sqlite_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/textproc"
)

// TestDocMem: the in-memory copy of the document-level index gives exactly the database's answers (the
// same documents, scores and ties), for an admin, a filter and a principal who sees some documents; a
// change made by another store (another process) is seen at once, answered from the database until a
// new copy of its state is made.
func TestDocMem(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "ragd.db")
	s := openAt(t, path)
	other := openAt(t, path)
	c, err := s.EnsureCollection(ctx, "reports", "local")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		name := fmt.Sprintf("harbour_levy_report_%d.txt", i)
		if i%3 == 0 {
			name = fmt.Sprintf("lighthouse_keeping_%d.txt", i)
		}
		d := ingest(t, ctx, s, name, []string{fmt.Sprintf("the harbour office notes, part %d", i)}, [][]float32{unit(i % 4)})
		if i%2 == 0 {
			if _, err := s.UpdateDocument(ctx, rag.LocalPrincipal, d.ID, rag.DocumentUpdate{Readers: []string{"user:bob"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ingestInto(t, s, c.ID, "harbour_levy_annex.txt", "harbour annex")
	queries := []struct {
		p rag.Principal
		q rag.KeywordQuery
	}{
		{rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms("harbour levy report"), K: 20}},
		{rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms("lighthouse keeping"), K: 3}},
		{rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms("harbour levy"), K: 20, Filter: rag.Filter{Collections: []string{"reports"}}}},
		{rag.Principal{ID: "user:bob"}, rag.KeywordQuery{Terms: textproc.QueryTerms("harbour levy lighthouse"), K: 20}},
	}
	answers := func(st *sqlite.Store) [][]rag.DocumentCandidate {
		t.Helper()
		var out [][]rag.DocumentCandidate
		for _, x := range queries {
			got, err := st.DocumentCandidates(ctx, x.p, x.q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, got)
		}
		return out
	}
	sqlite.NoDocMem(other) // other answers from the database alone
	fromDB := answers(other)
	answers(s) // starts the copy
	sqlite.WaitDocMem(s)
	built, before := sqlite.DocMemCounts(s)
	if built != 1 {
		t.Fatalf("after the first queries: %d copies, want 1", built)
	}
	if len(fromDB[0]) < 5 || len(fromDB[3]) == 0 || len(fromDB[3]) >= len(fromDB[0]) {
		t.Fatalf("the queries do not test much: %d, %d candidates", len(fromDB[0]), len(fromDB[3]))
	}
	if got := answers(s); !reflect.DeepEqual(got, fromDB) {
		t.Fatalf("from the copy:\n%v\nfrom the database:\n%v", got, fromDB)
	}
	if _, answered := sqlite.DocMemCounts(s); answered-before != int64(len(queries)) {
		t.Fatalf("%d queries answered from the copy, want %d", answered-before, len(queries))
	}

	// Another store retitles a document: the change is seen at once (from the database), and the next
	// copy, made a second later, gives the same answers.
	docs, err := other.ListDocuments(ctx, rag.LocalPrincipal, rag.DocumentQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	title := "lighthouse levy ledger"
	if _, err := other.UpdateDocument(ctx, rag.LocalPrincipal, docs.Documents[0].ID, rag.DocumentUpdate{Title: &title}); err != nil {
		t.Fatal(err)
	}
	fresh := answers(other)
	if got := answers(s); !reflect.DeepEqual(got, fresh) {
		t.Fatalf("after another store's change:\n%v\nthat store answers:\n%v", got, fresh)
	}
	if reflect.DeepEqual(fresh, fromDB) {
		t.Fatal("the new title changed no answer")
	}
	time.Sleep(1100 * time.Millisecond)
	answers(s)
	sqlite.WaitDocMem(s)
	if built, _ = sqlite.DocMemCounts(s); built != 2 {
		t.Fatalf("%d copies after the change, want 2", built)
	}
	_, before = sqlite.DocMemCounts(s)
	if got := answers(s); !reflect.DeepEqual(got, fresh) {
		t.Fatalf("from the new copy:\n%v\nwant:\n%v", got, fresh)
	}
	if _, after := sqlite.DocMemCounts(s); after-before != int64(len(queries)) {
		t.Fatalf("%d queries answered from the new copy, want %d", after-before, len(queries))
	}
}

// TestDocMemTooBig: an index of exactly docMemMaxPostings postings is copied, one of a posting more is not,
// and its queries are answered from the database.
func TestDocMemTooBig(t *testing.T) {
	for _, over := range []bool{false, true} {
		s := openAt(t, t.TempDir())
		ingest(t, t.Context(), s, "harbour_levy.txt", []string{"harbour levy"}, [][]float32{unit(0)})
		n := sqlite.DocPostingCount(t, s)
		max := n
		if over {
			max = n - 1
		}
		restore := sqlite.SetDocMemMaxPostings(max)
		q := rag.KeywordQuery{Terms: textproc.QueryTerms("harbour levy"), K: 5}
		want, err := s.DocumentCandidates(t.Context(), rag.LocalPrincipal, q)
		if err != nil {
			t.Fatal(err)
		}
		sqlite.WaitDocMem(s)
		got, err := s.DocumentCandidates(t.Context(), rag.LocalPrincipal, q)
		restore()
		if err != nil || !reflect.DeepEqual(got, want) || len(want) != 1 {
			t.Fatalf("over=%v: %v, want %v (%v)", over, got, want, err)
		}
		built, answered := sqlite.DocMemCounts(s)
		if over && (built != 0 || answered != 0) || !over && (built != 1 || answered != 1) {
			t.Fatalf("%d postings, limit %d: %d copies, %d answered from one", n, max, built, answered)
		}
	}
}

// ingestInto creates document ext in collection collectionID with one chunk of text.
func ingestInto(t *testing.T, s rag.Store, collectionID, ext, text string) *rag.Document {
	t.Helper()
	d := &rag.Document{CollectionID: collectionID, ExternalID: ext, Title: ext, Owner: "local"}
	if err := s.CreateDocument(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	_, err := s.CommitVersion(t.Context(), &rag.VersionCommit{DocumentID: d.ID, ContentHash: hashOf(text), Title: ext,
		MediaType: "text/plain", Space: space, Chunks: []rag.Chunk{{Kind: rag.KindText, Text: text, Vector: unit(0)}}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDocumentCandidatesTiesAtK: of documents that score the same, the first K by document ID are
// returned, as a longer list cut at K gives them.
func TestDocumentCandidatesTiesAtK(t *testing.T) {
	s := openAt(t, t.TempDir())
	for i := range 9 {
		ingest(t, t.Context(), s, fmt.Sprintf("tide_table_%d.txt", i), []string{"tide table"}, [][]float32{unit(0)})
	}
	q := rag.KeywordQuery{Terms: textproc.QueryTerms("tide table"), K: 20}
	all, err := s.DocumentCandidates(t.Context(), rag.LocalPrincipal, q)
	if err != nil || len(all) != 9 {
		t.Fatalf("%v, %v", all, err)
	}
	if all[0].Score != all[8].Score {
		t.Fatalf("the documents do not tie: %v", all)
	}
	for _, k := range []int{1, 3, 8} {
		q.K = k
		got, err := s.DocumentCandidates(t.Context(), rag.LocalPrincipal, q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, all[:k]) {
			t.Fatalf("K=%d: %v, want %v", k, got, all[:k])
		}
	}
}
