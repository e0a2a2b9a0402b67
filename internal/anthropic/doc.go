// Package anthropic is ragd's Anthropic provider: a Generator over the Messages API
// (github.com/anthropics/anthropic-sdk-go), streaming its server-sent events when the caller streams
// (Anthropic has no embeddings API). Explain reads the SDK's errors for internal/provider.
//
// Only this package imports the Anthropic SDK; internal/app registers it unless the build has the
// ragd_offline tag.
package anthropic
