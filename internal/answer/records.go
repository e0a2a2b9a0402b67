package answer

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ragd/ragd/internal/meta"
	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
)

// Records reads the rows of a collection whose profile has a metadata schema (profile.Profile.Schema):
// rag.Store.
type Records interface {
	// ListDocuments is rag.Store.ListDocuments.
	ListDocuments(ctx context.Context, p rag.Principal, q rag.DocumentQuery) (*rag.DocumentPage, error)
	// ListChunks is rag.Store.ListChunks.
	ListChunks(ctx context.Context, p rag.Principal, documentID string) ([]*rag.Chunk, error)
}

// maxListLimit is the largest page rag.Store.ListDocuments returns.
const maxListLimit = 500

// maxRows bounds the rows a question over a schema collection reads (pages of maxListLimit).
const maxRows = 20000

// recordPlan is what a question over a schema collection asks, read before retrieval.
type recordPlan struct {
	schema *meta.Schema
	query  *meta.Query
	asOf   time.Time
	filter rag.Filter // the request's filter with the question's conditions
	rows   []meta.Row // the rows the filter selects
}

// rows lists the visible rows of f (every status: a record is a row before its document is indexed).
func (s *Service) rows(ctx context.Context, p rag.Principal, f rag.Filter) ([]meta.Row, error) {
	var out []meta.Row
	for off := 0; off < maxRows; off += maxListLimit {
		page, err := s.opt.Records.ListDocuments(ctx, p, rag.DocumentQuery{Filter: f, Limit: maxListLimit, Offset: off})
		if err != nil {
			return nil, err
		}
		for _, d := range page.Documents {
			out = append(out, meta.Row{DocumentID: d.ID, Meta: d.Metadata})
		}
		if len(page.Documents) < maxListLimit {
			break
		}
	}
	return out, nil
}

// plan reads what q asks of the rows of the one collection req names, when its profile prof has a schema;
// nil otherwise, or when q names nothing of the schema (an ordinary question), or nothing once the fields
// of req.DropFilters are dropped. conds are the conditions read out of q, those dropped marked.
func (s *Service) plan(ctx context.Context, p rag.Principal, req rag.AskRequest, q string, prof profile.Profile) (pl *recordPlan, conds []rag.QuestionCondition, err error) {
	sch := prof.Schema
	if sch == nil || s.opt.Records == nil || len(req.Filter.Collections) != 1 {
		return nil, nil, nil
	}
	if err := sch.Compile(); err != nil {
		return nil, nil, err
	}
	for _, f := range req.DropFilters {
		if sch.Field(f) == nil && f != sch.Key {
			return nil, nil, rag.Errorf(rag.CodeInvalid, "drop_filters: collection %s has no field %q", req.Filter.Collections[0], f)
		}
	}
	asOf := req.AsOf
	if asOf.IsZero() {
		asOf = time.Now().UTC()
	}
	asOf = time.Date(asOf.Year(), asOf.Month(), asOf.Day(), 0, 0, 0, 0, time.UTC)
	all, err := s.rows(ctx, p, rag.Filter{Collections: req.Filter.Collections})
	if err != nil {
		return nil, nil, err
	}
	mq := sch.Extract(q, all, asOf)
	if c, ok := s.generator.(rag.JSONCompleter); ok {
		s.readWithLLM(ctx, c, sch, mq, q, all, asOf)
	}
	if mq.Kind == meta.KindNone {
		return nil, nil, nil
	}
	conds = sch.Conditions(mq, all)
	for i := range conds {
		conds[i].Dropped = slices.Contains(req.DropFilters, conds[i].Field)
	}
	if mq.Drop(req.DropFilters, sch.Key); mq.Kind == meta.KindNone {
		return nil, conds, nil
	}
	f := req.Filter
	f.Metadata = append(append([]rag.MetaCond(nil), f.Metadata...), sch.Filter(mq, asOf)...)
	rows, err := s.rows(ctx, p, f)
	if err != nil {
		return nil, nil, err
	}
	return &recordPlan{schema: sch, query: mq, asOf: asOf, filter: f, rows: rows}, conds, nil
}

// llmFilterTimeout bounds the model's reading of a question; past it the rules' reading stands.
const llmFilterTimeout = 20 * time.Second

// readWithLLM asks c for the filter of question q in the JSON schema derived from sch, validates the answer
// and merges it into mq, the rules' reading (meta.Query.MergeLLM). A failed call or an answer that is not
// JSON of the schema leaves mq as the rules read it; both are logged.
func (s *Service) readWithLLM(ctx context.Context, c rag.JSONCompleter, sch *meta.Schema, mq *meta.Query, q string, rows []meta.Row, asOf time.Time) {
	system, user := sch.LLMFilterPrompt(q, rows, asOf)
	var raw []byte
	err := s.byModel(ctx, func() (err error) {
		tctx, cancel := context.WithTimeout(ctx, llmFilterTimeout) // the wait for a slot again is not the model's
		defer cancel()
		raw, err = c.CompleteJSON(tctx, system, user, sch.LLMFilterSchema())
		return err
	})
	if err == nil {
		var r *meta.LLMReading
		if r, err = sch.ParseLLMFilter(raw, rows); err == nil {
			mq.MergeLLM(r.Query)
			if r.Dropped > 0 {
				s.opt.Logger.Info("the model's filter had conditions the schema refused", slog.Int("dropped", r.Dropped))
			}
			return
		}
	}
	s.opt.Logger.Warn("reading the question's filter with the model failed; the rules' reading stands", slog.Any("err", err))
}

