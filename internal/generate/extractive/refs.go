package extractive

import "regexp"

var (
	// retrieved is how a reference list dates the copy it cites ("Retrieved 2014-04-28", "Retrieved
	// April 28, 2014", "Archived from the original").
	retrieved = regexp.MustCompile(`(?i)\bretrieved\s+(?:on\s+)?(?:\d{4}-\d{2}-\d{2}|\d{1,2}\s+[a-z]+\s+\d{4}|[a-z]+\s+\d{1,2},\s+\d{4})|\barchived from the original\b`)
	// quotedTitle is a cited work's title, in quotes and closed by a period or comma.
	quotedTitle = regexp.MustCompile(`["“][^"“”]{3,}[.,]?["”][.,]`)
	// citedDate is the date a reference gives its work after its author, closed by a period: "(3 April
	// 2014).", "(2011).", "(March 2012).".
	citedDate = regexp.MustCompile(`\((?:\d{1,2}\s+)?(?:[A-Z][a-z]+\.?\s+)?(?:\d{1,2},\s+)?\d{4}[a-z]?\)\.`)
	// titleOnly is a line that is a quoted title alone: a reference cut from the rest of its entry.
	titleOnly = regexp.MustCompile(`^\s*["“][^"“”]{3,}[.,]?["”]\.\s*$`)
	// site is a web site named as a publisher ("huffingtonpost.com", "blog.lizardwrangler.com").
	site = regexp.MustCompile(`(?i)\b[a-z0-9-]+\.(?:com|org|net|gov|edu|co\.[a-z]{2}|io)\b`)
)

// citation reports whether a line of a passage is an entry of a reference list — "Baker, Mitchell (3 April
// 2014). "Brendan Eich Steps Down as Mozilla CEO". mozilla blog.", "BetaBeat. Retrieved 2014-04-28." —
// whose pieces (a cited title, a publisher's name) answer no question: they name the question's words
// without saying anything of them.
func citation(line string) bool {
	if retrieved.MatchString(line) {
		return true
	}
	if titleOnly.MatchString(line) {
		return true
	}
	loc := quotedTitle.FindStringIndex(line)
	if loc == nil {
		return false
	}
	// The author's date before the title, or a site named as its publisher after it (not one the title names).
	return citedDate.MatchString(line[:loc[0]]) || site.MatchString(line[loc[1]:])
}
