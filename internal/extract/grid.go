package extract

import (
	"context"
	"math"
	"slices"
	"sort"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/enums"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
)

// rule is a straight horizontal or vertical stroke drawn on a page (a table's ruling line, a cell border),
// as a box in PDF user space, y pointing up; a line drawn as a path has a thin box.
type rule struct{ x0, y0, x1, y1 float64 }

// Ruling lines and grids, in points.
const (
	ruleThick    = 3.0 // a rule is at most this thick ...
	ruleMinLen   = 8.0 // ... and at least this long
	ruleTol      = 2.0 // lines this close are one line; a line reaches another when it ends this close
	maxPageObjs  = 50000
	maxPathSegs  = 32    // paths with more segments (curves, drawings) are not read for edges
	maxPageRules = 4000  // rules kept per page
	maxGrids     = 64    // tables looked for per page
	maxGridCells = 10000 // a grid of more cells is not read as a table
	openMin      = 12.0  // column rules running on this far past a table's last row rule leave it open there
	maxOpenLines = 2000  // an open part of more lines of text is not cut into rows
)

// readRules reads the horizontal and vertical strokes of a page's path objects: a path whose box is thin is
// one rule, and the straight axis-aligned edges of a short path (a rectangle drawn round a cell) are rules.
// Paths inside form XObjects are not read.
func readRules(ctx context.Context, inst pdfium.Pdfium, page references.FPDF_PAGE) []rule {
	var rules []rule
	eachObject(ctx, inst, page, enums.FPDF_PAGEOBJ_PATH, maxPageObjs, func(obj references.FPDF_PAGEOBJECT, r rule) bool {
		if r.horizontal() || r.vertical() {
			rules = append(rules, r)
		} else {
			rules = append(rules, pathEdges(inst, obj)...)
		}
		return len(rules) < maxPageRules
	})
	return rules
}

// eachObject calls fn with each object of type ty among the first limit objects of a page, and its box on
// the page, until fn returns false or ctx is done; it returns the page's count of objects.
func eachObject(ctx context.Context, inst pdfium.Pdfium, page references.FPDF_PAGE, ty enums.FPDF_PAGEOBJ, limit int,
	fn func(obj references.FPDF_PAGEOBJECT, box rule) bool) int {
	ref := requests.Page{ByReference: &page}
	n, err := inst.FPDFPage_CountObjects(&requests.FPDFPage_CountObjects{Page: ref})
	if err != nil {
		return 0
	}
	for i := range min(n.Count, limit) {
		if i%256 == 0 && ctx.Err() != nil {
			break
		}
		o, err := inst.FPDFPage_GetObject(&requests.FPDFPage_GetObject{Page: ref, Index: i})
		if err != nil {
			continue
		}
		t, err := inst.FPDFPageObj_GetType(&requests.FPDFPageObj_GetType{PageObject: o.PageObject})
		if err != nil || t.Type != ty {
			continue
		}
		b, err := inst.FPDFPageObj_GetBounds(&requests.FPDFPageObj_GetBounds{PageObject: o.PageObject})
		if err != nil {
			continue
		}
		box := rule{x0: float64(min(b.Left, b.Right)), x1: float64(max(b.Left, b.Right)),
			y0: float64(min(b.Bottom, b.Top)), y1: float64(max(b.Bottom, b.Top))}
		if !fn(o.PageObject, box) {
			break
		}
	}
	return n.Count
}

