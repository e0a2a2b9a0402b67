package meta

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// Row is one record: its document and metadata.
type Row struct {
	DocumentID string
	Meta       map[string]any
}

// Kind is what a question asks of the records.
type Kind string

// Question kinds. KindNone: the question names nothing of the schema (an ordinary question for the
// documents); KindList: the rows matching its conditions; KindFact: fields of named rows; KindContent:
// something their documents say; KindCompare: named or matching rows side by side.
const (
	KindNone    Kind = ""
	KindList    Kind = "list"
	KindFact    Kind = "fact"
	KindContent Kind = "content"
	KindCompare Kind = "compare"
)

// Query is what a question asks, read by Extract.
type Query struct {
	Kind Kind `json:"kind"`
	// Conds are the conditions on schema fields, as the question says them (a computed field by value).
	Conds []rag.MetaCond `json:"conditions"`
	// Named are the keys of the rows the question names.
	Named []string `json:"named,omitempty"`
	// Asked are the fields the question names (by an alias).
	Asked []string `json:"asked,omitempty"`
	// Order is the field the rows are compared or ordered by, with "-" for descending; "" for the schema's.
	Order string `json:"order,omitempty"`
	// Top is true when the question asks for the first rows of that order (가장 싼, the cheapest).
	Top bool `json:"top,omitempty"`
	// Focus are the question's words that are not about the schema: what a content question asks.
	Focus []string `json:"focus,omitempty"`
}

// Language cues. They are grammar and comparison words of Korean and English, not words of any domain.
var (
	// particles may follow a value or a name inside one written word (마포구에서, 접수 중인).
	particles = []string{"", "은", "는", "이", "가", "을", "를", "에", "에서", "에서는", "에서도", "에는", "엔", "의", "도", "만",
		"로", "으로", "으로는", "과", "와", "랑", "이랑", "하고", "인", "이고", "이며", "인데", "이나", "나", "중", "중에", "중인",
		"들", "부터", "까지", "보다", "이야", "야", "인가", "인가요", "인지", "이에요", "예요", "에요", "요", "한", "하는", "할", "해", "한데", "'s", "s"}
	compareCues = []string{"비교", "vs", "versus", "compare"}
	// superlativeCues ask for the first of an order over every matching row, not a side-by-side.
	superlativeCues = []string{"가장", "제일", "최저", "최고", "lowest", "cheapest", "earliest", "highest", "latest", "most", "least"}
	lowerCues       = []string{"낮은", "낮아", "싼", "저렴", "적은", "작은", "빠른", "빨리", "이른", "먼저", "lower", "cheaper", "cheapest", "lowest", "earlier", "earliest", "sooner", "fewer", "smaller"}
	higherCues      = []string{"높은", "비싼", "많은", "큰", "늦은", "higher", "highest", "more", "most", "larger", "later", "latest"}
	// comparators after an amount, count or date.
	comparators = []struct {
		word string
		op   rag.MetaOp
	}{
		{"이하", rag.OpLte}, {"이상", rag.OpGte}, {"미만", rag.OpLt}, {"초과", rag.OpGt}, {"까지", rag.OpLte},
		{"이내", rag.OpLte}, {"이전", rag.OpLte}, {"이후", rag.OpGte}, {"부터", rag.OpGte}, {"넘는", rag.OpGt},
		{"아래", rag.OpLt}, {"or less", rag.OpLte}, {"or more", rag.OpGte}, {"and under", rag.OpLte},
		{"and over", rag.OpGte}, {"under", rag.OpLt}, {"below", rag.OpLt}, {"over", rag.OpGt}, {"above", rag.OpGt},
		{"up to", rag.OpLte}, {"at most", rag.OpLte}, {"at least", rag.OpGte},
	}
	// fillers are the words of asking (얼마야, 알려줘, show me) that say nothing about what is asked.
	fillers = []string{"얼마", "얼마야", "얼마예요", "언제", "언제야", "어디", "어디야", "뭐", "뭐야", "무엇", "무엇인가요", "몇", "알려줘",
		"알려", "알려주세요", "줘", "보여줘", "보여", "보여주세요", "있어", "있나요", "있니", "있는", "있는지", "어때", "어떻게", "돼", "되나요",
		"돼요", "궁금해", "궁금합니다", "지금", "좀", "그리고", "그", "혹시", "현재", "what", "is", "the", "of", "for", "show", "me", "list",
		"tell", "how", "much", "when", "where", "are", "there", "any", "a", "an", "please", "in", "with", "and"}
	// withinCues after a duration: within that span from the as-of date.
	withinCues = []string{"안", "이내", "내", "within"}
)

