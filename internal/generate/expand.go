package generate

import (
	"strings"
	"unicode/utf8"
)

// Limits of the query expansion step: how many other wordings are kept, and how long each may be.
const (
	MaxExpansions     = 5
	MaxExpansionChars = 200
)

// ExpandSystem is the system prompt of the query expansion step (answer.Service, RAGD_QUERY_EXPANSION=llm):
// the model lists other wordings of a question that documents answering it might use.
const ExpandSystem = "You help a search engine find passages that answer a question. List up to 5 other ways the " +
	"passages might word what the question asks about: synonyms, the formal or technical term, the term in the " +
	"other language (Korean or English), an abbreviation spelled out. One short phrase per line, no numbering, no " +
	"answer and no explanation. If there is nothing to add, reply with nothing."

// ExpandUser is the user message of the expansion step.
func ExpandUser(question string) string { return "Question: " + question + "\n\nOther wordings:" }

// ParseExpansions reads the model's reply to ExpandSystem: one wording per line (list markers, numbering
// and quotes removed), each at most MaxExpansionChars characters, none repeating the question or another,
// at most MaxExpansions.
func ParseExpansions(reply, question string) []string {
	var out []string
	seen := map[string]bool{strings.ToLower(strings.TrimSpace(question)): true}
	for _, line := range strings.Split(reply, "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimLeft(line, "-*•·0123456789.) ")
		line = strings.Trim(strings.TrimSpace(line), `"'“”‘’`)
		if line == "" || utf8.RuneCountInString(line) > MaxExpansionChars || seen[strings.ToLower(line)] {
			continue
		}
		seen[strings.ToLower(line)] = true
		out = append(out, line)
		if len(out) == MaxExpansions {
			break
		}
	}
	return out
}
