// Package textproc normalises text and holds the keyword analyzer shared by every store, so that the
// embedded and the PostgreSQL store index and query exactly the same terms, and the offline hash embedder
// sees the same words.
//
// # Terms
//
// A term consists of lower-case letters and digits and at most the joiner characters in [Joiners]
// (". - / _ + # %"), because a store indexes each term as exactly one full-text token (SQLite FTS5 with
// tokenchars set to the joiners; PostgreSQL as a 'simple' lexeme). Combining marks are dropped, since
// FTS5's unicode61 tokenizer would split a word at them.
//
// # Rules
//
// The text is NFKC-normalised ([Normalize]) and lower-cased, then cut into tokens at everything that is not
// a letter, digit or joiner. Digit groups ("1,000") lose their commas; apostrophes inside words are
// dropped ("don't" → "dont"), a possessive "'s" is removed. Joiners at the ends of a token are dropped,
// except "c++"/"c#" style endings of short words and a percent sign after a number ("50%").
//
//   - A Latin (or other alphabetic) word becomes its English Snowball (Porter2) stem.
//   - A Hangul word is kept whole, with its trailing particle or ending stripped as a second term when
//     that leaves at least two syllables ("임종석이" → "임종석"), and as the syllable bigrams of that stem
//     ("임종", "종석" — not "석이", which would match every "…석이"); a one-syllable word is kept as itself.
//     Two neighbouring Korean words also give a pair term of their stems ("농민 폭력" → "농민_폭력"), phrase
//     evidence for BM25. Han and kana runs get bigrams too.
//   - An identifier in camelCase or PascalCase is kept whole and also gives its parts ("parseQuery" →
//     "parsequeri", "pars", "queri"; "HTTPServer" → "httpserver", "http", "server"), as snake_case and
//     dotted names give theirs at the joiners, so that a question naming a function in any of its
//     spellings meets the code that defines it. A dotted name of three or more parts also gives its last two
//     ("server.byteBudget.reserve" → "bytebudget.reserv"), the way a method is named.
//   - Numbers and spec-like tokens are kept whole ("d80", "25-180-12", "0.7m3", "1000만원", "3.14",
//     "2024-01-15", "v1.2"), plus their parts where that helps recall: pieces between joiners
//     ("2024", "01", "15"; "high", "speed"), and pieces at a change between digits and Hangul ("1000",
//     "만원"; "1989", "년") or between digits and Latin letters when both sides are at least two characters
//     long ("covid", "19", but not "d" + "80"). A decimal point is not a joiner boundary ("3.14" stays),
//     and a percent sign after a digit stays with its number inside a token ("1%랑" → "1%랑", "1%", "1",
//     "랑"), so that a share meets a share and not every bare number.
//   - Single letters joined by joiners ("A/B", "U.S.") also give the letters written together ("ab"), so
//     that "AB테스트" meets "A/B 테스트".
//
// [IndexTerms] keeps every term in order with repeats (term frequency matters to BM25). [QueryTerms] is
// distinct and drops stop-words (an English list, Korean question and function words) unless nothing else
// is left, so that OR-queries are ranked by the words that carry meaning.
//
// The choices above were measured with BM25 (FTS5's k1=1.2, b=0.75) on Cranfield and KorQuAD; see
// internal/embed/hash/quality_test.go. Bigrams of the stem rather than of the whole word, and Korean word
// pairs, each raised KorQuAD nDCG@10 (0.941 → 0.948 → 0.950); English word pairs lowered Cranfield
// (0.356 → 0.351) and are not made; compound parts are worth 0.005 (Cranfield) and 0.010 (KorQuAD).
package textproc
