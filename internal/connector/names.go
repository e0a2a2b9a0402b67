package connector

import "strings"

// FileStem turns a title (a Notion page's, a Drive file's, an uploaded text's) into a file name stem:
// path separators, characters Windows refuses and control characters become "_", and it is cut to 120
// characters. "" stays "" for the caller to default.
func FileStem(title string) string {
	title = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:*?"<>|`, r) || r < ' ' {
			return '_'
		}
		return r
	}, title)
	if r := []rune(title); len(r) > 120 {
		title = string(r[:120])
	}
	return title
}
