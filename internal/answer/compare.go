package answer

import (
	"context"
	"path"
	"slices"
	"strings"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/slots"
)

// MaxCompared is how many documents a comparison answer lays out, in the order of their best passage.
const MaxCompared = 4

// compareChars is the length a quoting generator's comparison aims for, shared by its documents' parts,
// each of which gets minPartChars at least (its best sentence is given whatever its length).
const (
	compareChars = 300
	minPartChars = 100
)

// QuoteOnly is implemented by generators that only quote the passages (the extractive answerer): they
// cannot be asked to lay out a comparison, so the answer service asks them once per document and lays out
// the parts itself.
type QuoteOnly interface {
	QuotesOnly() bool
}

// section is one compared document: its heading and its passages.
type section struct {
	documentID string
	heading    string
	passages   []rag.Passage
}

// sections groups the passages by document, in the order of each document's first passage (at most
// MaxCompared documents; the passages of others are left out of the comparison), when the question
// compares. Otherwise it returns nil.
func sections(q string, hits []rag.Hit, passages []rag.Passage) []section {
	if !Comparison(q) {
		return nil
	}
	var out []section
	for i, h := range hits {
		j := slices.IndexFunc(out, func(s section) bool { return s.documentID == h.DocumentID })
		if j < 0 {
			if len(out) == MaxCompared {
				continue
			}
			out = append(out, section{documentID: h.DocumentID, heading: heading(h)})
			j = len(out) - 1
		}
		out[j].passages = append(out[j].passages, passages[i])
	}
	return out
}

// heading names a document in a comparison: its title, else its file name.
func heading(h rag.Hit) string {
	if t := strings.TrimSpace(h.Title); t != "" {
		return t
	}
	return path.Base(strings.ReplaceAll(h.Source, "\\", "/"))
}

// generate writes the answer. A comparison over passages of several documents is laid out per document:
// a generator that writes its own text is told to (generate.CompareInstruction); one that only quotes is
// asked once per document, and each part goes under its document's bold heading.
//
// chosen says the documents were picked (AskRequest's Filter.DocumentIDs): every one gets its part, and a
// document whose passages do not answer says so. Otherwise the passages' documents are only candidates:
// the parts of those that do not answer are left out, and with fewer than two left the answer is the
// usual one (a comparison of two things one document explains is not a comparison of documents).
func (s *Service) generate(ctx context.Context, p rag.Principal, req rag.GenerateRequest, hits []rag.Hit, picked []string, emit func(Event) error) (*rag.Generation, error) {
	delta := func(d string) error { return emit(Event{Type: EventDelta, Delta: d}) }
	chosen := len(picked) >= 2 && Comparison(req.Question)
	secs := sections(req.Question, hits, req.Passages)
	if chosen {
		secs = s.withPicked(ctx, p, secs, picked)
	}
	if len(secs) < 2 {
		return s.generateOne(ctx, req, delta)
	}
	headings := make([]string, len(secs))
	for i, sec := range secs {
		headings[i] = sec.heading
	}
	if q, ok := s.generator.(QuoteOnly); !ok || !q.QuotesOnly() {
		system := req.SystemPrompt
		if system == "" {
			system = generate.SystemPrompt("")
		}
		req.SystemPrompt = system + "\n\n" + generate.CompareInstruction(headings, chosen)
		return s.generateOne(ctx, req, delta)
	}
	var b strings.Builder
	found := 0
	var model string
	for i, sec := range secs {
		text := ""
		if len(sec.passages) > 0 {
			part := req
			part.Passages = sec.passages
			// The parts share one answer's length: each document's best sentences, not a whole answer each.
			part.MaxChars = max(minPartChars, compareChars/len(secs))
			gen, err := s.generator.Generate(ctx, part, nil)
			if err != nil {
				return nil, err
			}
			model, text = gen.Model, strings.TrimSpace(gen.Text)
		}
		if text == generate.NotCovered(req.NotCovered, req.Language) || text == "" {
			if !chosen {
				continue
			}
			text = generate.NotInDocument(req.Language)
		} else {
			found++
		}
		b.WriteString("**" + markdownText(headings[i]) + "**\n\n" + text + "\n\n")
	}
	switch {
	case !chosen && found < 2:
		return s.generateOne(ctx, req, delta)
	case found == 0:
		// No chosen document answers: the plain not-covered reply, which the pipeline recognises.
		text := generate.NotCovered(req.NotCovered, req.Language)
		return &rag.Generation{Text: text, Model: model}, delta(text)
	}
	text := strings.TrimSpace(b.String())
	return &rag.Generation{Text: text, Model: model}, delta(text)
}

// documentGetter reads a document as a principal sees it (rag.Store, given as Options.Collections, has it).
type documentGetter interface {
	GetDocument(ctx context.Context, p rag.Principal, id string) (*rag.Document, error)
}

// withPicked returns the sections of the picked documents in their order: a picked document none of whose
// passages was retrieved gets an empty section (its part says it does not answer), named by its title when
// the store can be asked for it, and left out otherwise.
func (s *Service) withPicked(ctx context.Context, p rag.Principal, secs []section, picked []string) []section {
	var out []section
	for _, id := range distinct(picked) {
		if len(out) == MaxCompared {
			break
		}
		if i := slices.IndexFunc(secs, func(sec section) bool { return sec.documentID == id }); i >= 0 {
			out = append(out, secs[i])
			continue
		}
		docs, ok := s.opt.Collections.(documentGetter)
		if !ok {
			continue
		}
		d, err := docs.GetDocument(ctx, p, id)
		if err != nil {
			continue // not visible or gone: retrieval found nothing in it either
		}
		out = append(out, section{documentID: id, heading: heading(rag.Hit{Title: d.Title, Source: d.Source})})
	}
	return out
}

// markdownText escapes the characters that would make a heading's text markdown (an underscore inside a
// word, as in a file name, is not emphasis).
func markdownText(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, "`", "\\`", `[`, `\[`, `]`, `\]`, "\n", " ").Replace(s)
}

// generateOne is one call of the generator; a hosted model's runs outside the request's slot (byModel).
func (s *Service) generateOne(ctx context.Context, req rag.GenerateRequest, delta func(string) error) (gen *rag.Generation, err error) {
	err = s.byModel(ctx, func() error {
		gen, err = s.generator.Generate(ctx, req, delta)
		return err
	})
	return gen, err
}

// byModel runs f, a call to the generator: a hosted model's (any generator that does more than quote the
// passages) runs outside the slot the request holds (slots.Outside), since waiting for its answer does not
// use this machine's processors.
func (s *Service) byModel(ctx context.Context, f func() error) error {
	if q, ok := s.generator.(QuoteOnly); ok && q.QuotesOnly() {
		return f()
	}
	return slots.Outside(ctx, f)
}