var (
	numberRE   = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)
	isoDateRE  = regexp.MustCompile(`(\d{4})-(\d{2})-(\d{2})`)
	monthRE    = regexp.MustCompile(`(?:(\d{4})년\s*)?(\d{1,2})월(?:\s*(\d{1,2})일)?`)
	durationRE = regexp.MustCompile(`(\d+|한|두|세|네|일)\s*(일|주일|주|개월|달|년)`)
)

// text is the question being read: its runes, and which of them a match has used.
type text struct {
	r    []rune
	used []bool
	// words are the spans [start, end) of the question's words (letters and digits).
	words [][2]int
}

func newText(q string) *text {
	t := &text{r: []rune(q)}
	t.used = make([]bool, len(t.r))
	start := -1
	for i, c := range t.r {
		if unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' || c == '-' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			t.words = append(t.words, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		t.words = append(t.words, [2]int{start, len(t.r)})
	}
	return t
}

func (t *text) word(w [2]int) string { return string(t.r[w[0]:w[1]]) }

func (t *text) use(from, to int) {
	for i := from; i < to && i < len(t.used); i++ {
		t.used[i] = true
	}
}

// stems returns the ways to read the word w as a stem followed by a particle, longest stem first, each with
// the stem's end.
func (t *text) stems(w [2]int) []stem {
	word := t.r[w[0]:w[1]]
	var out []stem
	for _, p := range particles {
		pr := []rune(p)
		if len(pr) >= len(word) || !strings.EqualFold(string(word[len(word)-len(pr):]), p) {
			continue
		}
		out = append(out, stem{s: string(word[:len(word)-len(pr)]), start: w[0], end: w[1] - len(pr)})
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].s) > len(out[j].s) })
	return out
}

type stem struct {
	s          string
	start, end int
}

// find returns the start of phrase in the question (spaces ignored on both sides) beginning at a word
// start and ending at a word end or before a particle, or -1; end is the rune after the match. from skips
// earlier matches.
func (t *text) find(phrase string, from int) (start, end int) {
	p := []rune(strings.ToLower(strings.Join(strings.Fields(phrase), "")))
	if len(p) == 0 {
		return -1, -1
	}
	for _, w := range t.words {
		if w[0] < from {
			continue
		}
		i, ok := t.matchAt(w[0], p)
		if !ok {
			continue
		}
		// the rest of the word must be a particle.
		wend := i
		for wend < len(t.r) && (unicode.IsLetter(t.r[wend]) || unicode.IsDigit(t.r[wend])) {
			wend++
		}
		if slices.ContainsFunc(particles, func(x string) bool { return strings.EqualFold(x, string(t.r[i:wend])) }) {
			return w[0], i
		}
	}
	return -1, -1
}

// matchAt matches the lower-case runes p against the question from rune st on, skipping the question's
// spaces, and returns the rune after the match.
func (t *text) matchAt(st int, p []rune) (int, bool) {
	i, j := st, 0
	for i < len(t.r) && j < len(p) {
		if unicode.IsSpace(t.r[i]) {
			i++
			continue
		}
		if unicode.ToLower(t.r[i]) != p[j] {
			return 0, false
		}
		i++
		j++
	}
	return i, j == len(p)
}

