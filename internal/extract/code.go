package extract

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

// Source code is split at declarations, one block per declaration, each carrying its symbol path and first
// line (rag.Block.Symbol, rag.Block.Line): Go with go/parser (a declaration keeps its doc comment), the
// brace languages (C, C++, C#, Java, JavaScript, TypeScript, Rust, Kotlin, Swift, …) and Python with a
// scanner that follows braces or indentation outside strings and comments. A class-like declaration is
// split again into its members ("Class.method"); the lines between declarations (imports, fields,
// statements) form blocks of their own, and comments and decorators directly above a declaration stay
// with it. Other languages, and Go that does not parse, fall back to plainCode or the brace scanner.

// codeFamily says which splitter a language (the <lang> of text/x-<lang>) uses.
func codeFamily(lang string) string {
	switch lang {
	case "go":
		return "go"
	case "python":
		return "indent"
	case "javascript", "jsx", "typescript", "tsx", "java", "kotlin", "c", "c++", "csharp", "rust", "swift",
		"scala", "php", "dart", "groovy", "objc", "protobuf", "zig":
		return "brace"
	}
	return ""
}

// maxNesting is how deep classes are split into members: deeper ones stay whole, so that hostile nesting
// cannot make the splitter scan a file once per level.
const maxNesting = 6

// codeUnit is a declaration: the lines [start, end) (0-based) and its symbol path.
type codeUnit struct {
	symbol     string
	start, end int
	named      bool // a declaration rather than the lines between declarations
}

// extractCode splits source code into blocks at declarations (see above).
func extractCode(name string, data []byte, b *budget) (*rag.Extracted, error) {
	s, err := decodeText(name, data)
	if err != nil {
		return nil, err
	}
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	l := blockList{budget: b}
	lines := strings.Split(s, "\n")
	var units []codeUnit
	switch codeFamily(strings.TrimPrefix(MediaType(name, data), "text/x-")) {
	case "go":
		units = goUnits(s, len(lines))
		if units == nil {
			units = braceUnits(lines)
		}
	case "brace":
		units = braceUnits(lines)
	case "indent":
		units = indentUnits(lines)
	default:
		plainCode(&l, s)
		return &rag.Extracted{Blocks: l.blocks}, l.err()
	}
	for _, u := range units {
		start, end := u.start, u.end
		for start < end && strings.TrimSpace(lines[start]) == "" {
			start++
		}
		for end > start && strings.TrimSpace(lines[end-1]) == "" {
			end--
		}
		if start == end {
			continue
		}
		l.codeAt(u.symbol, start+1, strings.Join(lines[start:end], "\n"))
		if l.err() != nil {
			break
		}
	}
	return &rag.Extracted{Blocks: l.blocks}, l.err()
}

// cover turns declarations (sorted, not overlapping) into units that cover lines [from, to): the lines
// before a declaration go with it when they are only comments, blank lines and decorators (lead reports
// such a line), and otherwise form a unit of their own with the symbol outer; consecutive such units merge.
func cover(decls []codeUnit, from, to int, outer string, lines []string, lead func(string) bool) []codeUnit {
	var out []codeUnit
	gap := func(start, end int) {
		if start >= end {
			return
		}
		if n := len(out); n > 0 && !out[n-1].named && out[n-1].end == start {
			out[n-1].end = end
			return
		}
		out = append(out, codeUnit{symbol: outer, start: start, end: end})
	}
	prev := from
	for _, d := range decls {
		if d.start < prev {
			d.start = prev
		}
		if d.end <= d.start {
			continue
		}
		// Comments and decorators directly above the declaration belong to it.
		s := d.start
		for s > prev && lead(lines[s-1]) {
			s--
		}
		gap(prev, s)
		d.start = s
		if n := len(out); n > 0 && !d.named && !out[n-1].named && out[n-1].symbol == d.symbol && out[n-1].end == d.start {
			out[n-1].end = d.end
		} else {
			out = append(out, d)
		}
		prev = d.end
	}
	if n := len(out); prev < to && n > 0 && out[n-1].named && blankOrComment(lines[prev:to]) {
		out[n-1].end = to
	} else {
		gap(prev, to)
	}
	return out
}

func blankOrComment(lines []string) bool {
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !isComment(t) {
			return false
		}
	}
	return true
}

func isComment(t string) bool {
	return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") ||
		strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#[") && !strings.HasPrefix(t, "#include") && !strings.HasPrefix(t, "#define")
}