// pathEdges returns the axis-aligned straight edges of a path of at most maxPathSegs segments, on the page.
func pathEdges(inst pdfium.Pdfium, obj references.FPDF_PAGEOBJECT) []rule {
	n, err := inst.FPDFPath_CountSegments(&requests.FPDFPath_CountSegments{PageObject: obj})
	if err != nil || n.Count > maxPathSegs {
		return nil
	}
	m, err := inst.FPDFPageObj_GetMatrix(&requests.FPDFPageObj_GetMatrix{PageObject: obj})
	if err != nil {
		return nil
	}
	t := m.Matrix
	onPage := func(x, y float32) (float64, float64) {
		return float64(t.A*x + t.C*y + t.E), float64(t.B*x + t.D*y + t.F)
	}
	var out []rule
	edge := func(ax, ay, bx, by float64) {
		if math.Abs(ax-bx) < 0.5 || math.Abs(ay-by) < 0.5 {
			r := rule{x0: min(ax, bx), x1: max(ax, bx), y0: min(ay, by), y1: max(ay, by)}
			if r.horizontal() || r.vertical() {
				out = append(out, r)
			}
		}
	}
	var px, py, sx, sy float64
	have := false
	for i := 0; i < n.Count; i++ {
		seg, err := inst.FPDFPath_GetPathSegment(&requests.FPDFPath_GetPathSegment{PageObject: obj, Index: i})
		if err != nil {
			return out
		}
		pt, err1 := inst.FPDFPathSegment_GetPoint(&requests.FPDFPathSegment_GetPoint{PathSegment: seg.PathSegment})
		ty, err2 := inst.FPDFPathSegment_GetType(&requests.FPDFPathSegment_GetType{PathSegment: seg.PathSegment})
		cl, err3 := inst.FPDFPathSegment_GetClose(&requests.FPDFPathSegment_GetClose{PathSegment: seg.PathSegment})
		if err1 != nil || err2 != nil || err3 != nil {
			return out
		}
		x, y := onPage(pt.X, pt.Y)
		switch ty.Type {
		case enums.FPDF_SEGMENT_MOVETO:
			sx, sy = x, y
		case enums.FPDF_SEGMENT_LINETO:
			if have {
				edge(px, py, x, y)
			}
		}
		px, py, have = x, y, true
		if cl.IsClose {
			edge(x, y, sx, sy)
			px, py = sx, sy
		}
	}
	return out
}

func (r rule) horizontal() bool {
	return r.y1-r.y0 <= ruleThick && r.x1-r.x0 >= ruleMinLen && r.x1-r.x0 >= 4*(r.y1-r.y0)
}

func (r rule) vertical() bool {
	return r.x1-r.x0 <= ruleThick && r.y1-r.y0 >= ruleMinLen && r.y1-r.y0 >= 4*(r.x1-r.x0)
}

// stroke is a merged ruling line: at pos (y of a horizontal line, x of a vertical one) from lo to hi.
type stroke struct{ pos, lo, hi float64 }

// mergeStrokes joins strokes on one line (pos within ruleTol) that touch or overlap.
func mergeStrokes(ss []stroke) []stroke {
	sort.Slice(ss, func(i, j int) bool { return ss[i].pos < ss[j].pos })
	var out []stroke
	for i := 0; i < len(ss); {
		j := i + 1
		for j < len(ss) && ss[j].pos-ss[i].pos <= ruleTol {
			j++
		}
		group := slices.Clone(ss[i:j])
		pos := 0.0
		for _, s := range group {
			pos += s.pos
		}
		pos /= float64(len(group))
		sort.Slice(group, func(a, b int) bool { return group[a].lo < group[b].lo })
		cur := stroke{pos, group[0].lo, group[0].hi}
		for _, s := range group[1:] {
			if s.lo <= cur.hi+ruleTol {
				cur.hi = max(cur.hi, s.hi)
				continue
			}
			out = append(out, cur)
			cur = stroke{pos, s.lo, s.hi}
		}
		out = append(out, cur)
		i = j
	}
	return out
}

// grid is a ruled table found on a page: its column edges xs (left to right) and row edges ys (top to
// bottom), and the lines of text of each cell (a cell spanning several rows or columns holds its text in its
// top-left position, the positions it covers none).
type grid struct {
	xs, ys []float64
	cells  [][][]string
	h      float64 // median character height in it
	// open tells which ends have no rule of their own (the column rules run on past the last row rule):
	// a table that goes on from the previous page or onto the next. head is the number of rows (of ys)
	// ruled off above a body left open at the bottom: the table's header.
	open struct{ top, bottom bool }
	head int
}

// clusterPos returns the distinct positions of strokes, those within ruleTol taken as one, ascending.
func clusterPos(ss []stroke) []float64 {
	ps := make([]float64, len(ss))
	for i, s := range ss {
		ps[i] = s.pos
	}
	slices.Sort(ps)
	var out []float64
	for _, p := range ps {
		if len(out) > 0 && p-out[len(out)-1] <= ruleTol {
			continue
		}
		out = append(out, p)
	}
	return out
}

