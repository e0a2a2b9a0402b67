package cli

import (
	"slices"

	"github.com/ragd/ragd/internal/filter"
	"github.com/ragd/ragd/internal/rag"
)

// parseFilters turns --filter expressions into a rag.Filter over collections and the collections they
// name (see filter.Parse: the same keys, dates and type names as the HTTP API).
func parseFilters(exprs []string, collections []string) (rag.Filter, error) {
	f, err := filter.Parse(exprs)
	if err != nil {
		return f, usageErr("--filter %s", rag.ErrorMessage(err))
	}
	f.Collections = slices.Concat(collections, f.Collections)
	return f, nil
}