// occurrences reports every start of s in the question as a substring (spaces ignored), for field aliases.
func (t *text) occurrences(s string) [][2]int {
	p := []rune(strings.ToLower(strings.Join(strings.Fields(s), "")))
	var out [][2]int
	if len(p) == 0 {
		return nil
	}
	for st := range t.r {
		if unicode.IsSpace(t.r[st]) {
			continue
		}
		if i, ok := t.matchAt(st, p); ok {
			out = append(out, [2]int{st, i})
		}
	}
	return out
}

// Extract reads what question asks of the rows of a collection with schema s, relative dates against asOf.
// rows supply the values a question can name (for enums without declared values, words of text fields,
// titles) and are not filtered here: the conditions go to the store (Filter).
func (s *Schema) Extract(question string, rows []Row, asOf time.Time) *Query {
	t := newText(question)
	q := &Query{}
	var conds []rag.MetaCond
	add := func(field string, op rag.MetaOp, v any) {
		c := rag.MetaCond{Key: field, Op: op, Values: []any{v}}
		for _, x := range conds {
			if x.Key == c.Key && x.Op == c.Op && x.Values[0] == v {
				return
			}
		}
		conds = append(conds, c)
	}

	// The key of a row, written out.
	for _, r := range rows {
		if k, _ := r.Meta[s.Key].(string); k != "" {
			for _, o := range t.occurrences(k) {
				t.use(o[0], o[1])
				if !slices.Contains(q.Named, k) {
					q.Named = append(q.Named, k)
				}
			}
		}
	}

	// Phrases of the schema.
	for _, p := range s.Phrases {
		for _, w := range p.Words {
			if st, end := t.find(w, 0); st >= 0 {
				t.use(st, end)
				for _, c := range p.Conds {
					v := c.Value
					if strings.HasPrefix(v, "$as_of") {
						v, _ = resolveAsOf(v, asOf)
					}
					val, _ := s.byName[c.Field].Parse(v)
					add(c.Field, c.Op, val)
				}
				break
			}
		}
	}

	for _, w := range s.RecordWords {
		for st, end := t.find(w, 0); st >= 0; st, end = t.find(w, end) {
			t.use(st, end)
		}
	}

	// Where the fields' aliases are; a value said in those words (마감된 is a status, not the deadline) wins.
	aliasMask := make([]bool, len(t.r))
	for _, f := range s.Fields {
		for _, a := range f.Aliases {
			for _, o := range t.occurrences(a) {
				for i := o[0]; i < o[1]; i++ {
					aliasMask[i] = true
				}
			}
		}
	}

	// Values of enums and text fields.
	sets := map[string][]string{} // field → values named, intersected across the question's words
	named := func(field string, vals []string) {
		if prev, ok := sets[field]; ok {
			if both := intersect(prev, vals); len(both) > 0 {
				sets[field] = both
				return
			}
			sets[field] = union(prev, vals)
			return
		}
		sets[field] = vals
	}
	known := map[string]bool{} // stems that named a known value
	for i := range s.Fields {
		f := &s.Fields[i]
		if f.Type != TypeEnum && f.Type != TypeText || f.Name == s.Key || f.Name == s.Title {
			continue
		}
		values := f.Values
		if len(f.Computed) > 0 {
			values = sortedKeys(f.Computed)
		} else if len(values) == 0 {
			values = distinct(rows, f.Name)
		}
		for _, v := range values {
			for _, a := range append([]string{v}, f.ValueAliases[v]...) {
				if st, end := t.find(a, 0); st >= 0 && !t.used[st] {
					t.use(st, end)
					named(f.Name, []string{v})
					known[string(t.r[st:end])] = true
				}
			}
		}
		if f.Words {
			byWord := map[string][]string{}
			for _, v := range values {
				for _, w := range strings.Fields(v) {
					byWord[w] = append(byWord[w], v)
				}
			}
			for _, w := range t.words {
				for _, st := range t.stems(w) {
					if utf8.RuneCountInString(st.s) < 2 {
						continue
					}
					var vals []string
					for vw, vs := range byWord {
						if vw == st.s || strings.HasPrefix(vw, st.s) {
							vals = union(vals, vs)
						}
					}
					if len(vals) > 0 {
						t.use(st.start, st.end)
						named(f.Name, vals)
						known[st.s] = true
						break
					}
				}
			}
		}
	}
	// Values no row has yet, recognised by a field's pattern.
	for i := range s.Fields {
		f := &s.Fields[i]
		if f.pattern == nil {
			continue
		}
		for _, w := range t.words {
			for _, st := range t.stems(w) {
				if known[st.s] || t.used[st.start] || aliasMask[st.start] || !f.pattern.MatchString(st.s) || s.prefixOfWord(rows, st.s) {
					continue
				}
				t.use(st.start, st.end)
				sets[f.Name] = union(sets[f.Name], []string{st.s})
				break
			}
		}
	}
	for _, f := range s.Fields {
		if vals := sets[f.Name]; len(vals) == 1 {
			add(f.Name, rag.OpEq, vals[0])
		} else if len(vals) > 1 {
			c := rag.MetaCond{Key: f.Name, Op: rag.OpIn}
			for _, v := range vals {
				c.Values = append(c.Values, v)
			}
			conds = append(conds, c)
		}
	}

	// Fields named by their aliases: where they are, for the numbers and dates below.
	aliasAt := map[string][][2]int{}
	for _, f := range s.Fields {
		for _, a := range f.Aliases {
			for _, o := range t.occurrences(a) {
				if t.used[o[0]] {
					continue
				}
				aliasAt[f.Name] = append(aliasAt[f.Name], o)
				if !slices.Contains(q.Asked, f.Name) {
					q.Asked = append(q.Asked, f.Name)
				}
			}
		}
	}
	for _, os := range aliasAt {
		for _, o := range os {
			t.use(o[0], o[1])
		}
	}

	// Rows named by a word of their title that no other row's title has (공덕동).
	s.namedByTitle(t, rows, q)

	// Amounts, counts and dates.
	s.numbers(t, aliasAt, asOf, add)

	q.Conds = conds
	q.Focus = focus(t)
	q.Kind, q.Order = s.kind(t, q)
	q.Top = q.Order != "" && len(q.Named) == 0 && slices.ContainsFunc(t.words, func(w [2]int) bool {
		return slices.Contains(superlativeCues, strings.ToLower(t.word(w)))
	})
	return q
}

