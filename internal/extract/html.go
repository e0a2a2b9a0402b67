package extract

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/ragd/ragd/internal/rag"
)

// htmlNoise is removed before the text is read: page chrome, scripts, and the navigation furniture of wikis.
const htmlNoise = `script, style, noscript, template, svg, canvas, nav, header, footer, aside, form, iframe, button,
select, [role=navigation], [role=banner], [role=contentinfo], [role=search], [aria-hidden=true], [hidden],
.navbox, .vertical-navbox, .toc, #toc, .mw-editsection, .mw-jump-link, .catlinks, .printfooter, .noprint,
.mw-cite-backlink, sup.reference, .sidebar, .breadcrumb, .breadcrumbs, .skip-link, .cookie-banner`

// extractHTML reads the main content of a page (main, article or role=main when there is one, else the
// body) without page chrome: headings with their levels, paragraphs, lists, code (pre) and tables.
func extractHTML(name string, data []byte, b *budget) (*rag.Extracted, error) {
	enc, _, _ := charset.DetermineEncoding(data, "text/html")
	r := enc.NewDecoder().Reader(bytes.NewReader(data))
	doc, err := goquery.NewDocumentFromReader(r)
	if err != nil {
		return nil, rag.WrapError(rag.CodeInvalid, err, "%s: HTML cannot be parsed", name)
	}
	// The walkers below recurse, and look into nested tables at every level: the depth bounds both.
	for _, n := range doc.Nodes {
		if err := checkDepth(n, b); err != nil {
			return nil, err
		}
	}
	x := &rag.Extracted{Title: normInline(doc.Find("title").First().Text())}
	doc.Find(htmlNoise).Remove()
	root := doc.Find("main, [role=main], article").First()
	if root.Length() == 0 {
		root = doc.Find("#mw-content-text, #content").First()
	}
	if root.Length() == 0 {
		root = doc.Find("body")
	}
	if root.Length() == 0 {
		root = doc.Selection
	}
	w := htmlWalker{out: blockList{budget: b}}
	for _, n := range root.Nodes {
		w.walk(n)
	}
	w.flush()
	if err := w.out.err(); err != nil {
		return nil, err
	}
	x.Blocks = w.out.blocks
	return x, nil
}

// checkDepth fails when the tree under root nests deeper than the budget allows. It walks without
// recursion, so any depth is measured safely.
func checkDepth(root *html.Node, b *budget) error {
	type item struct {
		n *html.Node
		d int
	}
	stack := []item{{root, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := b.depth(it.d); err != nil {
			return err
		}
		for c := it.n.FirstChild; c != nil; c = c.NextSibling {
			stack = append(stack, item{c, it.d + 1})
		}
	}
	return nil
}

var htmlBlockTags = map[string]bool{
	"p": true, "div": true, "li": true, "ul": true, "ol": true, "section": true, "article": true, "main": true,
	"blockquote": true, "dd": true, "dt": true, "dl": true, "figure": true, "figcaption": true, "address": true,
	"hr": true, "details": true, "summary": true, "body": true, "center": true, "caption": true,
}

type htmlWalker struct {
	out blockList
	buf strings.Builder
}

func (w *htmlWalker) flush() {
	w.out.paragraph(0, w.buf.String())
	w.buf.Reset()
}

func (w *htmlWalker) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.buf.WriteString(collapseSpace(n.Data))
		return
	case html.ElementNode:
	default:
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			w.walk(c)
		}
		return
	}
	tag := n.Data
	switch tag {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		w.flush()
		w.out.heading(0, int(tag[1]-'0'), nodeText(n))
		return
	case "pre":
		w.flush()
		w.out.code(0, rawText(n))
		return
	case "br":
		w.buf.WriteByte('\n')
		return
	case "table":
		w.flush()
		if hasNested(n, "table") {
			// A layout table: its cells are page regions, not data.
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				w.walk(c)
			}
			w.flush()
			return
		}
		rows, header := htmlTable(n)
		w.out.table(0, rows, header)
		return
	}
	block := htmlBlockTags[tag]
	if block {
		w.flush()
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
	if block {
		w.flush()
	} else if tag == "td" || tag == "th" {
		w.buf.WriteByte(' ')
	}
}

func collapseSpace(s string) string {
	if strings.TrimSpace(s) == "" {
		if s == "" {
			return ""
		}
		return " "
	}
	lead := s[0] == ' ' || s[0] == '\n' || s[0] == '\t' || s[0] == '\r'
	last := s[len(s)-1]
	trail := last == ' ' || last == '\n' || last == '\t' || last == '\r'
	out := strings.Join(strings.Fields(s), " ")
	if lead {
		out = " " + out
	}
	if trail {
		out += " "
	}
	return out
}

// nodeText is the text of n with whitespace collapsed and block children separated by spaces.
func nodeText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(collapseSpace(n.Data))
			return
		}
		if n.Type == html.ElementNode && (n.Data == "br" || htmlBlockTags[n.Data]) {
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// rawText is the text of n as written (for pre).
func rawText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		if n.Type == html.ElementNode && n.Data == "br" {
			b.WriteByte('\n')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func hasNested(n *html.Node, tag string) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (c.Data == tag || hasNested(c, tag)) {
			return true
		}
	}
	return false
}

// htmlTable returns the rows of a table (cells spanning columns are followed by empty cells so that columns
// stay aligned) and how many leading rows are headers: rows in thead or made only of th; at least one.
func htmlTable(t *html.Node) ([][]string, int) {
	var rows [][]string
	header, counting := 0, true
	var walk func(n *html.Node, inHead bool)
	walk = func(n *html.Node, inHead bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.Data {
			case "thead":
				walk(c, true)
			case "tbody", "tfoot":
				walk(c, false)
			case "tr":
				var row []string
				allTH := true
				for cell := c.FirstChild; cell != nil; cell = cell.NextSibling {
					if cell.Type != html.ElementNode || (cell.Data != "td" && cell.Data != "th") {
						continue
					}
					if cell.Data == "td" {
						allTH = false
					}
					row = append(row, nodeText(cell))
					span := 1
					for _, a := range cell.Attr {
						if a.Key == "colspan" {
							if v, err := strconv.Atoi(strings.TrimSpace(a.Val)); err == nil && v > 1 && v <= 100 {
								span = v
							}
						}
					}
					for range span - 1 {
						row = append(row, "")
					}
				}
				if len(row) == 0 {
					continue
				}
				if counting && (inHead || allTH) {
					header++
				} else {
					counting = false
				}
				rows = append(rows, row)
			}
		}
	}
	walk(t, false)
	return rows, max(header, 1)
}