// covered reports whether one of the strokes lies on pos and spans at.
func covered(ss []stroke, pos, at float64) bool {
	for _, s := range ss {
		if math.Abs(s.pos-pos) <= ruleTol && at >= s.lo-ruleTol && at <= s.hi+ruleTol {
			return true
		}
	}
	return false
}

// findGrids finds the ruled tables of a page — horizontal and vertical rules that cross one another into at
// least two columns — and takes their characters: each character goes to the cell its centre is in. It
// returns the grids, in no particular order, and the characters outside them. A box of one column (a framed
// note) or of one row is not a table.
func findGrids(pc pageChars) ([]grid, []pchar) {
	if len(pc.rules) == 0 || len(pc.chars) == 0 {
		return nil, pc.chars
	}
	var hs, vs []stroke
	for _, r := range pc.rules {
		switch {
		case r.horizontal():
			hs = append(hs, stroke{(r.y0 + r.y1) / 2, r.x0, r.x1})
		case r.vertical():
			vs = append(vs, stroke{(r.x0 + r.x1) / 2, r.y0, r.y1})
		}
	}
	hs, vs = mergeStrokes(hs), mergeStrokes(vs)
	if len(vs) < 3 {
		return nil, pc.chars
	}
	// Strokes that cross or touch are one table (union-find over horizontal then vertical strokes).
	parent := make([]int, len(hs)+len(vs))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i, h := range hs {
		for j, v := range vs {
			if v.pos >= h.lo-ruleTol && v.pos <= h.hi+ruleTol && h.pos >= v.lo-ruleTol && h.pos <= v.hi+ruleTol {
				parent[find(i)] = find(len(hs) + j)
			}
		}
	}
	comps := map[int][2][]stroke{}
	var roots []int
	for i := range parent {
		root := find(i)
		c, ok := comps[root]
		if !ok {
			roots = append(roots, root)
		}
		if i < len(hs) {
			c[0] = append(c[0], hs[i])
		} else {
			c[1] = append(c[1], vs[i-len(hs)])
		}
		comps[root] = c
	}
	// Column rules that cross no row rule (a page in the middle of a table whose rows are not ruled) are a
	// table when at least three of them run the same length side by side.
	var frames [][2][]stroke
	for _, root := range roots {
		c := comps[root]
		if len(c[0]) > 0 || len(c[1]) != 1 {
			continue
		}
		v := c[1][0]
		k := slices.IndexFunc(frames, func(f [2][]stroke) bool {
			w := f[1][0]
			return math.Abs(w.lo-v.lo) <= ruleTol && math.Abs(w.hi-v.hi) <= ruleTol
		})
		if k < 0 {
			frames = append(frames, [2][]stroke{nil, {v}})
			continue
		}
		frames[k][1] = append(frames[k][1], v)
	}
	all := make([][2][]stroke, 0, len(roots)+len(frames))
	for _, root := range roots {
		all = append(all, comps[root])
	}
	taken := make([]bool, len(pc.chars))
	var grids []grid
	tried := 0
	for _, c := range append(all, frames...) {
		if len(c[1]) < 3 {
			continue
		}
		if tried++; tried > maxGrids {
			break
		}
		hs, open, head := closeOpen(pc.chars, c[0], c[1])
		if len(hs) < 2 {
			continue
		}
		if g, ok := cutGrid(pc.chars, taken, hs, c[1]); ok {
			g.open, g.head = open, head
			grids = append(grids, g)
		}
	}
	if len(grids) == 0 {
		return nil, pc.chars
	}
	var rest []pchar
	for i, c := range pc.chars {
		if !taken[i] {
			rest = append(rest, c)
		}
	}
	return grids, rest
}

