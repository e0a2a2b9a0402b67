package extract

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/ragd/ragd/internal/rag"
)

var (
	// jsxTagRe matches a JSX component tag (capitalised name), opening, closing or self-closing, on one line.
	jsxTagRe = regexp.MustCompile(`</?[A-Z][A-Za-z0-9_.]*(?:\s(?:[^<>"'{}]|"[^"]*"|'[^']*'|\{[^{}]*\})*)?/?>`)
	// jsxOpenRe matches the start of a JSX tag whose attributes continue on the next lines.
	jsxOpenRe    = regexp.MustCompile(`^\s*<[A-Z][A-Za-z0-9_.]*(?:\s|$)`)
	jsxCommentRe = regexp.MustCompile(`\{/\*.*?\*/\}`)
	htmlTagRe    = regexp.MustCompile(`<[^>]*>`)
	fenceRe      = regexp.MustCompile("^\\s{0,3}(```+|~~~+)")
	esmRe        = regexp.MustCompile(`^(?:import|export)\s`)
)

// mdParser is goldmark with GFM, its emphasis and strikethrough bounded per block (boundedDelimiters).
var mdParser = goldmark.New(
	goldmark.WithParser(parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(
			util.Prioritized(parser.NewCodeSpanParser(), 100),
			util.Prioritized(parser.NewLinkParser(), 200),
			util.Prioritized(parser.NewAutoLinkParser(), 300),
			util.Prioritized(parser.NewRawHTMLParser(), 400),
			util.Prioritized(boundedDelimiters{parser.NewEmphasisParser()}, 500),
			util.Prioritized(boundedDelimiters{extension.NewStrikethroughParser()}, 500),
		),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)),
	// GFM without its strikethrough, which is added bounded above.
	goldmark.WithExtensions(extension.Linkify, extension.Table, extension.TaskList),
).Parser()

// maxDelimiters is how many emphasis and strikethrough delimiter runs one block may open; after that,
// further '*', '_' and '~' are plain text.
//
// goldmark matches each closing delimiter by walking back through every delimiter before it, without
// CommonMark's "openers bottom" shortcut, so a block of n delimiters that never match (900 KB of "*a_") costs
// n² steps: minutes of CPU. With at most maxDelimiters per block it is linear; real text has far fewer
// (a long README paragraph has a few dozen).
const maxDelimiters = 256

// boundedDelimiters wraps a goldmark delimiter parser (emphasis, strikethrough) and declines once the
// block being parsed has maxDelimiters delimiter runs; goldmark then reads the character as text.
type boundedDelimiters struct{ parser.InlineParser }

// delimCount is the number of delimiter runs of one block, kept in the parser's context.
type delimCount struct {
	block ast.Node
	n     int
}

var delimKey = parser.NewContextKey()

// Parse implements parser.InlineParser.
func (p boundedDelimiters) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	c, _ := pc.Get(delimKey).(*delimCount)
	if c == nil || c.block != parent {
		c = &delimCount{block: parent}
		pc.Set(delimKey, c)
	}
	if c.n >= maxDelimiters {
		return nil
	}
	n := p.InlineParser.Parse(parent, block, pc)
	if n != nil {
		c.n++
	}
	return n
}

// extractMarkdown reads Markdown and MDX: headings, paragraphs, list items, fenced code, tables. MDX
// (and Markdown that uses JSX components, as documentation sites do) loses its import/export lines, JSX
// tags and {/* comments */}; the prose between tags stays. Front matter is dropped, its title kept.
func extractMarkdown(name string, data []byte, mdx bool, b *budget) (*rag.Extracted, error) {
	s, err := decodeText(name, data)
	if err != nil {
		return nil, err
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	title, s := frontMatter(s)
	src := []byte(stripMDX(s, mdx))
	doc := mdParser.Parse(text.NewReader(src))
	if err := b.check(); err != nil {
		return nil, err
	}
	w := mdWalker{src: src, out: blockList{budget: b}}
	w.blocks(doc)
	if err := w.out.err(); err != nil {
		return nil, err
	}
	x := &rag.Extracted{Title: title, Blocks: w.out.blocks}
	if x.Title == "" {
		for _, b := range x.Blocks {
			if b.Kind == rag.BlockHeading && b.Level == 1 {
				x.Title = b.Text
				break
			}
		}
	}
	return x, nil
}

// frontMatter cuts a leading YAML front matter block and returns its title.
func frontMatter(s string) (string, string) {
	if !strings.HasPrefix(s, "---\n") {
		return "", s
	}
	end := strings.Index(s[4:], "\n---")
	if end < 0 {
		return "", s
	}
	fm := s[4 : 4+end]
	rest := s[4+end+4:]
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[i+1:]
	} else {
		rest = ""
	}
	title := ""
	for _, l := range strings.Split(fm, "\n") {
		if v, ok := strings.CutPrefix(l, "title:"); ok {
			title = normInline(strings.Trim(strings.TrimSpace(v), `"'`))
		}
	}
	return title, rest
}

