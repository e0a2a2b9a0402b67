package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"

	"github.com/ragd/ragd/internal/graph"
	"github.com/ragd/ragd/internal/meta"
	"github.com/ragd/ragd/internal/rag"
)

// The collection settings that a profile replaces. A collection created before profiles keeps them in
// Collection.Settings; Of reads them into its profile, and Apply removes them once a profile is stored.
const (
	SettingSystemPrompt = "system_prompt"
	SettingDomain       = "domain"
	SettingNotFound     = "not_found_reply"
)

var legacySettings = []string{SettingSystemPrompt, SettingDomain, SettingNotFound, rag.SynonymsSetting}

// Of returns the profile of c with its defaults: the stored one, or for a collection without one (created
// before profiles, or by POST /api/collections) one built from its description and settings (system_prompt,
// domain, not_found_reply, synonyms). A stored profile that no longer decodes is an error; settings that
// never parsed are skipped, as retrieval always did.
func Of(c *rag.Collection) (Profile, error) {
	var p Profile
	if len(c.Profile) > 0 {
		if err := json.Unmarshal(c.Profile, &p); err != nil {
			return Profile{}, fmt.Errorf("collection %s: stored profile: %w", c.Name, err)
		}
	} else {
		p = fromSettings(c)
	}
	p.Name = c.Name
	if p.Description == "" {
		p.Description = c.Description
	}
	return p.WithDefaults(), nil
}

func fromSettings(c *rag.Collection) Profile {
	str := func(key string) string {
		v, _ := c.Settings[key].(string)
		return strings.TrimSpace(v)
	}
	p := Profile{SystemPrompt: str(SettingSystemPrompt), Domain: str(SettingDomain)}
	p.Replies.NotCovered = str(SettingNotFound)
	if g, err := rag.ParseSynonyms(c.Settings[rag.SynonymsSetting]); err == nil {
		p.Synonyms = g
	}
	return p
}

// Apply makes c carry p: its description and stored profile become p's, and the settings p replaces are
// removed from c.Settings (the others, such as metadata_types, stay). p must be valid.
func Apply(c *rag.Collection, p *Profile) error {
	stored := *p
	stored.Name = ""
	raw, err := json.Marshal(stored)
	if err != nil {
		return fmt.Errorf("encode profile: %w", err)
	}
	c.Profile = raw
	c.Description = p.Description
	if len(c.Settings) > 0 {
		s := maps.Clone(c.Settings)
		for _, k := range legacySettings {
			delete(s, k)
		}
		c.Settings = s
	}
	return nil
}

// FiredIntents returns the names of the intents q fires: those with a keyword q contains (case-insensitive), in
// the profile's order.
func (p *Profile) FiredIntents(q string) []string {
	lower := strings.ToLower(q)
	var out []string
	for _, in := range p.Intents {
		for _, k := range in.Keywords {
			if strings.Contains(lower, strings.ToLower(k)) {
				out = append(out, in.Name)
				break
			}
		}
	}
	return out
}

// Spec is a variant found in a question by a spec pattern.
type Spec struct {
	Pattern string `json:"pattern"`
	Value   string `json:"value"`
}

// FindSpecs returns the variants the spec patterns find in q, in the profile's order, each pattern's first
// match: its first capture group when the pattern has one, else the whole match.
func (p *Profile) FindSpecs(q string) []Spec {
	var out []Spec
	for _, sp := range p.SpecPatterns {
		re, err := regexp.Compile(sp.Pattern)
		if err != nil { // a valid profile has none
			continue
		}
		m := re.FindStringSubmatch(q)
		switch {
		case m == nil:
			continue
		case len(m) > 1 && m[1] != "":
			out = append(out, Spec{Pattern: sp.Name, Value: m[1]})
		case len(m) == 1:
			out = append(out, Spec{Pattern: sp.Name, Value: m[0]})
		}
	}
	return out
}

// Schema returns the metadata schema of c's profile, ready for use; nil when the profile has none.
func Schema(c *rag.Collection) (*meta.Schema, error) {
	p, err := Of(c)
	if err != nil || p.Schema == nil {
		return nil, err
	}
	if err := p.Schema.Compile(); err != nil {
		return nil, fmt.Errorf("collection %s: stored schema: %w", c.Name, err)
	}
	return p.Schema, nil
}

// Store is what Put needs of a store (rag.Store).
type Store interface {
	GetCollection(ctx context.Context, idOrName string) (*rag.Collection, error)
	CreateCollection(ctx context.Context, c *rag.Collection) error
	UpdateCollection(ctx context.Context, c *rag.Collection) error
}

// Put stores p as the profile of collection name, creating the collection (owned by owner) when it does not
// exist; created says which. p must be valid, and p.Name empty or name.
func Put(ctx context.Context, st Store, name string, p *Profile, owner string) (c *rag.Collection, created bool, err error) {
	if p.Name != "" && p.Name != name {
		return nil, false, (&Error{Field: "name", Why: fmt.Sprintf("%q is not the collection %q", p.Name, name)}).invalid()
	}
	for range 2 {
		c, err = st.GetCollection(ctx, name)
		switch {
		case errors.Is(err, rag.ErrNotFound):
			c = &rag.Collection{Name: name, Owner: owner}
			if err := Apply(c, p); err != nil {
				return nil, false, err
			}
			err = st.CreateCollection(ctx, c)
			if errors.Is(err, rag.ErrConflict) { // created meanwhile: update it
				continue
			}
			return c, err == nil, err
		case err != nil:
			return nil, false, err
		}
		if err := Apply(c, p); err != nil {
			return nil, false, err
		}
		return c, false, st.UpdateCollection(ctx, c)
	}
	return nil, false, err
}

// GraphSettings returns what graph retrieval follows for collection c (graph.SettingsFunc): its profile's
// graph section, intents, first spec found, context limits, off-topic and not-covered replies, and
// vocabulary.
func GraphSettings(c *rag.Collection) (graph.Settings, error) {
	p, err := Of(c)
	if err != nil {
		return graph.Settings{}, err
	}
	set := graph.Settings{
		Intents: p.FiredIntents,
		Spec: func(q string) string {
			if specs := p.FindSpecs(q); len(specs) > 0 {
				return specs[0].Value
			}
			return ""
		},
		Limits: graph.Limits{Entities: p.Context.Entities, RelationsPerEntity: p.Context.RelationsPerEntity, Rows: p.Context.TableRows,
			Passages: p.Context.Passages, PassageChars: p.Context.PassageChars, Chars: p.Context.TotalChars},
		Replies:    graph.Replies{OffTopic: p.Replies.OffTopic, NotFound: p.Replies.NotCovered},
		Vocabulary: p.Vocabulary,
	}
	if p.Graph != nil {
		set.Profile = *p.Graph
	}
	return set, nil
}
