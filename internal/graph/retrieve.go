package graph

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// Edge is a relation of a hit entity seen from it: Out is true for a relation from the hit to Other.
type Edge struct {
	Type       string          `json:"type"`
	Out        bool            `json:"out"`
	Other      rag.GraphEntity `json:"other"`
	Properties map[string]any  `json:"properties,omitempty"`
}

// EntityHit is an entity graph retrieval found, with every score that ranked it, its section path and its
// relations (capped by Limits.RelationsPerEntity, outgoing first).
type EntityHit struct {
	rag.GraphEntity
	Path         string  `json:"path"`
	Score        float64 `json:"score"`
	Similarity   float64 `json:"similarity"`
	VectorRank   int     `json:"vector_rank"`
	KeywordScore float64 `json:"keyword_score"`
	KeywordRank  int     `json:"keyword_rank"`
	// Named is true when the question names the entity: a term of two or more characters of its name or
	// aliases is in the question.
	Named bool   `json:"named"`
	Edges []Edge `json:"edges"`
	// Relations is how many relations the entity has (Edges may be fewer).
	Relations int `json:"relations"`
}

// RowHit is a record row retrieved for an entity.
type RowHit struct {
	Table  Table      `json:"-"`
	Entity string     `json:"entity"`
	Record rag.Record `json:"record"`
}

// PassageHit is a source passage of a hit's section.
type PassageHit struct {
	rag.GraphChunk
	Path string `json:"path"`
}

// Info counts what graph retrieval did (search_info).
type Info struct {
	EntitiesFound     int     `json:"entities_found"`
	RelationsExpanded int     `json:"relations_expanded"`
	RowsMatched       int     `json:"rows_matched"`
	ChunksRetrieved   int     `json:"chunks_retrieved"`
	LatencyMS         float64 `json:"latency_ms"`
	EmbedMS           float64 `json:"embed_ms"`
}

// Result is the graph context of a question.
type Result struct {
	Collection string      `json:"collection"`
	Question   string      `json:"question"`
	Spec       string      `json:"spec,omitempty"`
	Intents    []string    `json:"intents,omitempty"`
	Entities   []EntityHit `json:"entities"`
	Rows       []RowHit    `json:"rows"`
	Passages   []PassageHit
	// Found is true when some entity is named by the question or close to it (Settings.MinSimilarity).
	Found    bool     `json:"found"`
	Info     Info     `json:"info"`
	Settings Settings `json:"-"`
}

// rrfK is the reciprocal-rank fusion constant (as chunk retrieval).
const rrfK = 60

// candidatePool is how many entities each of the vector and keyword lists contributes, per entity kept.
const candidatePool = 4