// fromRows answers a list, fact or comparison question, or one whose rows do not exist, from the rows
// alone: a markdown table of the rows with the fields asked about; each row is a source carrying its key
// as external_id. ok is false for a content question that the documents must answer.
func (s *Service) fromRows(ctx context.Context, p rag.Principal, pl *recordPlan, ans *rag.Answer) (ok bool, err error) {
	sch, mq := pl.schema, pl.query
	ko := ans.Language != "en"
	switch {
	case len(pl.rows) == 0:
		ans.NotFound = true
		ans.Text = sch.NoMatchReply
		if ans.Text == "" {
			ans.Text = meta.DefaultNoMatchReply
		}
		return true, nil
	case mq.Kind == meta.KindContent:
		reply, err := s.notStated(ctx, p, pl, ans)
		if err != nil || reply == "" {
			return false, err
		}
		ans.Text = reply
		return true, nil
	}
	sch.Sort(pl.rows, mq.Order, pl.asOf)
	if mq.Top && len(pl.rows) > topRows {
		pl.rows = pl.rows[:topRows]
	}
	cols := sch.Columns(mq)
	var b strings.Builder
	record := "항목"
	if len(sch.RecordWords) > 0 {
		record = sch.RecordWords[0]
	}
	switch {
	case mq.Kind == meta.KindCompare && mq.Order != "" && len(pl.rows) >= 2:
		field := strings.TrimPrefix(mq.Order, "-")
		f := sch.Field(field)
		best := pl.rows[0]
		title := sch.Display(best, sch.Title, pl.asOf)
		val := sch.Display(best, field, pl.asOf)
		if ko {
			fmt.Fprintf(&b, "%s 기준으로 %s 곳은 **%s**(%s)입니다.\n\n", f.Label(), comparativeKo(f, strings.HasPrefix(mq.Order, "-"), mq.Top), title, val)
		} else {
			fmt.Fprintf(&b, "By %s, **%s** (%s) comes first.\n\n", f.Label(), title, val)
		}
	case mq.Kind == meta.KindFact:
		for _, r := range pl.rows {
			title := sch.Display(r, sch.Title, pl.asOf)
			for _, a := range mq.Asked {
				if f := sch.Field(a); f != nil && a != sch.Title {
					fmt.Fprintf(&b, "**%s** %s: %s\n", title, f.Label(), sch.Display(r, a, pl.asOf))
				}
			}
		}
		b.WriteString("\n")
	case ko:
		fmt.Fprintf(&b, "조건에 맞는 %s %d건입니다.\n\n", record, len(pl.rows))
	default:
		fmt.Fprintf(&b, "%d matching records:\n\n", len(pl.rows))
	}
	b.WriteString(sch.Table(pl.rows, cols, pl.asOf))
	for i, r := range pl.rows {
		ans.Sources = append(ans.Sources, rowSource(sch, r, i+1))
	}
	if mq.Kind == meta.KindCompare && len(pl.rows) <= maxComparedRows {
		if err := s.comparePassages(ctx, p, pl, ans, &b); err != nil {
			return false, err
		}
	}
	ans.Text = b.String()
	return true, nil
}

// maxComparedRows is how many rows a comparison quotes a passage of.
const maxComparedRows = 5

// comparePassages adds to a comparison, for each row, the passage of its document that best matches the
// question, cited [n] after the row sources.
func (s *Service) comparePassages(ctx context.Context, p rag.Principal, pl *recordPlan, ans *rag.Answer, b *strings.Builder) error {
	head := "\n근거:\n"
	if ans.Language == "en" {
		head = "\nFrom the documents:\n"
	}
	// The passage is looked for by the compared fields' names (보증금, 입주), not by the rows' names, which
	// every passage of a row's document shares with its title.
	sch := pl.schema
	var words []string
	var fields []string
	for _, c := range sch.Columns(pl.query) {
		// Figures (amounts, counts, dates) are what a comparison weighs; a row's names are in every passage.
		if f := sch.Field(c); f != nil && (f.Type == meta.TypeMoney || f.Type == meta.TypeInteger || f.Type == meta.TypeDate) {
			fields = append(fields, c)
			words = append(words, f.Label())
			words = append(words, f.Aliases...)
		}
	}
	query := strings.Join(words, " ")
	for _, r := range pl.rows {
		res, err := s.retriever.Search(ctx, p, rag.SearchRequest{Query: query, K: 1, ForAnswer: true,
			Filter: rag.Filter{Collections: pl.filter.Collections, DocumentIDs: []string{r.DocumentID}}})
		if err != nil {
			return err
		}
		if len(res.Hits) == 0 {
			continue
		}
		h := res.Hits[0]
		n := len(ans.Sources) + 1
		ans.Sources = append(ans.Sources, rag.Source{N: n, Hit: h})
		var values []string
		for _, f := range fields {
			if v := sch.Display(r, f, pl.asOf); v != "" {
				values = append(values, v)
			}
		}
		fmt.Fprintf(b, "%s- %s: %s [%d]\n", head, sch.Display(r, sch.Title, pl.asOf), excerpt(h.Text, values, excerptRunes), n)
		head = ""
	}
	return nil
}

