package extractive

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/ragd/ragd/internal/followup"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Defaults of Options, chosen by measurement on KorQuAD 1.0 dev and the project question sets
// (docs/retrieval.md, "Answers").
const (
	DefaultMaxChars     = 300
	DefaultMaxSentences = 4
	DefaultMinCoverage  = 0.25
	DefaultMoreChars    = 160
)

// Options tune the answerer. The zero value means the defaults.
type Options struct {
	// MaxChars is the answer length the answerer aims for, in characters, citations included. The best
	// sentence is always given (cut to its matching clauses when it is long); further sentences only while
	// they fit.
	MaxChars int
	// MaxSentences is the most sentences (or table rows) an answer quotes.
	MaxSentences int
	// MinCoverage is the share of the question's focus words (not its fillers, question words or
	// predicates) that the answer's sentences must hold (a word counts in part when only some of its
	// syllable bigrams match), though one and a half words always suffice; below it the answer says that
	// the documents do not cover the question.
	MinCoverage float64
	// MoreChars is the room past MaxChars that further sentences may take once the answer is decided:
	// they are those the answerer would quote with MaxChars+MoreChars, added after its own (one sentence
	// more than MaxSentences at most) and not weighed in deciding whether the passages cover the question.
	// Zero means DefaultMoreChars with the default MaxChars and none with a MaxChars of one's own; a
	// request's own MaxChars (a comparison's part) gets none.
	MoreChars int
}

// WithDefaults returns o with zero fields replaced by their defaults.
func (o Options) WithDefaults() Options {
	if o.MaxChars <= 0 {
		o.MaxChars = DefaultMaxChars
		if o.MoreChars == 0 {
			o.MoreChars = DefaultMoreChars
		}
	}
	if o.MaxSentences <= 0 {
		o.MaxSentences = DefaultMaxSentences
	}
	if o.MinCoverage <= 0 {
		o.MinCoverage = DefaultMinCoverage
	}
	return o
}

// Generator is the offline extractive answerer. It is safe for concurrent use.
type Generator struct {
	opt Options
	p   params
}

// New returns an extractive Generator.
func New(opt Options) *Generator {
	return &Generator{opt: opt.WithDefaults(), p: defaultParams}
}

// Name implements rag.Generator.
func (g *Generator) Name() string { return "extractive" }

// Generate implements rag.Generator: it quotes the passages' sentences that best answer the question, each
// followed by the [n] of its passage, or says in the question's language that the documents do not cover
// the question. The text streams through onDelta one sentence (or table) at a time.
func (g *Generator) Generate(ctx context.Context, req rag.GenerateRequest, onDelta func(string) error) (*rag.Generation, error) {
	if err := ctx.Err(); err != nil {
		return nil, rag.WrapError(rag.CodeLLMFailed, err, "extractive answer")
	}
	lang := req.Language
	if lang == "" {
		lang = textproc.DetectLanguage(req.Question)
	}
	gen := g
	if req.MaxChars > 0 && req.MaxChars < g.opt.MaxChars {
		c := *g
		c.opt.MaxChars = req.MaxChars
		c.opt.MoreChars = 0 // the parts of a comparison share one answer's length
		gen = &c
	}
	pieces := compose(gen.pick(req.Question, followup.Previous(req.History), req.Passages, req.Reserve))
	if len(pieces) == 0 {
		pieces = []string{generate.NotCovered(req.NotCovered, lang)}
	}
	var b strings.Builder
	for _, p := range pieces {
		if onDelta != nil {
			if err := onDelta(p); err != nil {
				return nil, err
			}
		}
		b.WriteString(p)
	}
	text := b.String()
	return &rag.Generation{Text: text, Model: g.Name()}, nil
}

// group is a run of picked sentences shown together: neighbours of one passage in their order, or rows of
// one table under its header.
type group struct {
	rank   int
	header string
	items  []sentence
}

// compose lays the picked sentences out as markdown pieces to stream. Groups come in the order of their
// best sentence; within a group sentences keep the order of the passage, so that a sentence and the one
// naming its subject read as written. Each sentence is followed by its passage's citation; a table is
// quoted as a table with the citation below it.
func compose(picked []sentence) []string {
	var groups []*group
	for _, s := range picked {
		var into *group
		for _, gr := range groups {
			if gr.rank != s.rank || gr.header != s.header {
				continue
			}
			if s.header != "" || slices.ContainsFunc(gr.items, func(o sentence) bool { return o.pos == s.pos-1 || o.pos == s.pos+1 }) {
				into = gr
				break
			}
		}
		if into == nil {
			into = &group{rank: s.rank, header: s.header}
			groups = append(groups, into)
		}
		into.items = append(into.items, s)
	}
	var out []string
	prevTable := false
	for gi, gr := range groups {
		slices.SortFunc(gr.items, func(a, b sentence) int { return a.pos - b.pos })
		cite := "[" + strconv.Itoa(gr.items[0].n) + "]"
		if gr.header != "" {
			rows := make([]string, len(gr.items))
			for i, s := range gr.items {
				rows[i] = s.text
			}
			sep := ""
			if gi > 0 {
				sep = "\n\n"
			}
			out = append(out, sep+gr.header+"\n"+strings.Join(rows, "\n")+"\n\n"+cite)
			prevTable = true
			continue
		}
		for i, s := range gr.items {
			sep := ""
			switch {
			case prevTable:
				sep = "\n\n"
			case s.item || (i > 0 && gr.items[i-1].heading) || s.row && (i == 0 || gr.items[i-1].line != s.line):
				sep = "\n"
			case gi > 0 || i > 0:
				sep = " "
			}
			text := s.text
			if s.item {
				if _, numbered := listMarker(text); !numbered {
					text = "- " + text
				}
			}
			if i+1 < len(gr.items) && (s.item || s.row) && (gr.items[i+1].item || gr.items[i+1].row) {
				out = append(out, sep+text) // a list, or the lines under a lead-in, is cited once, after its last line
			} else {
				out = append(out, sep+text+" "+cite)
			}
			prevTable = false
		}
	}
	if len(out) > 0 {
		out[0] = strings.TrimLeft(out[0], "\n") // an answer opening with a list item or table starts on its first line
	}
	return out
}
