package textproc

import "strings"

// ContextText is the text that represents a chunk in the keyword index and to embedders: the document title
// and the section path ahead of the passage. A passage rarely repeats what its document is about ("the
// applicant must…" under "Housing lease > Eligibility"), so its context words make it findable; the
// passage shown to users stays the chunk text alone.
func ContextText(title, section, text string) string {
	var b strings.Builder
	b.Grow(len(title) + len(section) + len(text) + 2)
	if title = strings.TrimSpace(title); title != "" {
		b.WriteString(title)
		b.WriteByte('\n')
	}
	if section = strings.TrimSpace(section); section != "" && section != title {
		b.WriteString(section)
		b.WriteByte('\n')
	}
	b.WriteString(text)
	return b.String()
}