// Retrieve builds the graph context of question over the collection: entity candidates by vector and
// keyword, fused by RRF → relations in both directions → section paths and child sections → record rows
// when an intent fires (filtered by the question's spec) → the passages of the hits' sections. Every store
// read is restricted to the collection as p sees it.
func (s *Service) Retrieve(ctx context.Context, p rag.Principal, c *rag.Collection, set Settings, question string) (*Result, error) {
	start := time.Now()
	res := &Result{Collection: c.Name, Question: question, Settings: set}
	if set.Spec != nil {
		res.Spec = set.Spec(question)
	}
	if set.Intents != nil {
		res.Intents = set.Intents(question)
	}
	lim := set.Limits
	pool := lim.Entities * candidatePool

	embedStart := time.Now()
	qv, err := s.embedder.EmbedQuery(ctx, question)
	if err != nil {
		return nil, err
	}
	res.Info.EmbedMS = ms(time.Since(embedStart))
	st, err := s.store.GraphStats(ctx, p, c.ID)
	if err != nil {
		return nil, err
	}
	vecs, err := s.entityVectors(ctx, p, c.ID, st.Generation)
	if err != nil {
		return nil, err
	}
	type cand struct {
		id             string
		sim, kw, fused float64
		vr, kr         int
		named          bool
	}
	cands := map[string]*cand{}
	get := func(id string) *cand {
		if cands[id] == nil {
			cands[id] = &cand{id: id}
		}
		return cands[id]
	}
	type scored struct {
		id    string
		score float64
	}
	var vlist []scored
	names := map[string]string{}
	for _, e := range vecs {
		names[e.ID] = e.Name
		if len(e.Vector) == len(qv) {
			vlist = append(vlist, scored{e.ID, dot(qv, e.Vector)})
		}
	}
	sort.SliceStable(vlist, func(i, j int) bool { return vlist[i].score > vlist[j].score })
	for i, v := range vlist {
		if i == pool {
			break
		}
		c := get(v.id)
		c.sim, c.vr = v.score, i+1
	}

	terms := textproc.QueryTerms(question)
	posts, total, err := s.store.GraphPostings(ctx, p, c.ID, terms)
	if err != nil {
		return nil, err
	}
	df := map[string]int{}
	for _, gp := range posts {
		df[gp.Term]++
	}
	kw := map[string]float64{}
	named := map[string]bool{}
	for _, gp := range posts {
		idf := math.Log(1 + (float64(total)-float64(df[gp.Term])+0.5)/(float64(df[gp.Term])+0.5))
		kw[gp.EntityID] += idf * gp.Weight / (gp.Weight + 1.2)
		if gp.Weight >= nameWeight && utf8.RuneCountInString(gp.Term) >= 2 && !strings.Contains(gp.Term, "_") {
			named[gp.EntityID] = true
		}
	}
	var klist []scored
	for id, v := range kw {
		klist = append(klist, scored{id, v})
	}
	sort.Slice(klist, func(i, j int) bool {
		if klist[i].score != klist[j].score {
			return klist[i].score > klist[j].score
		}
		return klist[i].id < klist[j].id
	})
	for i, k := range klist {
		if i == pool {
			break
		}
		c := get(k.id)
		c.kw, c.kr, c.named = k.score, i+1, named[k.id]
	}
	// A third list: the entities whose whole name the question contains, longest name first (the question
	// "콘크리트 타설 비용" names the work type 콘크리트 타설 more exactly than its section "6-3 콘크리트 타설").
	nq := NormKey(question)
	var mentioned []*cand
	for _, c := range cands {
		if n := NormKey(names[c.id]); n != "" && strings.Contains(nq, n) {
			mentioned = append(mentioned, c)
		}
	}
	sort.Slice(mentioned, func(i, j int) bool {
		if a, b := len([]rune(names[mentioned[i].id])), len([]rune(names[mentioned[j].id])); a != b {
			return a > b
		}
		return mentioned[i].id < mentioned[j].id
	})
	for i, c := range mentioned {
		// Weighted by the share of the question the name covers: a question that names an entity and
		// says more ("PE관 융착할 때 기온 제한") is about something more specific than that entity.
		cover := float64(len([]rune(NormKey(names[c.id])))) / float64(max(1, len([]rune(nq))))
		c.fused += cover / float64(rrfK+i+1)
	}
	var ranked []*cand
	for _, c := range cands {
		if c.vr > 0 {
			c.fused += 1 / float64(rrfK+c.vr)
		}
		if c.kr > 0 {
			c.fused += 1 / float64(rrfK+c.kr)
		}
		// Only entities the question names, or that are close to it, are candidates at all: a vector list
		// always has a nearest entity, even for a question about something else.
		if c.named || c.sim >= set.MinSimilarity {
			ranked = append(ranked, c)
		}
	}
	sort.Slice(ranked, func(i, j int) bool {
		if ranked[i].fused != ranked[j].fused {
			return ranked[i].fused > ranked[j].fused
		}
		return ranked[i].id < ranked[j].id
	})
	if len(ranked) > lim.Entities {
		ranked = ranked[:lim.Entities]
	}
	res.Found = len(ranked) > 0
	if !res.Found {
		res.Info.LatencyMS = ms(time.Since(start))
		return res, nil
	}
	ids := make([]string, len(ranked))
	for i, c := range ranked {
		ids[i] = c.id
	}
	ents, err := s.store.GraphEntities(ctx, p, c.ID, ids)
	if err != nil {
		return nil, err
	}
	byID := map[string]rag.GraphEntity{}
	for _, e := range ents {
		byID[e.ID] = e
	}
	for _, c := range ranked {
		e, ok := byID[c.id]
		if !ok {
			continue
		}
		res.Entities = append(res.Entities, EntityHit{GraphEntity: e, Score: c.fused, Similarity: c.sim, VectorRank: c.vr,
			KeywordScore: c.kw, KeywordRank: c.kr, Named: c.named})
	}
	if err := s.expand(ctx, p, c.ID, res); err != nil {
		return nil, err
	}
	if err := s.records(ctx, p, c.ID, res); err != nil {
		return nil, err
	}
	if err := s.passages(ctx, p, c.ID, res); err != nil {
		return nil, err
	}
	res.Info.EntitiesFound = len(res.Entities)
	res.Info.RowsMatched = len(res.Rows)
	res.Info.ChunksRetrieved = len(res.Passages)
	res.Info.LatencyMS = ms(time.Since(start))
	return res, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func dot(a, b []float32) float64 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}

