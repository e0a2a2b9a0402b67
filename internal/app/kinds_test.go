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
	for kind, c := range map[string]connector.Config{
		"web":    {Settings: json.RawMessage(`{"url": "https://example.com/docs/", "max_depth": 1}`)},
		"git":    {Settings: json.RawMessage(`{"url": "https://example.com/org/repo.git", "branch": "main"}`)},
		"notion": {Settings: json.RawMessage(`{}`), Credentials: []byte("secret_x")},
		"gdrive": {Credentials: []byte(`{"access_token": "ya29.x"}`)},
	} {
		if _, err := kinds.New(kind, c); err != nil {
			t.Errorf("%s: %v", kind, err)
		}
		if _, err := kinds.New(kind, connector.Config{Settings: json.RawMessage(`{"url": ""}`)}); err == nil {
			t.Errorf("%s: a source with bad settings and no credentials was built", kind)
		}
	}
}