// excerptRunes is how much of a passage a comparison quotes.
const excerptRunes = 200

// excerpt is the line of text that holds the most of values, the earlier ones weighing more (the compared
// field's value first), else its first line; on one line, cut at max runes.
func excerpt(text string, values []string, max int) string {
	lines := strings.Split(text, "\n")
	pick, best := lines[0], 0
	for _, l := range lines {
		score := 0
		for i, v := range values {
			if strings.Contains(l, v) {
				score += 1 << (len(values) - i) // an earlier value outweighs all later ones
			}
		}
		if score > best {
			pick, best = l, score
		}
	}
	text = strings.Join(strings.Fields(pick), " ")
	r := []rune(text)
	if len(r) <= max {
		return text
	}
	return string(r[:max]) + "…"
}

// topRows is how many rows answer a question for the first of an order (가장 싼 공고).
const topRows = 5

// comparativeKo names the first row of an ascending (or descending) order of f: 더 낮은, or with top 가장
// 낮은.
func comparativeKo(f *meta.Field, desc, top bool) string {
	degree := "더 "
	if top {
		degree = "가장 "
	}
	switch {
	case f.Type == meta.TypeDate && desc:
		return degree + "늦은"
	case f.Type == meta.TypeDate:
		return degree + "빠른"
	case desc:
		return degree + "높은"
	}
	return degree + "낮은"
}

// rowSource is a row as a source of an answer: its document, with the row's key as external ID.
func rowSource(sch *meta.Schema, r meta.Row, n int) rag.Source {
	key, _ := r.Meta[sch.Key].(string)
	title, _ := r.Meta[sch.Title].(string)
	return rag.Source{N: n, Hit: rag.Hit{Chunk: rag.Chunk{DocumentID: r.DocumentID}, ExternalID: key, Title: title, Metadata: r.Meta}}
}

// notStated returns the schema's not-stated reply when the named rows' documents do not contain what the
// question asks: the first of the question's focus words (those not about the schema) that the collection's
// documents use at all occurs in none of them. "" when they do (or the question has no such word), and the
// documents answer it.
func (s *Service) notStated(ctx context.Context, p rag.Principal, pl *recordPlan, ans *rag.Answer) (string, error) {
	if len(pl.query.Focus) == 0 {
		return "", nil
	}
	// What the collection's documents say about the focus words at all.
	res, err := s.retriever.Search(ctx, p, rag.SearchRequest{Query: strings.Join(pl.query.Focus, " "),
		Filter: rag.Filter{Collections: pl.filter.Collections}, K: 10, ForAnswer: true})
	if err != nil {
		return "", err
	}
	var used strings.Builder
	for _, h := range res.Hits {
		used.WriteString(h.Text)
		used.WriteString("\n")
	}
	word := ""
	for _, w := range pl.query.Focus {
		if word = stemIn(w, used.String()); word != "" {
			break
		}
	}
	if word == "" {
		return "", nil
	}
	var replies []string
	for _, r := range pl.rows {
		chunks, err := s.opt.Records.ListChunks(ctx, p, r.DocumentID)
		if err != nil {
			return "", err
		}
		var doc strings.Builder
		for _, c := range chunks {
			doc.WriteString(c.Text)
			doc.WriteString("\n")
		}
		if strings.Contains(doc.String(), word) {
			return "", nil
		}
		reply := pl.schema.NotStatedReply
		if reply == "" {
			reply = meta.DefaultNotStatedReply
		}
		contact := ""
		if pl.schema.Contact != "" {
			contact = pl.schema.Display(r, pl.schema.Contact, pl.asOf)
			if contact == "" {
				contact = pl.schema.ExtractValue(pl.schema.Contact, doc.String())
			}
		}
		title := pl.schema.Display(r, pl.schema.Title, pl.asOf)
		replies = append(replies, strings.NewReplacer("{title}", title, "{contact}", contact).Replace(reply))
		ans.Sources = append(ans.Sources, rowSource(pl.schema, r, len(ans.Sources)+1))
	}
	ans.NotFound = true
	return strings.Join(replies, "\n\n"), nil
}

// stemIn returns the longest start of w (at least two letters) that occurs in text, "" when none does.
func stemIn(w, text string) string {
	r := []rune(w)
	for n := len(r); n >= 2; n-- {
		if strings.Contains(text, string(r[:n])) {
			return string(r[:n])
		}
	}
	return ""
}
