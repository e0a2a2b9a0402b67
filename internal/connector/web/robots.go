package web

import (
	"bufio"
	"bytes"
	"strings"
)

// robots is the part of a robots.txt that applies to ragd: the rules of the group naming "ragd", else of
// the group for "*". An empty robots allows everything.
type robots struct {
	rules []robotsRule
}

type robotsRule struct {
	allow   bool
	pattern string // a path prefix, with * for any run of characters and a final $ for the end
}

// robotsAgent is the product token ragd's rules are looked up by (its User-Agent starts with it).
const robotsAgent = "ragd"

// parseRobots reads a robots.txt (RFC 9309): groups of User-agent lines followed by Allow and Disallow
// rules; other lines (Sitemap, Crawl-delay) and malformed ones are ignored.
func parseRobots(data []byte) *robots {
	type group struct {
		agents []string
		rules  []robotsRule
	}
	var groups []*group
	var cur *group
	inAgents := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		switch key {
		case "user-agent":
			if !inAgents {
				cur = &group{}
				groups = append(groups, cur)
				inAgents = true
			}
			cur.agents = append(cur.agents, strings.ToLower(val))
		case "allow", "disallow":
			inAgents = false
			if cur == nil || (key == "disallow" && val == "") {
				continue // "Disallow:" with nothing allows everything
			}
			cur.rules = append(cur.rules, robotsRule{allow: key == "allow", pattern: val})
		}
	}
	var star *group
	for _, g := range groups {
		for _, a := range g.agents {
			if a == robotsAgent {
				return &robots{rules: g.rules}
			}
			if a == "*" && star == nil {
				star = g
			}
		}
	}
	if star == nil {
		return &robots{}
	}
	return &robots{rules: star.rules}
}

// allowed reports whether path (with its query) may be fetched: the longest matching rule decides, an
// allow winning a tie; no matching rule allows.
func (r *robots) allowed(path string) bool {
	if r == nil {
		return true
	}
	best, allow := -1, true
	for _, rule := range r.rules {
		if n := len(rule.pattern); n > best && robotsMatch(rule.pattern, path) {
			best, allow = n, rule.allow
		} else if n == best && rule.allow && robotsMatch(rule.pattern, path) {
			allow = true
		}
	}
	return allow
}

// robotsMatch matches a robots.txt path pattern against path.
func robotsMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	pattern = strings.TrimSuffix(pattern, "$")
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	rest := path[len(parts[0]):]
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		if last && anchored {
			return strings.HasSuffix(rest, p)
		}
		j := strings.Index(rest, p)
		if j < 0 {
			return false
		}
		rest = rest[j+len(p):]
	}
	return !anchored || rest == ""
}
