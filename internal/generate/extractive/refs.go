package extractive

import (
	"regexp"
	"unicode/utf8"
)

var (
	// retrieved is how a reference list dates the copy it cites ("Retrieved 2014-04-28", "Retrieved
	// April 28, 2014", "Archived from the original").
	retrieved = regexp.MustCompile(`(?i)\bretrieved\s+(?:on\s+)?(?:\d{4}-\d{2}-\d{2}|\d{1,2}\s+[a-z]+\s+\d{4}|[a-z]+\s+\d{1,2},\s+\d{4})|\barchived from the original\b`)
	// authorDateTitle opens an entry with its author, the date of the work and its quoted title: "Baker,
	// Mitchell (3 April 2014). "Brendan Eich Steps Down …".", "Zawinski, Jamie (1996). "nscp dorm".".
	authorDateTitle = regexp.MustCompile(`^[^"“()]{0,80}\((?:\d{1,2}\s+)?(?:[A-Z][a-z]+\.?\s+)?(?:\d{1,2},\s+)?\d{4}[a-z]?\)\.\s*["“][^"“”]{3,}[.,]?["”][.,]`)
	// titleSite opens an entry with its quoted title and the site that published it: ""Screenshot of …".
	// huffingtonpost.com.".
	titleSite = regexp.MustCompile(`(?i)^\s*["“][^"“”]{3,}[.,]?["”][.,]\s*(?:[a-z0-9-]+\.)+(?:com|org|net|gov|edu|io)\b`)
	// titleOnly is a line that is a quoted title alone: a reference cut from the rest of its entry.
	titleOnly = regexp.MustCompile(`^\s*["“][^"“”]{3,}[.,]?["”]\.\s*$`)
)

// maxCitation is the longest line read as a reference list's entry: a paragraph of prose that quotes a
// name and cites a source ("… "fers" 혹은 "farzin" … (Schiller 2003).") is longer.
const maxCitation = 300

// citation reports whether a line of a passage is an entry of a reference list — "Baker, Mitchell (3 April
// 2014). "Brendan Eich Steps Down as Mozilla CEO". mozilla blog.", "BetaBeat. Retrieved 2014-04-28." —
// whose pieces (a cited title, a publisher's name) answer no question: they name the question's words
// without saying anything of them.
func citation(line string) bool {
	if utf8.RuneCountInString(line) > maxCitation {
		return false
	}
	return retrieved.MatchString(line) || authorDateTitle.MatchString(line) || titleSite.MatchString(line) || titleOnly.MatchString(line)
}

// maxCitationPiece is the longest sentence read as a piece of a reference entry on its own (citePiece).
const maxCitationPiece = 80

// citePiece reports whether a sentence is the dating piece of a reference entry — "Archived from the
// original on 2007-09-14.", "Retrieved 2013-06-10." — inside a line too long to be read as an entry
// (citation): a page's reference list run together with the prose a cited page quotes.
func citePiece(sentence string) bool {
	return utf8.RuneCountInString(sentence) <= maxCitationPiece && retrieved.MatchString(sentence)
}