// prefixOfWord reports whether w is a word of a Words field's value with something appended (서울시 for
// 서울특별시): a known place written another way, not an unknown value.
func (s *Schema) prefixOfWord(rows []Row, w string) bool {
	r := []rune(w)
	if len(r) < 3 {
		return false
	}
	head := string(r[:len(r)-1])
	for _, f := range s.Fields {
		if !f.Words {
			continue
		}
		for _, v := range distinct(rows, f.Name) {
			for _, vw := range strings.Fields(v) {
				if strings.HasPrefix(vw, head) {
					return true
				}
			}
		}
	}
	return false
}

// namedByTitle finds the rows whose title has a word of the question that no other title has.
func (s *Schema) namedByTitle(t *text, rows []Row, q *Query) {
	owners := map[string][]string{} // title word → keys of the rows whose title has it
	for _, r := range rows {
		title, _ := r.Meta[s.Title].(string)
		key, _ := r.Meta[s.Key].(string)
		for _, w := range strings.Fields(title) {
			if !slices.Contains(owners[w], key) {
				owners[w] = append(owners[w], key)
			}
		}
	}
	for _, w := range t.words {
		for _, st := range t.stems(w) {
			if t.used[st.start] {
				break
			}
			if keys := owners[st.s]; len(keys) == 1 && utf8.RuneCountInString(st.s) >= 2 {
				t.use(st.start, st.end)
				if !slices.Contains(q.Named, keys[0]) {
					q.Named = append(q.Named, keys[0])
				}
				break
			}
		}
	}
	// The other words of a named row's title are not the question's focus either.
	for _, key := range q.Named {
		for _, r := range rows {
			if r.Meta[s.Key] != key {
				continue
			}
			title, _ := r.Meta[s.Title].(string)
			for _, tw := range strings.Fields(title) {
				for _, w := range t.words {
					for _, st := range t.stems(w) {
						if st.s == tw || utf8.RuneCountInString(st.s) >= 2 && strings.HasPrefix(tw, st.s) {
							t.use(st.start, st.end)
						}
					}
				}
			}
		}
	}
}

