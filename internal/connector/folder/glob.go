package folder

import (
	"fmt"
	"path"
	"strings"
)

// Patterns are globs over an item's path relative to the folder, with '/' separators: '*', '?' and
// '[…]' as in path.Match within one path element, and '**' as a whole element for any number of
// elements. A pattern without '/' matches the file's name at any depth ("*.md"); one with '/' matches the
// whole relative path ("papers/**/*.pdf"). A pattern also matches everything under a directory it
// matches ("drafts" excludes drafts/a.md).

// checkPattern rejects a pattern path.Match cannot read.
func checkPattern(p string) error {
	if p == "" {
		return fmt.Errorf("an empty include or exclude pattern")
	}
	for _, el := range strings.Split(p, "/") {
		if el == "**" {
			continue
		}
		if _, err := path.Match(el, ""); err != nil {
			return fmt.Errorf("pattern %q: %w", p, err)
		}
	}
	return nil
}

// matchAny reports whether rel matches any of patterns.
func matchAny(patterns []string, rel string) bool {
	for _, p := range patterns {
		if match(p, rel) {
			return true
		}
	}
	return false
}

// match reports whether the relative path rel, or a directory above it, matches the pattern p.
func match(p, rel string) bool {
	parts := strings.Split(rel, "/")
	if !strings.Contains(p, "/") {
		for _, el := range parts {
			if ok, _ := path.Match(p, el); ok {
				return true
			}
		}
		return false
	}
	pat := strings.Split(strings.Trim(p, "/"), "/")
	for n := len(parts); n > 0; n-- {
		if matchParts(pat, parts[:n]) {
			return true
		}
	}
	return false
}

// matchParts matches path elements against pattern elements, '**' standing for zero or more elements.
func matchParts(pat, parts []string) bool {
	if len(pat) == 0 {
		return len(parts) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(parts); i++ {
			if matchParts(pat[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], parts[0]); !ok {
		return false
	}
	return matchParts(pat[1:], parts[1:])
}
