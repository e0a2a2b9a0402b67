package retrieve

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
)

// synonymsFor returns the synonym groups of the collections a search by p covers (their profiles' synonyms,
// or for a collection without a stored profile its "synonyms" setting; see profile.Of): those its filter
// names, or every collection when it names none — only collections p sees (rag.AccessStore's
// VisibleCollections, what GET /api/collections lists to p), so that another team's vocabulary never
// rewords p's query. A collection that does not exist or p does not see adds nothing (the filter then
// matches nothing of it anyway), nor does a setting or profile that does not parse (one stored before it
// was checked).
func (r *Retriever) synonymsFor(ctx context.Context, p rag.Principal, f rag.Filter) ([][]string, error) {
	if !p.Admin {
		return r.visibleSynonyms(ctx, p, f)
	}
	var cols []*rag.Collection
	if len(f.Collections) == 0 {
		var err error
		if cols, err = r.store.ListCollections(ctx); err != nil {
			return nil, err
		}
	}
	for _, name := range f.Collections {
		c, err := r.store.GetCollection(ctx, name)
		if rag.ErrorCode(err) == rag.CodeNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return synonymsOf(cols), nil
}

// visibleSynonyms is synonymsFor for a principal that is not an admin: the collections it sees, narrowed to
// those the filter names (by name or ID). A store that cannot say which collections p sees gives none.
func (r *Retriever) visibleSynonyms(ctx context.Context, p rag.Principal, f rag.Filter) ([][]string, error) {
	as, ok := r.store.(rag.AccessStore)
	if !ok {
		return nil, nil
	}
	visible, err := as.VisibleCollections(ctx, p)
	if err != nil {
		return nil, err
	}
	var cols []*rag.Collection
	for _, c := range visible {
		if len(f.Collections) == 0 || slices.Contains(f.Collections, c.Name) || slices.Contains(f.Collections, c.ID) {
			cols = append(cols, c)
		}
	}
	return synonymsOf(cols), nil
}

// synonymsOf gathers the synonym groups of cols' profiles.
func synonymsOf(cols []*rag.Collection) [][]string {
	var groups [][]string
	for _, c := range cols {
		if p, err := profile.Of(c); err == nil {
			groups = append(groups, p.Synonyms...)
		}
	}
	return groups
}

// variants returns the query reworded by the synonym groups: for every word of a group found in the query,
// the query with that word replaced by each other word of its group. Words are matched without regard to
// case; a word that starts or ends with a Latin letter or digit must stand alone there ("CTR" is not found
// in "CTRL"), while a Hangul word may carry a particle ("보증금은").
func variants(query string, groups [][]string) []string {
	lower := strings.ToLower(query)
	var out []string
	seen := map[string]bool{lower: true}
	for _, g := range groups {
		for _, w := range g {
			at := find(lower, strings.ToLower(w))
			if at < 0 {
				continue
			}
			for _, alt := range g {
				if alt == w {
					continue
				}
				v := lower[:at] + " " + strings.ToLower(alt) + " " + lower[at+len(strings.ToLower(w)):]
				if !seen[v] {
					seen[v] = true
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// find returns the byte offset of word in s where it stands as a word (see variants), or -1.
func find(s, word string) int {
	if word == "" {
		return -1
	}
	for off := 0; off <= len(s)-len(word); {
		i := strings.Index(s[off:], word)
		if i < 0 {
			return -1
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(word):])
		first, _ := utf8.DecodeRuneInString(word)
		last, _ := utf8.DecodeLastRuneInString(word)
		if !(latin(first) && i > 0 && latin(before)) && !(latin(last) && i+len(word) < len(s) && latin(after)) {
			return i
		}
		off = i + 1
	}
	return -1
}

// latin reports whether r is a letter or digit of a script written with spaces between words.
func latin(r rune) bool {
	return r < 0x3000 && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// union returns terms followed by the terms of more that terms lacks.
func union(terms, more []string) []string {
	out := terms[:len(terms):len(terms)]
	for _, t := range more {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
