package textproc

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of the opening lines that DocumentText takes from a document's first passage: a title page or a
// heading block is a few short lines; a line longer than leadLineRunes is body text and ends the lead.
const (
	leadLines     = 8
	leadLineRunes = 80
	// metaValueRunes bounds one metadata value: a long value is content, not a name.
	metaValueRunes = 200
)

// DocumentText is the text that names a document in the document-level keyword index: its title, its file
// name in words (`bill_2125318_review_report.pdf` → `bill 2125318 review report`), the values of its
// metadata fields, and its opening lines (lead, normally the start of its first passage) — a report's
// title page says "검토보고서" where its file name does not. Only short opening lines count; the letter-spaced
// words that title pages print (`검 토 보 고`) are joined by IndexTerms, as in any passage.
func DocumentText(title, source string, metadata map[string]any, lead string) string {
	var b strings.Builder
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	add(title)
	if name := path.Base(strings.ReplaceAll(source, "\\", "/")); name != "." && name != "/" {
		name = strings.TrimSuffix(name, path.Ext(name))
		add(strings.Map(func(r rune) rune {
			if r == '_' || r == '-' || r == '.' || r == '+' {
				return ' '
			}
			return r
		}, name))
	}
	keys := make([]string, 0, len(metadata))
	for k := range metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range metaValues(metadata[k]) {
			if utf8.RuneCountInString(v) <= metaValueRunes {
				add(v)
			}
		}
	}
	n := 0
	for _, line := range strings.Split(Normalize(lead), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > leadLineRunes || n == leadLines {
			break
		}
		add(line)
		n++
	}
	return b.String()
}

func metaValues(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case float64:
		return []string{strconv.FormatFloat(v, 'f', -1, 64)} // 2125318, not 2.125318e+06
	case int, int64, bool:
		return []string{fmt.Sprint(v)}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return v
	}
	return nil
}
