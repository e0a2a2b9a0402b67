package openai

import (
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// newClient returns a client of an OpenAI-compatible API that sends its requests through hc (the
// provider.Caller's recording client) and leaves retrying to the caller.
func newClient(baseURL, key string, hc *http.Client) openai.Client {
	return openai.NewClient(option.WithBaseURL(baseURL), option.WithAPIKey(key),
		option.WithHTTPClient(hc), option.WithMaxRetries(0))
}

// isOpenAI reports whether baseURL is OpenAI's own API, which needs a key and knows the newer fields.
func isOpenAI(baseURL string) bool { return strings.Contains(baseURL, "://api.openai.com") }
