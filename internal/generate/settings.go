package generate

import "time"

// Defaults of the hosted generators (internal/openai, internal/anthropic, internal/gemini), the same for each.
const (
	DefaultTemperature     = 0.3
	DefaultMaxOutputTokens = 2048
	// DefaultTimeout bounds one attempt of a hosted generator, the whole stream included.
	DefaultTimeout = 120 * time.Second
)

// Settings are what a hosted generator's GeneratorConfig adds to its provider.Config: how it answers.
type Settings struct {
	// Temperature (default DefaultTemperature; negative for the model's own default). Each adapter says
	// where it differs (Anthropic takes at most 1; OpenAI's reasoning models none).
	Temperature float64
	// MaxOutputTokens bounds the answer (default DefaultMaxOutputTokens).
	MaxOutputTokens int
	// Budget bounds the context (zero value: Budget's defaults).
	Budget Budget
}

// WithDefaults returns s with a zero Temperature and a zero or negative MaxOutputTokens set to the defaults.
func (s Settings) WithDefaults() Settings {
	if s.Temperature == 0 {
		s.Temperature = DefaultTemperature
	}
	if s.MaxOutputTokens <= 0 {
		s.MaxOutputTokens = DefaultMaxOutputTokens
	}
	return s
}
