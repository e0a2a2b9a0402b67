package server

import "testing"

func TestByteBudget(t *testing.T) {
	b := &byteBudget{limit: 100}
	if !b.reserve(60) || !b.reserve(40) {
		t.Fatal("up to the limit must fit")
	}
	if b.reserve(1) {
		t.Fatal("one byte over the limit must not")
	}
	b.release(40)
	if !b.reserve(40) {
		t.Fatal("released bytes must be reusable")
	}
	b.release(40)
	b.release(60)
	if !b.reserve(500) {
		t.Fatal("a request larger than the budget passes when nothing else is in flight")
	}
	if b.reserve(1) {
		t.Fatal("…and holds the budget while it runs")
	}
}
