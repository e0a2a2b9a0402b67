package graph

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/lexicon"
	"github.com/ragd/ragd/internal/rag"
)

// maxAnswered is how many of the hits the offline answer presents, and answerShare the share of the best
// hit's score a hit needs to be presented: the context keeps Limits.Entities hits, the answer those close
// to the best.
const (
	maxAnswered = 3
	answerShare = 0.7
)

// AnswerGraph answers ans.Question from the graph of the collection named collection, when it has a graph
// or record tables (false otherwise: the caller answers from documents; also when the graph was only
// extracted from the documents and finds nothing for the question). It emits the sources and the text
// and fills ans (Text, Sources, NotFound, Graph). With an LLM generator (a rag.Completer) the generator
// writes the answer from the numbered graph context with req's system prompt and generation settings; with
// the offline generator the
// answer is built from the retrieved facts only (Result.Answer). When nothing is found the reply is the
// collection's off-topic or not-found reply (Reply).
func (s *Service) AnswerGraph(ctx context.Context, p rag.Principal, collection string, ans *rag.Answer, gen rag.Generator,
	req rag.GenerateRequest, emit func(rag.AnswerEvent) error) (bool, error) {
	c, err := s.store.GetCollection(ctx, collection)
	if errors.Is(err, rag.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	st, err := s.store.GraphStats(ctx, p, c.ID)
	if err != nil || st.Empty() {
		return false, err
	}
	set, err := s.Settings(c)
	if err != nil {
		return false, err
	}
	res, err := s.Retrieve(ctx, p, c, set, ans.Question)
	if err != nil {
		return false, err
	}
	if !res.Found && st.OnlyExtracted() {
		// A graph extracted from the documents covers what the model found in them, not the domain: a
		// question it finds nothing for is answered from the documents.
		return false, nil
	}
	info := res.Info
	ans.Graph = &rag.GraphInfo{EntitiesFound: info.EntitiesFound, RelationsExpanded: info.RelationsExpanded,
		RowsMatched: info.RowsMatched, ChunksRetrieved: info.ChunksRetrieved, LatencyMS: info.LatencyMS, Spec: res.Spec, Intents: res.Intents}
	ans.RetrievalQuery, ans.RetrieveMS = ans.Question, info.LatencyMS
	sources := res.Sources()
	if !res.Found {
		sources = nil
	}
	if err := emit(rag.AnswerEvent{Type: rag.AnswerSources, Sources: sources}); err != nil {
		return false, err
	}
	ans.Sources = []rag.Source{}
	if !res.Found {
		ans.NotFound = true
		ans.Text = Reply(set, ans.Question, ans.Language)
		return true, emit(rag.AnswerEvent{Type: rag.AnswerDelta, Delta: ans.Text})
	}
	var text string
	if _, llm := gen.(rag.Completer); llm {
		req.Question, req.Language, req.History, req.Passages = ans.Question, ans.Language, nil, res.GeneratorPassages()
		g, err := gen.Generate(ctx, req, func(d string) error {
			return emit(rag.AnswerEvent{Type: rag.AnswerDelta, Delta: d})
		})
		if err != nil {
			return false, err
		}
		rep := generate.VerifyCitations(g.Text, res.GeneratorPassages())
		text, ans.Citations = rep.Text, rep.Check
	} else {
		text = res.Answer()
		ans.Generator = gen.Name() + "+graph"
		if err := emit(rag.AnswerEvent{Type: rag.AnswerDelta, Delta: text}); err != nil {
			return false, err
		}
		ans.Citations.Valid = len(citation.FindAllString(text, -1))
	}
	ans.Text = text
	for _, src := range sources {
		if strings.Contains(text, fmt.Sprintf("[%d]", src.N)) {
			ans.Sources = append(ans.Sources, src)
		}
	}
	return true, nil
}

var citation = regexp.MustCompile(`\[\d+\]`)

// Reply is the fixed reply to a question the graph has nothing for (docs/graph.md, "Nothing found"):
//
//   - the question contains a word of the collection's vocabulary: it is about the domain, and the data
//     lacks it — the not-found reply;
//   - otherwise, when it is made of real words of a language (a Korean dictionary word of two or more
//     syllables, or an English function word), it is about something else — the off-topic reply;
//   - otherwise it is not language (a typo, keyboard noise, a made-up word) and nothing can be found for
//     it — the not-found reply.
//
// Replies the profile leaves empty are ragd's, in the answer's language lang.
func Reply(set Settings, question, lang string) string {
	notFound := generate.NotCovered(set.Replies.NotFound, lang)
	q := strings.ToLower(question)
	for _, w := range set.Vocabulary {
		if w != "" && strings.Contains(q, strings.ToLower(w)) {
			return notFound
		}
	}
	if !lexicon.HasWords(question) {
		return notFound
	}
	if r := strings.TrimSpace(set.Replies.OffTopic); r != "" {
		return r
	}
	if lang == "ko" {
		return "이 컬렉션의 주제에 관한 질문에만 답변할 수 있습니다."
	}
	return "This collection only answers questions about its own subject."
}

// Answer is the offline structured answer: for the hits close to the best one, their source path, labelled
// properties, description and relations (resources with quantity and unit, notes, child sections), and the
// record table when rows were retrieved — every line cited with its piece of context. Nothing in it is not
// in the retrieved data.
func (r *Result) Answer() string {
	var b strings.Builder
	bl := r.blocks()
	top := 0.0
	shown := 0
	for i, x := range bl {
		n := i + 1
		switch x.kind {
		case KindEntity:
			h := x.entity
			if top == 0 {
				top = h.Score
			}
			if shown == maxAnswered || h.Score < answerShare*top {
				continue
			}
			shown++
			fmt.Fprintf(&b, "**%s** (%s)", h.Name, h.Type)
			if h.Path != "" {
				fmt.Fprintf(&b, " — %s: %s", r.Settings.Labels.Source, h.Path)
			}
			fmt.Fprintf(&b, " [%d]\n", n)
			for _, line := range propertyLines(r.Settings, h.GraphEntity) {
				fmt.Fprintf(&b, "- %s [%d]\n", line, n)
			}
			if d, ok := h.Properties["description"].(string); ok && d != "" {
				fmt.Fprintf(&b, "- %s [%d]\n", d, n)
			}
			for _, g := range groupEdges(r.Settings, h.Edges) {
				items := make([]string, len(g.edges))
				for j, e := range g.edges {
					items[j] = edgeText(e)
				}
				sep := ", "
				if strings.Contains(strings.Join(items, ""), ":") {
					sep = "; "
				}
				fmt.Fprintf(&b, "- %s: %s [%d]\n", g.label, strings.Join(items, sep), n)
			}
			if h.Relations > len(h.Edges) {
				fmt.Fprintf(&b, "- (+%d) [%d]\n", h.Relations-len(h.Edges), n)
			}
			b.WriteString("\n")
		case KindRecords:
			fmt.Fprintf(&b, "**%s** [%d]\n\n%s\n\n", x.title, n, x.text)
		}
	}
	return strings.TrimSpace(b.String())
}
