package anthropic

import (
	"errors"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/ragd/ragd/internal/provider"
)

// Explain reads a github.com/anthropics/anthropic-sdk-go error ({"type": "error", "error":
// {"type": "rate_limit_error", "message": ...}}).
func Explain(err error) provider.Failure {
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae == nil {
		return provider.Failure{Reason: err.Error()}
	}
	return provider.Failure{Status: ae.StatusCode, Reason: provider.ErrorBodyReason(ae.RawJSON())}
}