// --- Go ---

// goUnits splits Go source with go/parser; nil when it does not parse.
func goUnits(src string, nlines int) []codeUnit {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil || f == nil || f.Name == nil {
		return nil
	}
	pkg := f.Name.Name
	line := func(p token.Pos) int { return fset.Position(p).Line - 1 }
	var decls []codeUnit
	for _, d := range f.Decls {
		start := line(d.Pos())
		var doc *ast.CommentGroup
		switch d := d.(type) {
		case *ast.FuncDecl:
			doc = d.Doc
		case *ast.GenDecl:
			doc = d.Doc
		}
		if doc != nil {
			start = line(doc.Pos())
		}
		sym, named := goSymbol(pkg, d)
		decls = append(decls, codeUnit{symbol: sym, start: start, end: line(d.End()) + 1, named: named})
	}
	// The package clause and the imports are the package's own unit; a comment that floats between two
	// declarations goes with the one below it.
	return cover(decls, 0, nlines, pkg, strings.Split(src, "\n"), func(l string) bool {
		t := strings.TrimSpace(l)
		return t == "" || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*")
	})
}

// goSymbol names a declaration: pkg.Func, pkg.Type.Method, pkg.Type, pkg.Name for a var or const (a group
// lists its names). Imports are the package's.
func goSymbol(pkg string, d ast.Decl) (string, bool) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) > 0 {
			if r := recvName(d.Recv.List[0].Type); r != "" {
				return pkg + "." + r + "." + d.Name.Name, true
			}
		}
		return pkg + "." + d.Name.Name, true
	case *ast.GenDecl:
		if d.Tok == token.IMPORT {
			return pkg, false
		}
		var names []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.Name != "_" {
						names = append(names, n.Name)
					}
				}
			}
		}
		if len(names) == 0 {
			return pkg, false
		}
		if len(names) > 4 {
			names = append(names[:4], "…")
		}
		return pkg + "." + strings.Join(names, ", "), true
	}
	return pkg, false
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.ParenExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// --- brace languages ---

// braceLine is what the brace scanner saw on one line, outside strings and comments.
type braceLine struct {
	depth int  // nesting depth at the start of the line
	open  bool // the line opens a brace
	code  bool // the line has code (not only comments and space)
	last  byte // the last code character
}

// scanBraces follows braces, strings ("…", '…', `…`) and comments (//, /* */) over the lines.
func scanBraces(lines []string) []braceLine {
	out := make([]braceLine, len(lines))
	depth := 0
	inBlock, inRaw := false, false
	for i, l := range lines {
		bl := braceLine{depth: depth}
		var quote byte
		for j := 0; j < len(l); j++ {
			c := l[j]
			switch {
			case inBlock:
				if c == '*' && j+1 < len(l) && l[j+1] == '/' {
					inBlock = false
					j++
				}
				continue
			case inRaw:
				if c == '`' {
					inRaw = false
				}
				bl.code, bl.last = true, c
				continue
			case quote != 0:
				if c == '\\' {
					j++
				} else if c == quote {
					quote = 0
				}
				bl.code, bl.last = true, c
				continue
			}
			switch c {
			case '/':
				if j+1 < len(l) && l[j+1] == '/' {
					j = len(l)
					continue
				}
				if j+1 < len(l) && l[j+1] == '*' {
					inBlock = true
					j++
					continue
				}
			case '"':
				quote = c
			case '\'':
				// A Rust lifetime or a char literal: a quote only when a closing one follows closely.
				if k := strings.IndexByte(l[j+1:min(j+6, len(l))], '\''); k >= 0 {
					quote = c
				}
			case '`':
				inRaw = true
			case '{':
				depth++
				bl.open = true
			case '}':
				depth = max(depth-1, 0)
			}
			if c != ' ' && c != '\t' {
				bl.code, bl.last = true, c
			}
		}
		out[i] = bl
	}
	return out
}

// braceUnits splits brace-language source into declarations.
func braceUnits(lines []string) []codeUnit {
	sc := scanBraces(lines)
	depthAfter := func(i int) int {
		if i+1 < len(sc) {
			return sc[i+1].depth
		}
		return 0
	}
	return braceLevel(lines, sc, depthAfter, 0, len(lines), "")
}

