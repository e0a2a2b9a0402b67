package sqlite

import (
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

func hitOf(id int64, textLen int) rag.Hit {
	return rag.Hit{Chunk: rag.Chunk{ID: id, Text: strings.Repeat("x", textLen)}}
}

// TestHitCacheBudget checks the byte budget at its boundary (a passage of half the budget is kept, one byte
// more is not), that the kept bytes stay within the budget, and the states: an older state finds nothing
// and keeps nothing, a newer one drops what was kept.
func TestHitCacheBudget(t *testing.T) {
	base := hitBytes(&rag.Hit{})
	c := &hitCache{budget: 2 * (base + 1000)}
	v := hitVersion{hits: 1, deleted: 1}
	c.take(v, nil)
	c.keep(v, []rag.Hit{hitOf(1, 1000)})
	if c.len() != 1 {
		t.Fatalf("a passage of exactly half the budget was not kept")
	}
	c.keep(v, []rag.Hit{hitOf(2, 1001)})
	if _, missing := c.take(v, []int64{2}); len(missing) != 1 {
		t.Fatalf("a passage over half the budget was kept")
	}
	c = &hitCache{budget: 100 * (base + 100)}
	c.take(v, nil)
	for i := range 1000 {
		c.keep(v, []rag.Hit{hitOf(int64(i), 100)})
	}
	if n := c.len(); n > 100 || n < 50 {
		t.Fatalf("kept %d passages of a budget for 100", n)
	}
	if _, missing := c.take(v, []int64{999}); len(missing) != 0 {
		t.Fatalf("the newest passage is not kept")
	}

	older := hitVersion{hits: 0, deleted: 1}
	if found, missing := c.take(older, []int64{999}); len(found) != 0 || len(missing) != 1 {
		t.Fatalf("an older state found kept passages")
	}
	c.keep(older, []rag.Hit{hitOf(5000, 10)})
	if _, missing := c.take(v, []int64{5000}); len(missing) != 1 {
		t.Fatalf("a passage read at an older state was kept")
	}
	newer := hitVersion{hits: 1, deleted: 2}
	if found, _ := c.take(newer, []int64{999}); len(found) != 0 || c.len() != 0 {
		t.Fatalf("a newer state kept %d passages of the older one", c.len())
	}
}