// numbers reads amounts (money fields), counts (integer fields with a unit) and dates (date fields), each
// for the field whose alias is nearest.
func (s *Schema) numbers(t *text, aliasAt map[string][][2]int, asOf time.Time, add func(string, rag.MetaOp, any)) {
	q := string(t.r)
	runeAt := func(byteOff int) int { return utf8.RuneCountInString(q[:byteOff]) }
	nearest := func(types []Type, from, to int) *Field {
		var best *Field
		bestD := math.MaxInt
		for i := range s.Fields {
			f := &s.Fields[i]
			if !slices.Contains(types, f.Type) {
				continue
			}
			for _, o := range aliasAt[f.Name] {
				d := from - o[1]
				if o[0] >= to {
					d = o[0] - to
				}
				if d < 0 {
					d = 0
				}
				if d < bestD {
					best, bestD = f, d
				}
			}
		}
		if best == nil { // the only field of those types, if there is just one
			for i := range s.Fields {
				if slices.Contains(types, s.Fields[i].Type) {
					if best != nil {
						return nil
					}
					best = &s.Fields[i]
				}
			}
		}
		return best
	}
	after := func(end int) (rag.MetaOp, int) {
		rest := strings.TrimLeft(string(t.r[end:]), " ")
		skipped := len(t.r[end:]) - utf8.RuneCountInString(rest)
		for _, c := range comparators {
			if strings.HasPrefix(strings.ToLower(rest), c.word) {
				return c.op, end + skipped + utf8.RuneCountInString(c.word)
			}
		}
		return rag.OpEq, end
	}

	// ISO dates.
	for _, m := range isoDateRE.FindAllStringIndex(q, -1) {
		from, to := runeAt(m[0]), runeAt(m[1])
		d, err := time.Parse(time.DateOnly, q[m[0]:m[1]])
		if err != nil {
			continue
		}
		op, end := after(to)
		if f := nearest([]Type{TypeDate}, from, end); f != nil {
			add(f.Name, op, d.Format(time.DateOnly))
			t.use(from, end)
		}
	}
	// Months (12월, 2027년 1월, 12월 3일).
	for _, m := range monthRE.FindAllStringSubmatchIndex(q, -1) {
		from, to := runeAt(m[0]), runeAt(m[1])
		if t.used[from] {
			continue
		}
		month, _ := strconv.Atoi(q[m[4]:m[5]])
		if month < 1 || month > 12 {
			continue
		}
		year := asOf.Year()
		if m[2] >= 0 {
			year, _ = strconv.Atoi(q[m[2]:m[3]])
		} else if time.Month(month) < asOf.Month() {
			year++
		}
		first := time.Date(year, time.Month(month), 1, 0, 0, 0, 0, time.UTC)
		last := first.AddDate(0, 1, -1)
		if m[6] >= 0 {
			day, _ := strconv.Atoi(q[m[6]:m[7]])
			first = time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
			last = first
		}
		op, end := after(to)
		f := nearest([]Type{TypeDate}, from, end)
		if f == nil {
			continue
		}
		t.use(from, end)
		switch op {
		case rag.OpLte, rag.OpLt:
			add(f.Name, rag.OpLte, last.Format(time.DateOnly))
		case rag.OpGte, rag.OpGt:
			add(f.Name, rag.OpGte, first.Format(time.DateOnly))
		default:
			add(f.Name, rag.OpGte, first.Format(time.DateOnly))
			add(f.Name, rag.OpLte, last.Format(time.DateOnly))
		}
	}
	// Calendar spans named relative to the as-of date (이번 주, 다음 달, next month).
	for _, sp := range relativeSpans {
		for _, o := range t.occurrences(sp.words) {
			if t.used[o[0]] {
				continue
			}
			first, last := sp.span(asOf)
			op, end := after(o[1])
			f := nearest([]Type{TypeDate}, o[0], end)
			if f == nil {
				continue
			}
			t.use(o[0], end)
			if op == rag.OpLte || op == rag.OpLt {
				first = asOf // until next week: from now
			}
			if op != rag.OpGte && op != rag.OpGt {
				add(f.Name, rag.OpGte, first.Format(time.DateOnly))
			}
			if op != rag.OpGte && op != rag.OpGt {
				add(f.Name, rag.OpLte, last.Format(time.DateOnly))
			}
		}
	}
	// Durations from the as-of date (3개월 안, 일주일 안에, within 2 weeks).
	for _, m := range durationRE.FindAllStringSubmatchIndex(q, -1) {
		from, to := runeAt(m[0]), runeAt(m[1])
		if t.used[from] {
			continue
		}
		rest := strings.TrimLeft(string(t.r[to:]), " ")
		within := false
		for _, c := range withinCues {
			if strings.HasPrefix(rest, c) {
				within = true
				to += len(t.r[to:]) - utf8.RuneCountInString(rest) + utf8.RuneCountInString(c)
				break
			}
		}
		if !within {
			continue
		}
		n := koreanCount(q[m[2]:m[3]])
		unit := q[m[4]:m[5]]
		if n == 0 && q[m[2]:m[3]] == "일" && unit == "주일" { // 일주일: one week
			n = 1
		}
		if n <= 0 {
			continue
		}
		var until time.Time
		switch unit {
		case "일":
			until = asOf.AddDate(0, 0, n)
		case "주", "주일":
			until = asOf.AddDate(0, 0, 7*n)
		case "개월", "달":
			until = asOf.AddDate(0, n, 0)
		case "년":
			until = asOf.AddDate(n, 0, 0)
		}
		f := nearest([]Type{TypeDate}, from, to)
		if f == nil {
			continue
		}
		t.use(from, to)
		add(f.Name, rag.OpGte, asOf.Format(time.DateOnly))
		add(f.Name, rag.OpLte, until.Format(time.DateOnly))
	}
	// Amounts and counts.
	for _, m := range amounts(q) {
		from, to := runeAt(m.start), runeAt(m.end)
		if t.used[from] {
			continue
		}
		op, end := after(to)
		var f *Field
		if m.unit != "" {
			for i := range s.Fields {
				if s.Fields[i].Type == TypeInteger && s.Fields[i].Unit != "" && s.Fields[i].Unit == m.unit {
					f = &s.Fields[i]
				}
			}
		}
		if f == nil && m.money {
			f = nearest([]Type{TypeMoney}, from, end)
		}
		if f == nil {
			continue
		}
		t.use(from, end)
		add(f.Name, op, m.value)
	}
}