// braceLevel splits lines [from, to), which are at one nesting depth, into declarations; outer is the
// symbol path of the enclosing declaration.
func braceLevel(lines []string, sc []braceLine, depthAfter func(int) int, from, to int, outer string) []codeUnit {
	if from >= to {
		return nil
	}
	base := sc[from].depth
	var decls []codeUnit
	for i := from; i < to; {
		if !sc[i].code || isDecorator(lines[i]) {
			i++
			continue
		}
		// A statement or declaration runs until the depth is back at base after a block or a ';', or a
		// blank line ends a statement without one.
		j, block := i, false
		for ; j < to; j++ {
			if sc[j].open || sc[j].depth > base {
				block = true
			}
			if depthAfter(j) <= base && (block || sc[j].last == ';' || sc[j].last == '}' ||
				j+1 < to && strings.TrimSpace(lines[j+1]) == "") {
				break
			}
		}
		end := min(j+1, to)
		header := braceHeader(lines, sc, i, end)
		name, container := braceName(header, block)
		if name == "" {
			i = end
			continue
		}
		sym := name
		if outer != "" {
			sym = outer + "." + name
		}
		u := codeUnit{symbol: sym, start: i, end: end, named: true}
		if container && block && strings.Count(sym, ".") < maxNesting {
			// The members of a class-like declaration: the lines inside its outermost braces.
			k := i
			for k < end && !sc[k].open {
				k++
			}
			if inner := braceLevel(lines, sc, depthAfter, k+1, end-1, sym); hasNamed(inner) {
				// The header (and fields before the first member) is the container's own unit; the closing
				// line goes with the last member.
				ms := cover(inner, k+1, end-1, sym, lines, leadLine)
				head := codeUnit{symbol: sym, start: i, end: ms[0].start, named: true}
				if !ms[0].named {
					head.end = ms[0].end
					ms = ms[1:]
				}
				decls = append(decls, head)
				if len(ms) > 0 {
					ms[len(ms)-1].end = end
				} else {
					decls[len(decls)-1].end = end
				}
				decls = append(decls, ms...)
				i = end
				continue
			}
		}
		decls = append(decls, u)
		i = end
	}
	if outer != "" {
		return decls
	}
	return cover(decls, from, to, outer, lines, leadLine)
}

func hasNamed(us []codeUnit) bool {
	for _, u := range us {
		if u.named {
			return true
		}
	}
	return false
}

// leadLine reports a line that belongs to the declaration below it: blank, a comment, a decorator.
func leadLine(l string) bool {
	t := strings.TrimSpace(l)
	return t == "" || isComment(t) || isDecorator(l)
}

// isDecorator reports an annotation or attribute line (@Override, #[derive(…)], [Fact]).
func isDecorator(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "@") || strings.HasPrefix(t, "#[") ||
		strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") && len(t) > 2 && isIdentStart(t[1])
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// braceHeader is the code of a declaration up to its first brace (at most a few lines), comments removed.
func braceHeader(lines []string, sc []braceLine, start, end int) string {
	var b strings.Builder
	for k := start; k < end && k < start+6; k++ {
		if !sc[k].code {
			continue
		}
		l := lines[k]
		if c := strings.Index(l, "//"); c >= 0 {
			l = l[:c]
		}
		b.WriteString(l)
		b.WriteByte(' ')
		if sc[k].open {
			break
		}
	}
	h := b.String()
	if i := strings.IndexByte(h, '{'); i >= 0 {
		h = h[:i]
	}
	return h
}

var (
	containerRe = regexp.MustCompile(`\b(?:class|interface|struct|enum|trait|namespace|module|object|record|union|protocol|extension)\s+([A-Za-z_$][\w$]*)`)
	implRe      = regexp.MustCompile(`\bimpl\b(?:\s*<[^{]*?>)?\s+(?:[\w:<>, &']+?\s+for\s+)?([A-Za-z_][\w]*)`)
	funcKwRe    = regexp.MustCompile(`\b(?:function\*?|fn|func|fun|def)\s+([A-Za-z_$][\w$]*)`)
	assignRe    = regexp.MustCompile(`^\s*(?:export\s+)?(?:(?:public|private|protected|static|readonly|const|let|var|val)\s+)*([A-Za-z_$][\w$]*)\s*(?::[^=]*)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|[A-Za-z_$][\w$]*\s*=>)`)
	callRe      = regexp.MustCompile(`([A-Za-z_$~][\w$]*(?:::~?[A-Za-z_$][\w$]*)*)\s*(?:<[^<>()]*>)?\s*\(`)
	notNames    = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true, "return": true,
		"sizeof": true, "typeof": true, "new": true, "function": true, "await": true, "super": true, "this": true,
		"else": true, "do": true, "foreach": true, "using": true, "lock": true, "synchronized": true, "match": true,
		"loop": true, "try": true, "with": true, "unsafe": true, "defer": true, "go": true, "select": true}
)

