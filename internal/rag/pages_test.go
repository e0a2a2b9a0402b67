package rag

import "testing"

// TextOn gives each page its part of a paragraph that runs on across pages, and a block on one page all
// of its text for that page only.
func TestBlockTextOn(t *testing.T) {
	b := Block{Page: 1, Text: "from Soekarno Hatta Airport, resulting in 189 fatalities. Then more.",
		PageTurns: []PageBreak{{Offset: 14, Page: 2}, {Offset: 58, Page: 3}}}
	for page, want := range map[int]string{0: "", 1: "from Soekarno", 2: "Hatta Airport, resulting in 189 fatalities.", 3: "Then more.", 4: ""} {
		if got := b.TextOn(page); got != want {
			t.Errorf("page %d: %q, want %q", page, got, want)
		}
	}
	one := Block{Page: 5, Text: "All of it."}
	if one.TextOn(5) != "All of it." || one.TextOn(4) != "" {
		t.Errorf("a block on one page: %q %q", one.TextOn(5), one.TextOn(4))
	}
	// Offsets past the text (a corrupt record) cut nothing off and panic nowhere.
	bad := Block{Page: 1, Text: "short", PageTurns: []PageBreak{{Offset: 99, Page: 2}}}
	if bad.TextOn(1) != "short" || bad.TextOn(2) != "" {
		t.Errorf("offsets past the end: %q %q", bad.TextOn(1), bad.TextOn(2))
	}
}
