package rag

import (
	"context"
	"errors"
)

// DocumentGetter reads a document as a principal sees it (every Store).
type DocumentGetter interface {
	GetDocument(ctx context.Context, p Principal, id string) (*Document, error)
}

// WithheldAnswer replaces the text of a saved answer (a conversation's message, a rating's answer) that
// drew on a document its principal can no longer read: the text may quote it.
const WithheldAnswer = "[This answer drew on documents you can no longer read; it is withheld.]"

// ReadableDocuments says which of ids p reads now, asking g for each distinct one (through the store's
// visibility predicate; a deleted document is not readable). Admins read every one. Saved passages —
// conversations, ratings — are filtered with it when they are read back, so that a principal who lost
// access to a document since does not see them again.
func ReadableDocuments(ctx context.Context, g DocumentGetter, p Principal, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		if _, done := out[id]; done || id == "" {
			continue
		}
		if p.Admin {
			out[id] = true
			continue
		}
		_, err := g.GetDocument(ctx, p, id)
		switch {
		case err == nil:
			out[id] = true
		case errors.Is(err, ErrNotFound):
			out[id] = false
		default:
			return nil, err
		}
	}
	return out, nil
}
