// Package generate holds what every generator shares: the prompt, context budgets, citation checking and the
// plain "not covered" reply. The generators themselves live in sub-packages (extractive, gemini, openai,
// anthropic).
package generate

import (
	"fmt"
	"strings"

	"github.com/ragd/ragd/internal/rag"
)

// NotCovered is the reply when the documents do not cover a question: reply (a collection's fixed reply)
// when set, else NotFound(lang).
func NotCovered(reply, lang string) string {
	if r := strings.TrimSpace(reply); r != "" {
		return r
	}
	return NotFound(lang)
}

// NotFound is the reply, in the question's language ("ko" or "en"), when the documents do not cover a question.
func NotFound(lang string) string {
	if lang == "ko" {
		return "제공된 문서에서 이 질문에 대한 내용을 찾지 못했습니다."
	}
	return "The documents do not cover this question."
}

// RewriteSystem is the system prompt of the follow-up rewrite step (answer.Service): the model turns the last
// question of a conversation into a standalone question for retrieval.
const RewriteSystem = "You rewrite the last question of a conversation into a standalone question that can be " +
	"understood without the conversation: replace pronouns and references (\"that bill\", \"그 법안\", \"it\") by " +
	"what they refer to and keep every other word. Write it in the question's language. Reply with the question " +
	"only, no answer and no explanation."

// RewriteUser is the user message of the rewrite step: the conversation's turns, then the question.
func RewriteUser(history []rag.Turn, question string) string {
	var b strings.Builder
	b.WriteString("Conversation:\n")
	for _, t := range history {
		fmt.Fprintf(&b, "%s: %s\n", t.Role, shorten(strings.TrimSpace(t.Content), maxTurnChars))
	}
	fmt.Fprintf(&b, "\nLast question: %s\n\nStandalone question:", question)
	return b.String()
}
