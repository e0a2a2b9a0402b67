package memo

import (
	"fmt"
	"testing"
)

// TestMemoBudget: the memo returns f's value, computes a held key once, and holds no more than its budget.
func TestMemoBudget(t *testing.T) {
	calls := 0
	m := New(1000, func(key string, v int) int { return 100 })
	f := func(s string) int { calls++; return len(s) }
	if got := m.Get("abc", f); got != 3 || calls != 1 {
		t.Fatalf("get = %d after %d calls, want 3 after 1", got, calls)
	}
	if got := m.Get("abc", f); got != 3 || calls != 1 {
		t.Fatalf("second get = %d after %d calls, want the held 3 after 1", got, calls)
	}
	for i := range 50 {
		m.Get(fmt.Sprint("key", i), f)
	}
	// 100 bytes an entry, 500 a generation: at most 10 entries in two generations.
	if n := m.Len(); n > 10 || n < 5 {
		t.Fatalf("memo holds %d entries, want 5 to 10 within a 1000-byte budget", n)
	}
	// The most recent key is held; the first ones are gone.
	before := calls
	m.Get("key49", f)
	m.Get("key0", f)
	if calls != before+1 {
		t.Fatalf("%d calls for the newest and the oldest key, want 1 (the oldest only)", calls-before)
	}
	// A value larger than a generation is computed, returned and not kept.
	big := New(1000, func(key string, v int) int { return 600 })
	big.Get("x", f)
	if big.Len() != 0 {
		t.Fatalf("a 600-byte entry was kept under a 1000-byte budget")
	}
}