// stripMDX removes MDX syntax outside fenced code: JSX comments and component tags always (they are never
// Markdown), import/export statements when the file is MDX or uses components.
func stripMDX(s string, mdx bool) string {
	lines := strings.Split(s, "\n")
	if !mdx {
		for _, l := range lines {
			if jsxTagRe.MatchString(l) {
				mdx = true
				break
			}
		}
	}
	var out []string
	fence := ""
	inTag, inESM := false, false
	for _, l := range lines {
		if fence != "" {
			out = append(out, l)
			if m := fenceRe.FindStringSubmatch(l); m != nil && strings.HasPrefix(m[1], fence[:1]) && len(m[1]) >= len(fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), fence[:1])) == "" {
				fence = ""
			}
			continue
		}
		if m := fenceRe.FindStringSubmatch(l); m != nil {
			fence = m[1]
			out = append(out, l)
			continue
		}
		if inTag { // inside a JSX tag whose attributes span lines
			if strings.Contains(l, ">") {
				inTag = false
			}
			out = append(out, "")
			continue
		}
		if inESM {
			if strings.Contains(l, " from ") || strings.HasSuffix(strings.TrimSpace(l), ";") || strings.TrimSpace(l) == "" {
				inESM = false
			}
			out = append(out, "")
			continue
		}
		if mdx && esmRe.MatchString(l) {
			t := strings.TrimSpace(l)
			if strings.HasSuffix(t, "{") || strings.HasSuffix(t, "(") || strings.HasSuffix(t, ",") {
				inESM = true
			}
			out = append(out, "")
			continue
		}
		l = jsxCommentRe.ReplaceAllString(l, "")
		l = jsxTagRe.ReplaceAllString(l, "")
		if jsxOpenRe.MatchString(l) && !strings.Contains(l, ">") {
			inTag = true
			out = append(out, "")
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

type mdWalker struct {
	src   []byte
	out   blockList
	depth int
}

// blocks walks n's children; nesting (block quotes, lists) deeper than the budget's depth stops the walk.
func (w *mdWalker) blocks(n ast.Node) {
	w.depth++
	defer func() { w.depth-- }()
	if w.out.budget.depth(w.depth) != nil {
		return
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.block(c)
	}
}

func (w *mdWalker) block(c ast.Node) {
	{
		switch v := c.(type) {
		case *ast.Heading:
			w.out.heading(0, v.Level, w.inline(v))
		case *ast.Paragraph, *ast.TextBlock:
			w.out.paragraph(0, w.inline(v))
		case *ast.FencedCodeBlock:
			w.out.code(0, w.lines(v))
		case *ast.CodeBlock:
			w.out.code(0, w.lines(v))
		case *ast.HTMLBlock:
			w.out.paragraph(0, htmlTagRe.ReplaceAllString(w.lines(v), " "))
		case *ast.ListItem:
			w.listItem(v)
		case *east.Table:
			w.table(v)
		case *ast.ThematicBreak:
		default:
			w.blocks(c)
		}
	}
}

// listItem keeps an item's text as one paragraph with a bullet; nested blocks other than text follow it.
func (w *mdWalker) listItem(li *ast.ListItem) {
	marker := "- "
	if l, ok := li.Parent().(*ast.List); ok && l.IsOrdered() {
		n := l.Start
		for p := li.PreviousSibling(); p != nil; p = p.PreviousSibling() {
			n++
		}
		marker = strconv.Itoa(n) + ". "
	}
	first := true
	for c := li.FirstChild(); c != nil; c = c.NextSibling() {
		switch v := c.(type) {
		case *ast.Paragraph, *ast.TextBlock:
			t := w.inline(v)
			if first {
				t = marker + t
				first = false
			}
			w.out.paragraph(0, t)
		default:
			w.block(c)
		}
	}
}

func (w *mdWalker) table(t *east.Table) {
	var rows [][]string
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var row []string
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			row = append(row, w.inline(c))
		}
		rows = append(rows, row)
	}
	w.out.table(0, rows, 1)
}

func (w *mdWalker) lines(n ast.Node) string {
	var b strings.Builder
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		b.Write(seg.Value(w.src))
	}
	return b.String()
}

// inline is the text of a block's inline content: emphasis and links reduced to their text, images to
// their alt text, inline HTML dropped.
func (w *mdWalker) inline(n ast.Node) string {
	var b strings.Builder
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch v := c.(type) {
			case *ast.Text:
				b.Write(v.Segment.Value(w.src))
				if v.HardLineBreak() {
					b.WriteByte('\n')
				} else if v.SoftLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(v.Value)
			case *ast.RawHTML:
			case *ast.AutoLink:
				b.Write(v.Label(w.src))
			default:
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}