// closeOpen closes a table whose outer column rules run on past its first or last row rule (or that has
// no row rules): the ends of the column rules stand for the missing rules, and the open part, which holds
// rows that are not ruled off from one another, is cut into rows (splitOpen). It returns the row rules
// with those added, which ends were open, and how many rows lie above a body open at the bottom.
func closeOpen(chars []pchar, hs, vs []stroke) ([]stroke, struct{ top, bottom bool }, int) {
	var open struct{ top, bottom bool }
	xs := clusterPos(vs)
	left, right := xs[0], xs[len(xs)-1]
	// The outer rules' reach: both must run on for the table to be open.
	reach := func(x float64) (lo, hi float64) {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, v := range vs {
			if math.Abs(v.pos-x) <= ruleTol {
				lo, hi = min(lo, v.lo), max(hi, v.hi)
			}
		}
		return lo, hi
	}
	llo, lhi := reach(left)
	rlo, rhi := reach(right)
	bottom, top := max(llo, rlo), min(lhi, rhi)
	// Only rules across the whole table close it.
	lowest, highest := math.Inf(1), math.Inf(-1)
	for _, h := range hs {
		if h.lo <= left+ruleTol && h.hi >= right-ruleTol {
			lowest, highest = min(lowest, h.pos), max(highest, h.pos)
		}
	}
	// Text just outside the column rules beside an open part means the table goes on past them (rules
	// between some columns only): that part is left to the unruled reading.
	beside := func(lo, hi float64) bool {
		return slices.ContainsFunc(chars, func(c pchar) bool {
			cx, cy := (c.x0+c.x1)/2, c.cy()
			return cy > lo && cy < hi && (cx < left && cx > left-openMin || cx > right && cx < right+openMin)
		})
	}
	out := slices.Clone(hs)
	across := func(y float64) { out = append(out, stroke{y, left, right}) }
	head := 0
	if math.IsInf(lowest, 1) { // no row rule across: open at both ends
		if top-bottom < openMin || beside(bottom, top) {
			return hs, open, 0
		}
		open.top, open.bottom = true, true
		across(top)
		across(bottom)
		for _, y := range splitOpen(chars, xs, bottom, top) {
			across(y)
		}
		return out, open, 0
	}
	if top-highest >= openMin && !beside(highest, top) {
		open.top = true
		across(top)
		for _, y := range splitOpen(chars, xs, highest, top) {
			across(y)
		}
	}
	if lowest-bottom >= openMin && !beside(bottom, lowest) {
		open.bottom = true
		if !open.top {
			head = len(clusterPos(hs)) - 1
		}
		across(bottom)
		for _, y := range splitOpen(chars, xs, bottom, lowest) {
			across(y)
		}
	}
	return out, open, head
}

// splitOpen finds where the rows of a table's part without row rules (between y lo and hi, columns at
// xs) begin: at a line of the first column that starts a paragraph (a list item, an article, or a line
// after a sentence's end, a short line or a gap) where each other column either has no line or also
// starts one — the way a comparison table sets an old and a new text side by side. It returns the y of a
// rule above each such line, but the first.
func splitOpen(chars []pchar, xs []float64, lo, hi float64) []float64 {
	type cline struct {
		y0, y1, h float64
		start     bool
	}
	in := make([][]pchar, len(xs)-1)
	for _, ch := range chars {
		cx, cy := (ch.x0+ch.x1)/2, ch.cy()
		if cx <= xs[0] || cx >= xs[len(xs)-1] || cy <= lo || cy >= hi {
			continue
		}
		c, _ := slices.BinarySearch(xs, cx)
		in[c-1] = append(in[c-1], ch)
	}
	// The line pitch is the table's (all columns'): a column of short entries far apart has gaps, not a
	// wide pitch.
	rows := make([][]row, len(xs)-1)
	var ds []float64
	lines := 0
	for c, cs := range in {
		rows[c] = buildRows(pageChars{chars: cs})
		if lines += len(rows[c]); lines > maxOpenLines {
			return nil
		}
		for i := 1; i < len(rows[c]); i++ {
			ds = append(ds, rows[c][i-1].y0-rows[c][i].y0)
		}
	}
	pitch := median(ds)
	cols := make([][]cline, len(xs)-1)
	for c, rs := range rows {
		right := math.Inf(-1)
		for _, r := range rs {
			right = max(right, r.segs[len(r.segs)-1].x1)
		}
		for i, r := range rs {
			l := cline{y0: r.y0, y1: r.y1, h: r.h, start: i == 0}
			if i > 0 {
				p := rs[i-1]
				l.start = isListStart(r.text()) || endsSentence(p.text()) ||
					p.segs[len(p.segs)-1].x1 < right-1.5*p.h || (pitch > 0 && p.y0-r.y0 > 1.4*pitch)
			}
			cols[c] = append(cols[c], l)
		}
	}
	var out []float64
	for _, l := range cols[0] {
		if !l.start {
			continue
		}
		above := math.Inf(1) // the bottom of the nearest line above, in any column
		split := true
		for c, ls := range cols {
			for _, o := range ls {
				if o.y0 >= l.y1-0.3*l.h {
					above = min(above, o.y0)
				}
				if c > 0 && !o.start && o.y0 < l.y1-0.3*l.h && o.y1 > l.y0+0.3*l.h {
					split = false // a line of another column goes on here
				}
			}
		}
		if split && !math.IsInf(above, 1) {
			out = append(out, (l.y1+above)/2)
		}
	}
	return out
}