type amount struct {
	start, end int // byte offsets in the question
	value      float64
	money      bool
	unit       string // the word after a plain number (세대)
}

// amounts finds money (1,200만원, 1억 2,000만원, 12,000,000원, 500만) and plain numbers followed by a word.
func amounts(q string) []amount {
	var out []amount
	locs := numberRE.FindAllStringIndex(q, -1)
	for i := 0; i < len(locs); i++ {
		m := locs[i]
		// skip the digits of ISO dates and months.
		if m[1] < len(q) && (q[m[1]] == '-' || strings.HasPrefix(q[m[1]:], "월") || strings.HasPrefix(q[m[1]:], "년") || strings.HasPrefix(q[m[1]:], "일")) {
			continue
		}
		if m[0] > 0 && q[m[0]-1] == '-' {
			continue
		}
		a := amount{start: m[0]}
		total, end, money := 0.0, 0, false
		for {
			n, _ := strconv.ParseFloat(strings.ReplaceAll(q[locs[i][0]:locs[i][1]], ",", ""), 64)
			rest := q[locs[i][1]:]
			mult := 1.0
			unitLen := 0
			for _, u := range []struct {
				s string
				v float64
			}{{"천만", 1e7}, {"백만", 1e6}, {"억", 1e8}, {"만", 1e4}, {"천", 1e3}} {
				if strings.HasPrefix(rest, u.s) {
					mult, unitLen, money = u.v, len(u.s), true
					break
				}
			}
			total += n * mult
			end = locs[i][1] + unitLen
			// 1억 2,000만원: another number with a smaller unit follows.
			if mult >= 1e8 && i+1 < len(locs) && strings.TrimSpace(q[end:locs[i+1][0]]) == "" {
				i++
				continue
			}
			break
		}
		if strings.HasPrefix(q[end:], "원") {
			end += len("원")
			money = true
		} else if strings.HasPrefix(strings.ToLower(q[end:]), " won") {
			end += len(" won")
			money = true
		}
		a.end, a.value, a.money = end, total, money
		if !money {
			w := []rune(q[end:])
			j := 0
			for j < len(w) && unicode.IsLetter(w[j]) {
				j++
			}
			a.unit = string(w[:j])
			for _, p := range particles {
				if p != "" && strings.HasSuffix(a.unit, p) && len(a.unit) > len(p) {
					a.unit = strings.TrimSuffix(a.unit, p)
					break
				}
			}
			a.end = end + len(a.unit)
		}
		out = append(out, a)
	}
	// Amounts in Korean numerals: 천만원, 오백만 원 이하, 일억.
	for _, m := range koreanAmountRE.FindAllStringSubmatchIndex(q, -1) {
		start, end := m[3], m[1] // after the character before the amount
		rest := strings.TrimLeft(q[end:], " ")
		if m[10] < 0 && !slices.ContainsFunc(comparators, func(c struct {
			word string
			op   rag.MetaOp
		}) bool {
			return strings.HasPrefix(rest, c.word)
		}) {
			continue // without 원 or a comparator it is not an amount (만 19세)
		}
		v := 1.0
		if m[4] >= 0 {
			v = float64(strings.Index("일이삼사오육칠팔구", q[m[4]:m[5]])/len("일") + 1)
		}
		switch {
		case m[6] < 0:
		case q[m[6]:m[7]] == "천":
			v *= 1000
		case q[m[6]:m[7]] == "백":
			v *= 100
		default:
			v *= 10
		}
		if q[m[8]:m[9]] == "억" {
			v *= 1e8
		} else {
			v *= 1e4
		}
		out = append(out, amount{start: start, end: end, value: v, money: true})
	}
	return out
}