// expand adds each hit's relations (outgoing first, then incoming, in bundle order, capped), the other
// endpoints, and the section paths of hits and endpoints.
func (s *Service) expand(ctx context.Context, p rag.Principal, collectionID string, res *Result) error {
	ids := make([]string, len(res.Entities))
	for i, h := range res.Entities {
		ids[i] = h.ID
	}
	rels, err := s.store.GraphEdges(ctx, p, collectionID, ids)
	if err != nil {
		return err
	}
	others := map[string]bool{}
	for _, r := range rels {
		others[r.Source], others[r.Target] = true, true
	}
	var oids []string
	for id := range others {
		oids = append(oids, id)
	}
	sort.Strings(oids)
	ents, err := s.store.GraphEntities(ctx, p, collectionID, oids)
	if err != nil {
		return err
	}
	byID := map[string]rag.GraphEntity{}
	sections := map[string]bool{}
	for _, e := range ents {
		byID[e.ID] = e
	}
	limit := res.Settings.Limits.RelationsPerEntity
	for i := range res.Entities {
		h := &res.Entities[i]
		sections[h.SourceSection] = true
		var out, in []Edge
		for _, r := range rels {
			switch h.ID {
			case r.Source:
				out = append(out, Edge{Type: r.Type, Out: true, Other: byID[r.Target], Properties: r.Properties})
			case r.Target:
				in = append(in, Edge{Type: r.Type, Other: byID[r.Source], Properties: r.Properties})
			}
		}
		h.Relations = len(out) + len(in)
		h.Edges = append(out, in...)
		if len(h.Edges) > limit {
			h.Edges = h.Edges[:limit]
		}
		res.Info.RelationsExpanded += len(h.Edges)
	}
	var sids []string
	for id := range sections {
		if id != "" {
			sids = append(sids, id)
		}
	}
	sort.Strings(sids)
	secs, err := s.store.GraphSections(ctx, p, collectionID, sids)
	if err != nil {
		return err
	}
	paths := map[string]string{}
	for _, sc := range secs {
		paths[sc.ID] = sc.Path
	}
	for i := range res.Entities {
		res.Entities[i].Path = paths[res.Entities[i].SourceSection]
	}
	return nil
}

// records adds the record rows of the hits from the tables whose intent fired (or that have none): rows keyed
// by a hit's name; with a spec in the question only the rows whose variant contains it (every row when none
// of the hits' rows does); without one, every variant with the base variant (the entity's BaseProperty)
// first; at most Limits.Rows in hit order.
func (s *Service) records(ctx context.Context, p rag.Principal, collectionID string, res *Result) error {
	tables := map[string]bool{}
	for _, t := range res.Settings.Tables {
		if t.Intent == "" || slices.Contains(res.Intents, t.Intent) {
			tables[t.Name] = true
		}
	}
	if len(tables) == 0 {
		return nil
	}
	keys := make([]string, 0, len(res.Entities))
	for _, h := range res.Entities {
		keys = append(keys, NormKey(h.Name))
	}
	spec := NormKey(res.Spec)
	for _, t := range res.Settings.Tables {
		if !tables[t.Name] {
			continue
		}
		rows, err := s.store.Records(ctx, p, collectionID, t.Name, keys)
		if err != nil {
			return err
		}
		// The spec filters the whole table: when some row's variant contains it, only such rows are kept
		// (an entity without one has none); when no row does, the spec does not apply to this table.
		matched := func(r rag.Record) bool { return spec != "" && strings.Contains(NormKey(r.Variant), spec) }
		filter := slices.ContainsFunc(rows, matched)
		for _, h := range res.Entities {
			var mine []rag.Record
			for _, r := range rows {
				if r.NormKey == NormKey(h.Name) && (!filter || matched(r)) {
					mine = append(mine, r)
				}
			}
			base, _ := h.Properties[t.BaseProperty].(string)
			sort.SliceStable(mine, func(i, j int) bool { return base != "" && mine[i].Variant == base && mine[j].Variant != base })
			for _, r := range mine {
				if len(res.Rows) == res.Settings.Limits.Rows {
					return nil
				}
				res.Rows = append(res.Rows, RowHit{Table: t, Entity: h.Name, Record: r})
			}
		}
	}
	return nil
}

// passages adds the source passages of the hits' sections, those that mention a hit's name first, at most
// Limits.Passages, each cut to Limits.PassageChars.
func (s *Service) passages(ctx context.Context, p rag.Principal, collectionID string, res *Result) error {
	var sids []string
	seen := map[string]bool{}
	paths := map[string]string{}
	for _, h := range res.Entities {
		if h.SourceSection != "" && !seen[h.SourceSection] {
			seen[h.SourceSection] = true
			sids = append(sids, h.SourceSection)
			paths[h.SourceSection] = h.Path
		}
	}
	chunks, err := s.store.GraphChunks(ctx, p, collectionID, sids)
	if err != nil {
		return err
	}
	rank := func(c rag.GraphChunk) int {
		for i, h := range res.Entities {
			if strings.Contains(c.Content, h.Name) {
				return i
			}
		}
		return len(res.Entities)
	}
	sort.SliceStable(chunks, func(i, j int) bool { return rank(chunks[i]) < rank(chunks[j]) })
	lim := res.Settings.Limits
	for _, c := range chunks {
		if len(res.Passages) == lim.Passages {
			break
		}
		if r := []rune(c.Content); len(r) > lim.PassageChars {
			c.Content = string(r[:lim.PassageChars])
		}
		res.Passages = append(res.Passages, PassageHit{GraphChunk: c, Path: paths[c.SectionID]})
	}
	return nil
}
