// Package generate holds what every generator shares: the prompt, context budgets, citation checking and the
// plain "not covered" reply. The generators themselves live in sub-packages (extractive, gemini, openai,
// anthropic).
package generate

// NotFound is the reply, in the question's language ("ko" or "en"), when the documents do not cover a question.
func NotFound(lang string) string {
	if lang == "ko" {
		return "제공된 문서에서 이 질문에 대한 내용을 찾지 못했습니다."
	}
	return "The documents do not cover this question."
}