// koreanAmountRE is an amount in Korean numerals at the start of a word: digit, 천/백/십, 억/만, 원.
var koreanAmountRE = regexp.MustCompile(`(^|[^가-힣])([일이삼사오육칠팔구])?(천|백|십)?(억|만)(\s*원)?`)

func koreanCount(s string) int {
	switch s {
	case "한":
		return 1
	case "두":
		return 2
	case "세":
		return 3
	case "네":
		return 4
	}
	n, _ := strconv.Atoi(s)
	return n
}

// relativeSpans are calendar spans named relative to the as-of date; weeks run Monday to Sunday.
var relativeSpans = []struct {
	words string
	span  func(asOf time.Time) (time.Time, time.Time)
}{
	{"이번 주", func(d time.Time) (time.Time, time.Time) { return d, weekStart(d).AddDate(0, 0, 6) }},
	{"this week", func(d time.Time) (time.Time, time.Time) { return d, weekStart(d).AddDate(0, 0, 6) }},
	{"다음 주", func(d time.Time) (time.Time, time.Time) {
		return weekStart(d).AddDate(0, 0, 7), weekStart(d).AddDate(0, 0, 13)
	}},
	{"next week", func(d time.Time) (time.Time, time.Time) {
		return weekStart(d).AddDate(0, 0, 7), weekStart(d).AddDate(0, 0, 13)
	}},
	{"이번 달", func(d time.Time) (time.Time, time.Time) { return d, monthStart(d).AddDate(0, 1, -1) }},
	{"this month", func(d time.Time) (time.Time, time.Time) { return d, monthStart(d).AddDate(0, 1, -1) }},
	{"다음 달", func(d time.Time) (time.Time, time.Time) {
		return monthStart(d).AddDate(0, 1, 0), monthStart(d).AddDate(0, 2, -1)
	}},
	{"next month", func(d time.Time) (time.Time, time.Time) {
		return monthStart(d).AddDate(0, 1, 0), monthStart(d).AddDate(0, 2, -1)
	}},
	{"올해", func(d time.Time) (time.Time, time.Time) { return d, time.Date(d.Year(), 12, 31, 0, 0, 0, 0, time.UTC) }},
	{"내년", func(d time.Time) (time.Time, time.Time) {
		return time.Date(d.Year()+1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(d.Year()+1, 12, 31, 0, 0, 0, 0, time.UTC)
	}},
}

func weekStart(d time.Time) time.Time {
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

func monthStart(d time.Time) time.Time {
	return time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// kind decides what the question asks, and the order of a comparison.
func (s *Schema) kind(t *text, q *Query) (Kind, string) {
	lower := strings.ToLower(string(t.r))
	cue := func(list []string) bool {
		for _, w := range t.words {
			word := strings.ToLower(t.word(w))
			for _, c := range list {
				if strings.HasPrefix(word, c) {
					return true
				}
			}
		}
		return false
	}
	order := ""
	field := ""
	for _, a := range q.Asked {
		if f := s.byName[a]; f != nil && (f.Type == TypeMoney || f.Type == TypeInteger || f.Type == TypeDate) {
			field = a
			break
		}
	}
	if field != "" {
		switch {
		case cue(lowerCues):
			order = field
		case cue(higherCues):
			order = "-" + field
		}
	}
	compare := cue(compareCues) || strings.Contains(lower, " vs ") || order != "" && (len(q.Named) != 1)
	switch {
	case compare && (len(q.Named) >= 2 || len(q.Conds) > 0 || order != "" && len(q.Named) == 0):
		if order == "" && field != "" {
			order = field
		}
		return KindCompare, order
	case len(q.Named) > 0:
		if len(q.Focus) == 0 {
			return KindFact, order
		}
		return KindContent, order
	case len(q.Conds) > 0:
		return KindList, order
	}
	return KindNone, order
}

// focus returns the question's words that no match used, their particles removed.
func focus(t *text) []string {
	var out []string
	for _, w := range t.words {
		if t.used[w[0]] {
			continue
		}
		word := t.word(w)
		if st := t.stems(w); len(st) > 0 && utf8.RuneCountInString(st[len(st)-1].s) >= 1 {
			// the shortest reading that is still two letters, to drop particles
			for i := len(st) - 1; i >= 0; i-- {
				if utf8.RuneCountInString(st[i].s) >= 2 {
					word = st[i].s
					break
				}
			}
		}
		if !slices.ContainsFunc(fillers, func(f string) bool { return strings.EqualFold(f, word) || strings.EqualFold(f, t.word(w)) }) {
			out = append(out, word)
		}
	}
	return out
}

func distinct(rows []Row, field string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		if v, ok := r.Meta[field].(string); ok && v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
