package anthropic

import (
	"net/http"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// newClient returns a Messages API client that sends its requests through hc (the provider.Caller's
// recording client) and leaves retrying to the caller.
func newClient(baseURL, key string, hc *http.Client) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey(key),
		option.WithHTTPClient(hc), option.WithMaxRetries(0))
}
