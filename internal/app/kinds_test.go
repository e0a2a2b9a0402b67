package app

import (
	"encoding/json"
	"testing"

	"github.com/ragd/ragd/internal/connector"
)

// TestRemoteKinds builds a source of each remote kind from valid settings, and refuses bad ones with the
// kind's own error.
func TestRemoteKinds(t *testing.T) {
	kinds := Kinds()
	for kind, settings := range map[string]string{
		"web": `{"url": "https://example.com/docs/", "max_depth": 1}`,
		"git": `{"url": "https://example.com/org/repo.git", "branch": "main"}`,
	} {
		if _, err := kinds.New(kind, connector.Config{Settings: json.RawMessage(settings)}); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
		if _, err := kinds.New(kind, connector.Config{Settings: json.RawMessage(`{"url": ""}`)}); err == nil {
			t.Errorf("%s: a source without a URL was built", kind)
		}
	}
}