// braceName names a declaration from its header: a class-like container, a function, or (only with a body)
// the last call-like name before its parameters. container says whether its members are declarations.
func braceName(header string, block bool) (name string, container bool) {
	pre := header
	if i := strings.IndexAny(pre, "(="); i >= 0 {
		pre = pre[:i]
	}
	if m := implRe.FindStringSubmatch(pre); m != nil {
		return m[1], true
	}
	if m := containerRe.FindStringSubmatch(pre); m != nil {
		return m[1], true
	}
	if m := funcKwRe.FindStringSubmatch(header); m != nil {
		return m[1], false
	}
	if m := assignRe.FindStringSubmatch(header); m != nil {
		return m[1], false
	}
	if !block {
		return "", false
	}
	for _, m := range callRe.FindAllStringSubmatch(header, -1) {
		n := m[1]
		last := n[strings.LastIndex(n, ":")+1:]
		if !notNames[last] {
			return strings.ReplaceAll(n, "::", "."), false
		}
	}
	return "", false
}

// --- indentation languages (Python) ---

var pyDefRe = regexp.MustCompile(`^\s*(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)`)

// indentUnits splits Python source into classes, functions and methods.
func indentUnits(lines []string) []codeUnit {
	cont := pyContinuation(lines)
	return cover(indentLevel(lines, cont, 0, len(lines), ""), 0, len(lines), "", lines, pyLead)
}

func pyLead(l string) bool {
	t := strings.TrimSpace(l)
	return t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "@")
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

// pyContinuation marks lines that start inside a bracket or a triple-quoted string: they belong to the
// statement above whatever their indentation.
func pyContinuation(lines []string) []bool {
	cont := make([]bool, len(lines))
	depth := 0
	triple := ""
	for i, l := range lines {
		cont[i] = depth > 0 || triple != ""
		for j := 0; j < len(l); j++ {
			if triple != "" {
				if strings.HasPrefix(l[j:], triple) {
					triple = ""
					j += 2
				}
				continue
			}
			switch c := l[j]; c {
			case '#':
				j = len(l)
			case '"', '\'':
				if q := strings.Repeat(string(c), 3); strings.HasPrefix(l[j:], q) {
					triple = q
					j += 2
					continue
				}
				for j++; j < len(l) && l[j] != c; j++ {
					if l[j] == '\\' {
						j++
					}
				}
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth = max(depth-1, 0)
			}
		}
	}
	return cont
}

// indentLevel finds the def and class statements of lines [from, to) at their shallowest indentation;
// a class's methods are found inside it ("Class.method").
func indentLevel(lines []string, cont []bool, from, to int, outer string) []codeUnit {
	level := -1
	for i := from; i < to; i++ {
		if strings.TrimSpace(lines[i]) != "" && !cont[i] {
			level = indentOf(lines[i])
			break
		}
	}
	var decls []codeUnit
	for i := from; i < to; i++ {
		if cont[i] || strings.TrimSpace(lines[i]) == "" || indentOf(lines[i]) != level {
			continue
		}
		m := pyDefRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		end := i + 1
		for j := i + 1; j < to; j++ {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if !cont[j] && indentOf(lines[j]) <= level {
				break
			}
			end = j + 1
		}
		sym := m[2]
		if outer != "" {
			sym = outer + "." + sym
		}
		if m[1] == "class" && strings.Count(sym, ".") < maxNesting {
			if inner := indentLevel(lines, cont, i+1, end, sym); len(inner) > 0 {
				ms := cover(inner, i+1, end, sym, lines, pyLead)
				head := codeUnit{symbol: sym, start: i, end: ms[0].start, named: true}
				if !ms[0].named {
					head.end = ms[0].end
					ms = ms[1:]
				}
				decls = append(decls, head)
				decls = append(decls, ms...)
				i = end - 1
				continue
			}
		}
		decls = append(decls, codeUnit{symbol: sym, start: i, end: end, named: true})
		i = end - 1
	}
	return decls
}
