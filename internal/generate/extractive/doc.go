// Package extractive is the offline answerer: it answers from the retrieved passages themselves, quoting the
// sentences that best answer the question, each followed by its passage's [n]. It never writes text of its
// own besides citations, spaces, line breaks and an ellipsis where it cut a long sentence; when the passages
// do not share enough of the question's words it gives generate.NotFound in the question's language.
//
// # How sentences are chosen
//
// Passages are split into sentences (chunk.Sentences); a markdown table row is one unit and keeps its
// table's header. The question is split into words; each word keeps its non-stop analyzer terms
// (textproc), so that a Korean word matches a sentence wholly through its form or particle-free stem, and
// in part through its syllable bigrams. A sentence's score is the sum, over question words, of how well the
// sentence matches the word times the word's weight, divided by the total weight:
//
//   - a word's weight is its inverse frequency over the given sentences, so that the passages' common topic
//     counts less than what singles a sentence out; words that frame the question ("이름", "인물", "name")
//     count 0.3, words of the previous question in a short follow-up 0.3;
//   - a word found only in a neighbouring sentence of the same passage, or in the passage's title or
//     section, counts half (Korean drops the subject a previous sentence or the title named);
//   - a question that asks when or how many gets a bonus for sentences holding a date or number the
//     question does not;
//   - sentences of lower-ranked passages are weighted 1/(1 + 0.1·rank).
//
// The answer is the best sentence, then further sentences in score order while they score at least 0.4 of
// the best, fit in Options.MaxChars and are not near-copies of one already chosen (overlapping chunks). A
// sentence longer than 200 characters is cut to the comma-separated clauses that hold question words, with
// one clause on either side. Sentences of one passage that are neighbours are shown in their own order,
// table rows under their header.
//
// # Measured
//
// On KorQuAD 1.0 dev (5,774 questions, each given the top 3 paragraphs of a BM25 over the analyzer's terms;
// see TestQualityKorQuAD) the answer contains a gold answer span for 0.930 of the questions with a median
// answer of 249 characters (p95 295); with the top 5 paragraphs 0.934 at 252. Run the harness to measure a
// change.
package extractive