// cutGrid makes the table of one set of crossing strokes from the characters not yet taken, and marks those
// it takes. It fails (taking nothing) for fewer than two columns, or fewer than two rows with text.
func cutGrid(chars []pchar, taken []bool, hs, vs []stroke) (grid, bool) {
	xs, ys := clusterPos(vs), clusterPos(hs)
	if len(xs) < 3 || len(ys) < 2 || (len(xs)-1)*(len(ys)-1) > maxGridCells {
		return grid{}, false
	}
	slices.Reverse(ys) // top to bottom
	nr, nc := len(ys)-1, len(xs)-1
	// owner[r][c] is the cell position (r·nc + c) whose text the position belongs to: a missing border
	// merges it with its left or upper neighbour.
	owner := make([][]int, nr)
	for r := range nr {
		owner[r] = make([]int, nc)
		midY := (ys[r] + ys[r+1]) / 2
		for c := range nc {
			midX := (xs[c] + xs[c+1]) / 2
			switch {
			case c > 0 && !covered(vs, xs[c], midY):
				owner[r][c] = owner[r][c-1]
			case r > 0 && !covered(hs, ys[r], midX):
				owner[r][c] = owner[r-1][c]
			default:
				owner[r][c] = r*nc + c
			}
		}
	}
	in := map[int][]int{} // cell → indexes of its characters
	for i, c := range chars {
		if taken[i] {
			continue
		}
		cx, cy := (c.x0+c.x1)/2, c.cy()
		if cx <= xs[0] || cx >= xs[nc] || cy >= ys[0] || cy <= ys[nr] {
			continue
		}
		col, _ := slices.BinarySearch(xs, cx)
		r := 0
		for r < nr-1 && cy < ys[r+1] {
			r++
		}
		cell := owner[r][col-1]
		in[cell] = append(in[cell], i)
	}
	rowsWithText := map[int]bool{}
	for cell := range in {
		rowsWithText[cell/nc] = true
	}
	if len(in) < 2 || len(rowsWithText) < 2 {
		// One row of boxes (a label and its value, a table's header above a body that runs on the
		// next page unclosed) is left to the unruled reading.
		return grid{}, false
	}
	g := grid{xs: xs, ys: ys, cells: make([][][]string, nr)}
	for r := range nr {
		g.cells[r] = make([][]string, nc)
	}
	var heights []float64
	for cell, idx := range in {
		cs := make([]pchar, len(idx))
		for k, i := range idx {
			cs[k] = chars[i]
			heights = append(heights, chars[i].h())
		}
		gapped := 0
		for _, rw := range buildRows(pageChars{chars: cs}) {
			g.cells[cell/nc][cell%nc] = append(g.cells[cell/nc][cell%nc], rw.text())
			if len(rw.segs) > 1 {
				gapped++
			}
		}
		if gapped >= 3 {
			// Lines split by wide gaps: the cell holds columns of its own (rules round a table's header
			// and body but not between its rows or columns), which the unruled reading handles.
			return grid{}, false
		}
	}
	for _, idx := range in {
		for _, i := range idx {
			taken[i] = true
		}
	}
	g.h = median(heights)
	return g, true
}

