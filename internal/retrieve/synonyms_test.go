package retrieve_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/retrieve"
)

// TestSynonyms: a collection's synonyms find passages that use the other word of a group, in both
// directions, and only in the collections that list them.
func TestSynonyms(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	if err := b.store.CreateCollection(ctx, &rag.Collection{Name: "lease", Owner: "local", Settings: map[string]any{
		"synonyms": map[string]any{"보증금": []any{"deposit"}, "CTR": []any{"클릭률"}},
	}}); err != nil {
		t.Fatal(err)
	}
	b.add(t, "lease", "lease.txt", "The deposit is returned within thirty days after the tenant moves out.", nil)
	b.add(t, "lease", "ads.txt", "광고의 클릭률은 노출 대비 클릭 수로 계산합니다.", nil)
	b.add(t, "lease", "keys.txt", "Press CTRL and the arrow keys to move between cells.", nil)
	b.add(t, "plain", "plain.txt", "The deposit box of the bank opens at nine.", nil)
	r := b.retriever(t, retrieve.Options{})
	search := func(q string, cols ...string) []string {
		t.Helper()
		return searchSources(t, r, rag.LocalPrincipal, q, cols...)
	}
	if got := search("보증금 반환", "lease"); len(got) == 0 || got[0] != "lease.txt" {
		t.Errorf("보증금 → deposit: %v", got)
	}
	b.add(t, "lease", "ko.txt", "계약이 끝나면 보증금은 한 달 안에 돌려줍니다.", nil)
	if got := search("when is the deposit returned", "lease"); len(got) < 2 || got[0] != "ko.txt" && got[1] != "ko.txt" {
		t.Errorf("deposit → 보증금 (the other direction): %v", got)
	}
	if got := search("CTR", "lease"); len(got) == 0 || got[0] != "ads.txt" {
		t.Errorf("CTR → 클릭률: %v", got)
	}
	if got := search("CTR"); len(got) == 0 || got[0] != "ads.txt" {
		t.Errorf("CTR (no filter: every collection's synonyms): %v", got)
	}
	b.add(t, "lease", "en.txt", "Ad reports list the CTR of each campaign.", nil)
	if got := search("클릭률", "lease"); len(got) < 2 || got[0] != "ads.txt" && got[1] != "ads.txt" || (got[0] != "en.txt" && got[1] != "en.txt") {
		t.Errorf("클릭률 → CTR (the other direction): %v", got)
	}
	if got := search("보증금 반환", "plain"); len(got) != 0 {
		t.Errorf("a collection without synonyms: %v, want no hits", got)
	}
	if got := search("CTRL", "lease"); slices.Contains(got, "ads.txt") || len(got) == 0 {
		t.Errorf("CTRL is not CTR: %v", got)
	}
}

// TestSynonymsOfVisibleCollections: a principal's query is reworded only by the synonyms of collections it
// sees — another team's private collection's vocabulary does not reach its search of a public collection,
// with or without a collection filter naming it.
func TestSynonymsOfVisibleCollections(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	for _, c := range []*rag.Collection{
		{Name: "lease", Owner: "team:legal", Visibility: rag.VisibilityPrivate, Settings: map[string]any{"synonyms": map[string]any{"보증금": []any{"deposit"}}}},
		{Name: "open", Owner: "local", Visibility: rag.VisibilityPublic},
	} {
		if err := b.store.CreateCollection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	b.add(t, "open", "bank.txt", "The deposit is returned within thirty days after the tenant moves out.", nil)
	r := b.retriever(t, retrieve.Options{})
	search := func(p rag.Principal, cols ...string) []string {
		t.Helper()
		return searchSources(t, r, p, "보증금 반환", cols...)
	}
	legal := rag.Principal{ID: "user:lee", Groups: []string{"legal"}}
	other := rag.Principal{ID: "user:otto", Groups: []string{"ops"}}
	if got := search(legal); !slices.Contains(got, "bank.txt") {
		t.Errorf("a member of legal (sees lease's synonyms): %v, want bank.txt through 보증금 → deposit", got)
	}
	if got := search(rag.LocalPrincipal); !slices.Contains(got, "bank.txt") {
		t.Errorf("an admin: %v, want bank.txt", got)
	}
	for _, cols := range [][]string{nil, {"lease", "open"}} {
		if got := search(other, cols...); len(got) != 0 {
			t.Errorf("another team's user, collections %v: %v, want no hits (lease's synonyms are not its own)", cols, got)
		}
	}
}

// searchSources searches q (k 3) as p in cols and returns the hits' sources, best first.
func searchSources(t *testing.T, r *retrieve.Retriever, p rag.Principal, q string, cols ...string) []string {
	t.Helper()
	res, err := r.Search(context.Background(), p, rag.SearchRequest{Query: q, K: 3, Filter: rag.Filter{Collections: cols}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Source)
	}
	return out
}
