package gemini

import (
	"context"
	"net/http"

	"google.golang.org/genai"
)

// newClient returns a Gemini API client that sends its requests through hc (the provider.Caller's
// recording client); baseURL "" means Google's endpoint.
func newClient(ctx context.Context, key, baseURL string, hc *http.Client) (*genai.Client, error) {
	cc := &genai.ClientConfig{APIKey: key, Backend: genai.BackendGeminiAPI, HTTPClient: hc}
	if baseURL != "" {
		cc.HTTPOptions.BaseURL = baseURL
	}
	return genai.NewClient(ctx, cc)
}