// table returns the grid's rows of cell text (a cell's lines joined as a paragraph's are), without rows
// and columns that hold nothing, and how many of them are its ruled-off header (g.head).
func (g grid) table(st *spacing) ([][]string, int) {
	var rows [][]string
	head := 0
	used := make([]bool, len(g.xs)-1)
	for r, cells := range g.cells {
		row := make([]string, len(cells))
		filled := false
		for c, lines := range cells {
			for _, l := range lines {
				row[c] = joinText(row[c], l, st)
			}
			if row[c] != "" {
				filled, used[c] = true, true
			}
		}
		if filled {
			rows = append(rows, row)
			if r < g.head {
				head++
			}
		}
	}
	for i, r := range rows {
		var kept []string
		for c, cell := range r {
			if used[c] {
				kept = append(kept, cell)
			}
		}
		rows[i] = kept
	}
	if head == len(rows) {
		head = 0
	}
	return rows, head
}

// continued carries the header of a table left open at the bottom of a page to its continuation, a
// table open at the top of the next page with the same column rules.
type continued struct {
	page   int
	xs     []float64
	header [][]string
}

// rows returns the rows of grid g on page (0-based) and its number of header rows, the header carried
// from the previous page when g goes on from there, and remembers g's header for the next page.
func (c *continued) rows(page int, g grid, st *spacing) ([][]string, int) {
	rows, head := g.table(st)
	if len(rows) == 0 {
		return rows, 0
	}
	if head == 0 {
		head = guessHeader(rows)
	}
	same := c.header != nil && c.page == page-1 && len(c.xs) == len(g.xs) && len(c.header[0]) == len(rows[0])
	for i := 0; same && i < len(g.xs); i++ {
		same = math.Abs(c.xs[i]-g.xs[i]) <= 2*ruleTol
	}
	if g.open.top && same && head == 0 {
		rows = append(slices.Clone(c.header), rows...)
		head = len(c.header)
	}
	*c = continued{}
	if g.open.bottom && head > 0 {
		*c = continued{page: page, xs: g.xs, header: rows[:head]}
	}
	return rows, head
}

// addSpacing counts the spacing of the grid's lines of text into st.
func (g grid) addSpacing(st *spacing) {
	for _, cells := range g.cells {
		for _, lines := range cells {
			for _, l := range lines {
				st.add(l)
			}
		}
	}
}

// gridRow is the row standing for a grid among a page's rows of text: as wide and tall as the grid, read
// where its first line of text would be. Its one segment carries the grid's number (index + 1).
func gridRow(g grid, n int) row {
	return row{y0: g.ys[len(g.ys)-1], y1: g.ys[0], h: g.h,
		segs: []seg{{x0: g.xs[0], x1: g.xs[len(g.xs)-1], grid: n}}}
}

// withGrids inserts the rows standing for grids among rows (ordered top to bottom by their centres): each
// before the first row whose centre is below the grid's first line of text. Grids whose tops are level
// (tables side by side) go left to right.
func withGrids(rows []row, grids []grid) []row {
	gr := make([]row, len(grids))
	for k, g := range grids {
		gr[k] = gridRow(g, k+1)
	}
	sort.SliceStable(gr, func(i, j int) bool { return gr[i].y1 > gr[j].y1 })
	for k := 1; k < len(gr); k++ {
		if gr[k-1].y1-gr[k].y1 < gr[k].h {
			gr[k].y1 = gr[k-1].y1
		}
	}
	sort.SliceStable(gr, func(i, j int) bool {
		if gr[i].y1 != gr[j].y1 {
			return gr[i].y1 > gr[j].y1
		}
		return gr[i].segs[0].x0 < gr[j].segs[0].x0
	})
	key := func(r row) float64 {
		if r.segs[0].grid > 0 {
			return r.y1 - r.h
		}
		return (r.y0 + r.y1) / 2
	}
	for _, g := range gr {
		at := sort.Search(len(rows), func(i int) bool { return key(rows[i]) < key(g) })
		rows = slices.Insert(rows, at, g)
	}
	return rows
}

// flowPart is a run of a flow's lines of text, or (grid > 0) the grid standing there.
type flowPart struct {
	lines []line
	grid  int
}

// splitGrids cuts a flow at the lines standing for grids.
func splitGrids(flow []line) []flowPart {
	var out []flowPart
	var run []line
	for _, l := range flow {
		if l.grid == 0 {
			run = append(run, l)
			continue
		}
		if len(run) > 0 {
			out = append(out, flowPart{lines: run})
			run = nil
		}
		out = append(out, flowPart{grid: l.grid})
	}
	if len(run) > 0 {
		out = append(out, flowPart{lines: run})
	}
	return out
}
