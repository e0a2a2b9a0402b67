package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

func testCollections(t *testing.T, open func(t *testing.T) rag.Store) {
	t.Run("CreateCollection/OK", func(t *testing.T) {
		s := open(t)
		before := time.Now().Add(-time.Second)
		c := &rag.Collection{Name: "papers", Description: "research papers", Owner: alice.ID,
			Settings: map[string]any{"system_prompt": "Answer briefly.", "top_k": float64(8)}}
		if err := s.CreateCollection(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		if c.ID == "" || c.CreatedAt.Before(before) || c.UpdatedAt.Before(before) {
			t.Fatalf("ID/timestamps not assigned: %+v", c)
		}
		for _, key := range []string{c.ID, "papers"} {
			got, err := s.GetCollection(t.Context(), key)
			if err != nil {
				t.Fatalf("GetCollection(%q): %v", key, err)
			}
			if got.ID != c.ID || got.Name != c.Name || got.Description != c.Description || got.Owner != c.Owner ||
				!jsonEqual(got.Settings, c.Settings) || !got.CreatedAt.Equal(c.CreatedAt) || !got.UpdatedAt.Equal(c.UpdatedAt) {
				t.Errorf("GetCollection(%q) = %+v, want %+v", key, got, c)
			}
		}
	})
	t.Run("CreateCollection/KeepsGivenID", func(t *testing.T) {
		s := open(t)
		c := &rag.Collection{ID: "6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f", Name: "given", Owner: alice.ID}
		if err := s.CreateCollection(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetCollection(t.Context(), "given")
		if err != nil || got.ID != c.ID {
			t.Fatalf("GetCollection = %+v, %v; want ID %s", got, err, c.ID)
		}
	})
	t.Run("CreateCollection/ErrConflict", func(t *testing.T) {
		s := open(t)
		mustCollection(t, s, "papers")
		err := s.CreateCollection(t.Context(), &rag.Collection{Name: "papers", Owner: bob.ID})
		if !errors.Is(err, rag.ErrConflict) {
			t.Fatalf("err = %v, want ErrConflict", err)
		}
		list, err := s.ListCollections(t.Context())
		if err != nil || len(list) != 1 {
			t.Fatalf("ListCollections = %d, %v; want 1 collection", len(list), err)
		}
	})
	t.Run("GetCollection/ErrNotFound", func(t *testing.T) {
		s := open(t)
		mustCollection(t, s, "papers")
		for _, key := range []string{"missing", "6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f", ""} {
			_, err := s.GetCollection(t.Context(), key)
			wantNotFound(t, fmt.Sprintf("GetCollection(%q)", key), err)
		}
	})
	t.Run("EnsureCollection/CreatesOnce", func(t *testing.T) {
		s := open(t)
		c1, err := s.EnsureCollection(t.Context(), "default", alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c1.ID == "" || c1.Name != "default" || c1.Owner != alice.ID {
			t.Fatalf("EnsureCollection = %+v", c1)
		}
		c2, err := s.EnsureCollection(t.Context(), "default", bob.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c2.ID != c1.ID || c2.Owner != alice.ID {
			t.Fatalf("second EnsureCollection = %+v, want the first (%s, owner alice)", c2, c1.ID)
		}
	})
	t.Run("EnsureCollection/Concurrent", func(t *testing.T) {
		s := open(t)
		const n = 8
		ids := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := s.EnsureCollection(t.Context(), "shared", fmt.Sprintf("user:%d", i))
				errs[i] = err
				if err == nil {
					ids[i] = c.ID
				}
			}()
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("EnsureCollection %d: %v", i, errs[i])
			}
			if ids[i] != ids[0] {
				t.Fatalf("EnsureCollection returned different IDs: %v", ids)
			}
		}
		list, err := s.ListCollections(t.Context())
		if err != nil || len(list) != 1 {
			t.Fatalf("ListCollections = %d, %v; want 1", len(list), err)
		}
	})
	t.Run("UpdateCollection/Profile", func(t *testing.T) {
		s := open(t)
		c := &rag.Collection{Name: "pumsem", Owner: alice.ID, Settings: map[string]any{"domain": "construction"}}
		if err := s.CreateCollection(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetCollection(t.Context(), "pumsem"); err != nil || len(got.Profile) != 0 {
			t.Fatalf("a new collection: profile %q, %v; want none", got.Profile, err)
		}
		created := c.UpdatedAt
		c.Description = "품셈"
		c.Settings = map[string]any{"metadata_types": map[string]any{"deposit": "money"}}
		c.Profile = []byte(`{"language":"ko","replies":{"not_covered":"자료에 없습니다."},"generation":{"passages":20}}`)
		if err := s.UpdateCollection(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		if c.UpdatedAt.Before(created) {
			t.Errorf("UpdatedAt %v before the creation's %v", c.UpdatedAt, created)
		}
		list, err := s.ListCollections(t.Context())
		if err != nil || len(list) != 1 {
			t.Fatalf("ListCollections = %d, %v", len(list), err)
		}
		got, err := s.GetCollection(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []*rag.Collection{got, list[0]} {
			if g.Description != "품셈" || !jsonEqual(g.Settings, c.Settings) || !rawEqual(g.Profile, c.Profile) ||
				g.Owner != alice.ID || !g.CreatedAt.Equal(c.CreatedAt) || !g.UpdatedAt.Equal(c.UpdatedAt) {
				t.Errorf("after UpdateCollection: %+v (profile %s), want %+v (profile %s)", g, g.Profile, c, c.Profile)
			}
		}
		c.Profile = nil
		if err := s.UpdateCollection(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetCollection(t.Context(), c.ID); err != nil || len(got.Profile) != 0 {
			t.Fatalf("after removing the profile: %q, %v", got.Profile, err)
		}
	})
	t.Run("UpdateCollection/ErrNotFound", func(t *testing.T) {
		s := open(t)
		mustCollection(t, s, "papers")
		err := s.UpdateCollection(t.Context(), &rag.Collection{ID: "6f1c2b9e-3d4a-4c5b-8e7f-0a1b2c3d4e5f", Name: "papers", Description: "x"})
		wantNotFound(t, "UpdateCollection(missing)", err)
		got, err := s.GetCollection(t.Context(), "papers")
		if err != nil || got.Description != "" {
			t.Fatalf("the other collection changed: %+v, %v", got, err)
		}
	})
	t.Run("ListCollections/OrderedByName", func(t *testing.T) {
		s := open(t)
		list, err := s.ListCollections(t.Context())
		if err != nil || len(list) != 0 {
			t.Fatalf("empty store: ListCollections = %d, %v", len(list), err)
		}
		for _, name := range []string{"zeta", "alpha", "mid"} {
			mustCollection(t, s, name)
		}
		list, err = s.ListCollections(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range list {
			names = append(names, c.Name)
		}
		if fmt.Sprint(names) != "[alpha mid zeta]" {
			t.Fatalf("names = %v", names)
		}
	})
}

// rawEqual reports whether two JSON documents hold the same value (PostgreSQL's jsonb reorders keys).
func rawEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && jsonEqual(x, y)
}
