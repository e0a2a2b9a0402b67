package generate

import (
	"fmt"
	"strings"
)

// CompareInstruction is added to the system prompt when a question compares documents and its passages come
// from several (answer.Service): the answer is laid out per document, in the order given, each part under
// the document's title and cited to its own passages. chosen says the user picked these documents; otherwise
// the layout applies only if the question compares what the documents say.
func CompareInstruction(titles []string, chosen bool) string {
	quoted := make([]string, len(titles))
	for i, t := range titles {
		quoted[i] = fmt.Sprintf("%q", t)
	}
	lead := "This question compares documents. Organise the answer per document"
	if !chosen {
		lead = "The passages come from several documents. If the question compares what these documents say, organise the answer per document (otherwise answer as usual)"
	}
	return lead + ", in this order: " +
		strings.Join(quoted, ", ") + ". For each, write its title in bold on a line of its own, then what its passages say " +
		"on the question, citing only that document's passages. If a document's passages say nothing on it, say so under its " +
		"title. End with one sentence on the main difference or what they share, citing both sides."
}

// NotInDocument is the line under a compared document's heading when its passages do not answer the
// question, in the question's language.
func NotInDocument(lang string) string {
	if lang == "ko" {
		return "이 문서에서는 관련 내용을 찾지 못했습니다."
	}
	return "This document does not say."
}
