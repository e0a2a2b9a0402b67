package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/ragd/ragd/internal/rag"
)

// testAccess checks collection visibility, document grants and the write predicate with real users and
// teams: every candidate and lookup query admits exactly the documents the model of docs/security.md
// grants, and DocumentAccess / CollectionAccess say who may write.
func testAccess(t *testing.T, open func(t *testing.T) rag.Store) {
	s := open(t)
	ctx := t.Context()
	ps := principalStore(t, s)
	as, ok := s.(rag.AccessStore)
	if !ok {
		t.Fatalf("%T does not implement rag.AccessStore", s)
	}
	for _, u := range []string{"al", "bo", "cy", "di", "ed", "zo"} {
		if err := ps.CreateUser(ctx, &rag.User{Name: u}); err != nil {
			t.Fatal(err)
		}
	}
	for _, team := range []string{"eng", "ops"} {
		if err := ps.CreateTeam(ctx, &rag.Team{Name: team}); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []rag.TeamMember{{Team: "eng", User: "al", Role: rag.RoleMember}, {Team: "eng", User: "bo", Role: rag.RoleMember},
		{Team: "eng", User: "cy", Role: rag.RoleAdmin}, {Team: "ops", User: "di", Role: rag.RoleMember}} {
		if err := ps.PutTeamMember(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// Principals as the server resolves them from keys: ID and teams.
	var (
		al = rag.Principal{ID: "user:al", Groups: []string{"eng"}}
		bo = rag.Principal{ID: "user:bo", Groups: []string{"eng"}}
		cy = rag.Principal{ID: "user:cy", Groups: []string{"eng"}}
		di = rag.Principal{ID: "user:di", Groups: []string{"ops"}}
		ed = rag.Principal{ID: "user:ed"}
	)
	coll := func(name, owner string, vis rag.Visibility) *rag.Collection {
		c := &rag.Collection{Name: name, Owner: owner, Visibility: vis}
		if err := s.CreateCollection(ctx, c); err != nil {
			t.Fatalf("CreateCollection(%s): %v", name, err)
		}
		if got, err := s.GetCollection(ctx, name); err != nil || got.Visibility != vis || got.Owner != owner {
			t.Fatalf("GetCollection(%s) = %+v, %v", name, got, err)
		}
		return c
	}
	alPrivate := coll("al-private", "user:al", rag.VisibilityPrivate)
	engOwned := coll("eng-owned", "team:eng", rag.VisibilityPrivate)
	alTeam := coll("al-team", "user:al", rag.VisibilityTeam)
	opsPublic := coll("ops-public", "team:ops", rag.VisibilityPublic)
	if err := s.CreateCollection(ctx, &rag.Collection{Name: "bad", Visibility: "world"}); rag.ErrorCode(err) != rag.CodeInvalid {
		t.Errorf("visibility world: %v, want invalid_request", err)
	}
	// Documents are owned by zo, who is in no team, so that only collections and grants admit others.
	mk := func(c *rag.Collection, ext string, opts ...func(*rag.Document)) *rag.Document {
		d := newDoc(t, s, c.ID, ext, append([]func(*rag.Document){func(d *rag.Document) { d.Owner = "user:zo" }}, opts...)...)
		commitTexts(t, s, d, spaceA, []string{"turbine maintenance schedule " + ext}, [][]float32{basis(spaceA.Dim, 1)})
		return d
	}
	private := mk(alPrivate, "private")
	granted := mk(alPrivate, "granted", func(d *rag.Document) { d.Readers = []string{"team:ops"}; d.Writers = []string{"user:ed"} })
	eng := mk(engOwned, "eng")
	team := mk(alTeam, "team")
	public := mk(opsPublic, "public")
	all := []*rag.Document{private, granted, eng, team, public}
	if got, err := s.GetDocument(ctx, admin, granted.ID); err != nil || !slices.Equal(got.Writers, []string{"user:ed"}) || !slices.Equal(got.Readers, []string{"team:ops"}) {
		t.Fatalf("granted document = %+v, %v", got, err)
	}

	// Each collection has a graph and a record table; they are read as the collection is seen by its
	// owner and visibility (a grant on one document does not open them).
	gs, ok := s.(rag.GraphStore)
	if !ok {
		t.Fatalf("%T does not implement rag.GraphStore", s)
	}
	gspace := rag.Space{Provider: "test", Model: "m", Dim: 4}
	for _, c := range []*rag.Collection{alPrivate, engOwned, alTeam, opsPublic} {
		if err := gs.ReplaceGraph(ctx, c.ID, smallGraph(gspace)); err != nil {
			t.Fatal(err)
		}
		if err := gs.ReplaceRecords(ctx, c.ID, "prices", []rag.Record{{Key: "K1", NormKey: "k1", Values: map[string]any{"price": 3.0}}}); err != nil {
			t.Fatal(err)
		}
	}
	graphSees := func(p rag.Principal, c *rag.Collection) (map[string]int, error) {
		n := map[string]int{}
		ents, err := gs.GraphEntities(ctx, p, c.ID, nil)
		n["entities"] = len(ents)
		vecs, err2 := gs.GraphVectors(ctx, p, c.ID, gspace)
		n["vectors"] = len(vecs)
		posts, total, err3 := gs.GraphPostings(ctx, p, c.ID, nil)
		n["postings"], n["postings total"] = len(posts), total
		rels, err4 := gs.GraphEdges(ctx, p, c.ID, nil)
		n["relations"] = len(rels)
		secs, err5 := gs.GraphSections(ctx, p, c.ID, nil)
		n["sections"] = len(secs)
		chunks, err6 := gs.GraphChunks(ctx, p, c.ID, nil)
		n["chunks"] = len(chunks)
		recs, err7 := gs.Records(ctx, p, c.ID, "prices", nil)
		n["records"] = len(recs)
		return n, errors.Join(err, err2, err3, err4, err5, err6, err7)
	}

	cases := []struct {
		name  string
		p     rag.Principal
		read  []*rag.Document
		write []*rag.Document
		colls []string // collections seen
		adds  []string // collections written to
		// graphs are the collections whose graph and records p reads: seen by owner and visibility, not
		// through a document
		graphs []string
	}{
		{"CollectionOwner", al, []*rag.Document{private, granted, eng, team, public}, []*rag.Document{private, granted, team},
			[]string{"al-private", "al-team", "eng-owned", "ops-public"}, []string{"al-private", "al-team"},
			[]string{"al-private", "al-team", "eng-owned", "ops-public"}},
		{"TeamMember", bo, []*rag.Document{eng, team, public}, nil, []string{"al-team", "eng-owned", "ops-public"}, nil,
			[]string{"al-team", "eng-owned", "ops-public"}},
		{"TeamAdmin", cy, []*rag.Document{eng, team, public}, []*rag.Document{eng}, []string{"al-team", "eng-owned", "ops-public"}, []string{"eng-owned"},
			[]string{"al-team", "eng-owned", "ops-public"}},
		{"OtherTeamGranted", di, []*rag.Document{granted, public}, nil, []string{"al-private", "ops-public"}, nil, []string{"ops-public"}},
		{"WriteGrant", ed, []*rag.Document{granted, public}, []*rag.Document{granted}, []string{"al-private", "ops-public"}, nil, []string{"ops-public"}},
		{"DocumentOwner", rag.Principal{ID: "user:zo"}, all, all, []string{"al-private", "al-team", "eng-owned", "ops-public"}, nil, []string{"ops-public"}},
		{"Admin", admin, all, all, []string{"al-private", "al-team", "eng-owned", "ops-public"}, []string{"al-private", "al-team", "eng-owned", "ops-public"},
			[]string{"al-private", "al-team", "eng-owned", "ops-public"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seesExactly(t, s, tc.p, tc.read, basis(spaceA.Dim, 1), "turbine maintenance")
			for _, d := range all {
				acc, err := as.DocumentAccess(ctx, tc.p, d.ID)
				switch {
				case !slices.Contains(tc.read, d):
					if !errors.Is(err, rag.ErrNotFound) {
						t.Errorf("DocumentAccess(%s) = %+v, %v; want ErrNotFound", d.ExternalID, acc, err)
					}
					if _, err := s.ListChunks(ctx, tc.p, d.ID); !errors.Is(err, rag.ErrNotFound) {
						t.Errorf("ListChunks(%s) = %v; want ErrNotFound", d.ExternalID, err)
					}
				case err != nil || acc.Write != slices.Contains(tc.write, d):
					t.Errorf("DocumentAccess(%s) = %+v, %v; want write %v", d.ExternalID, acc, err, slices.Contains(tc.write, d))
				}
			}
			for _, c := range []*rag.Collection{alPrivate, engOwned, alTeam, opsPublic} {
				n, err := graphSees(tc.p, c)
				if err != nil {
					t.Fatal(err)
				}
				open := slices.Contains(tc.graphs, c.Name)
				for what, got := range n {
					if (got > 0) != open {
						t.Errorf("graph of %s: %d %s, want any: %v", c.Name, got, what, open)
					}
				}
			}
			cs, err := as.VisibleCollections(ctx, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range cs {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tc.colls) {
				t.Errorf("VisibleCollections = %v, want %v", names, tc.colls)
			}
			for _, c := range []*rag.Collection{alPrivate, engOwned, alTeam, opsPublic} {
				got, acc, err := as.CollectionAccess(ctx, tc.p, c.Name)
				switch {
				case !slices.Contains(tc.colls, c.Name):
					if !errors.Is(err, rag.ErrNotFound) {
						t.Errorf("CollectionAccess(%s) = %+v, %v; want ErrNotFound", c.Name, acc, err)
					}
				case err != nil || got.ID != c.ID || acc.Write != slices.Contains(tc.adds, c.Name) || acc.Whole != slices.Contains(tc.graphs, c.Name):
					t.Errorf("CollectionAccess(%s) = %v, %+v, %v; want write %v, whole %v", c.Name, got, acc, err,
						slices.Contains(tc.adds, c.Name), slices.Contains(tc.graphs, c.Name))
				}
			}
		})
	}

	// Changing grants takes effect at once: bo gets a read grant, ed loses the write grant.
	if _, err := s.UpdateDocument(ctx, admin, private.ID, rag.DocumentUpdate{Readers: []string{"user:bo"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateDocument(ctx, admin, granted.ID, rag.DocumentUpdate{Writers: []string{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetDocument(ctx, bo, private.ID); err != nil {
		t.Errorf("bo after a read grant: %v", err)
	}
	if _, err := s.GetDocument(ctx, ed, granted.ID); !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("ed after losing the write grant: %v, want ErrNotFound", err)
	}

	// Changing a collection's access takes effect at once: al-private made public is read by ed; handed to
	// team ops, di (a member) reads it and al no longer writes it.
	if c, err := as.SetCollectionAccess(ctx, "al-private", "", rag.VisibilityPublic); err != nil || c.Visibility != rag.VisibilityPublic || c.Owner != "user:al" {
		t.Fatalf("SetCollectionAccess(public) = %+v, %v", c, err)
	}
	if _, err := s.GetDocument(ctx, ed, private.ID); err != nil {
		t.Errorf("ed after al-private became public: %v", err)
	}
	if c, err := as.SetCollectionAccess(ctx, alPrivate.ID, "team:ops", rag.VisibilityPrivate); err != nil || c.Owner != "team:ops" || c.Name != "al-private" {
		t.Fatalf("SetCollectionAccess(team:ops) = %+v, %v", c, err)
	}
	if _, err := s.GetDocument(ctx, di, private.ID); err != nil {
		t.Errorf("di after ops got al-private: %v", err)
	}
	if acc, err := as.DocumentAccess(ctx, al, private.ID); !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("al after giving al-private away: %+v, %v; want ErrNotFound", acc, err)
	}
	if _, err := as.SetCollectionAccess(ctx, "al-private", "", "world"); rag.ErrorCode(err) != rag.CodeInvalid {
		t.Errorf("visibility world: %v", err)
	}
	if _, err := as.SetCollectionAccess(ctx, "al-private", "ops", ""); rag.ErrorCode(err) != rag.CodeInvalid {
		t.Errorf("owner ops: %v", err)
	}
	if _, err := as.SetCollectionAccess(ctx, "nothing", "", rag.VisibilityPublic); !errors.Is(err, rag.ErrNotFound) {
		t.Errorf("unknown collection: %v", err)
	}
}

// testTopKUnderGrant: a principal granted a few documents among many gets k candidates when at least k
// of its passages match, although the nearest and best-scoring passages are all forbidden to it — the
// predicate is in the candidate queries, not a filter of their results.
func testTopKUnderGrant(t *testing.T, open func(t *testing.T) rag.Store) {
	s := open(t)
	ctx := t.Context()
	c := &rag.Collection{Name: "many", Owner: "user:nobody"}
	if err := s.CreateCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	g := rag.Principal{ID: "user:g"}
	var granted []string
	for i := range 30 {
		grant := i%10 == 3 // 3 of 30 documents
		d := newDoc(t, s, c.ID, fmt.Sprintf("d%02d", i), func(d *rag.Document) {
			if grant {
				d.Readers = []string{g.ID}
			}
		})
		texts := make([]string, 5)
		vecs := make([][]float32, 5)
		for j := range texts {
			v := basis(spaceA.Dim, 2)
			if grant {
				// farther from the query than every forbidden passage, and with fewer query words
				texts[j] = fmt.Sprintf("granite quarry %d %d", i, j)
				v[3] = 2
			} else {
				texts[j] = fmt.Sprintf("granite quarry granite quarry %d %d", i, j)
				v[3] = 0.1
			}
			vecs[j] = normalize(v)
		}
		commitTexts(t, s, d, spaceA, texts, vecs)
		if grant {
			granted = append(granted, d.ID)
		}
	}
	for _, k := range []int{10, 15, 20} {
		want := min(k, 15)
		vc := vector(t, s, g, spaceA, basis(spaceA.Dim, 2), rag.Filter{}, k)
		kc := keyword(t, s, g, "granite quarry", rag.Filter{}, k)
		if len(vc) != want || len(kc) != want {
			t.Errorf("k=%d: %d vector and %d keyword candidates, want %d each", k, len(vc), len(kc), want)
		}
		for _, docs := range [][]string{hitDocs(t, s, vc), hitDocs(t, s, kc)} {
			for _, d := range docs {
				if !slices.Contains(granted, d) {
					t.Errorf("k=%d: a candidate of %s, not one of the granted %v", k, d, granted)
				}
			}
		}
	}
}
