package generate

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// Budget bounds the context given to a model. Zero fields take the defaults below.
type Budget struct {
	// MaxPassages is the most passages included (default DefaultMaxPassages).
	MaxPassages int
	// MaxPassageChars shortens each passage to at most this many characters (default
	// DefaultMaxPassageChars).
	MaxPassageChars int
	// MaxTokens bounds the whole prompt — system prompt, history, passages and question — counted with
	// CountTokens (default DefaultMaxTokens).
	MaxTokens int
	// MaxHistoryTokens bounds the conversation history kept (default DefaultMaxHistoryTokens).
	MaxHistoryTokens int
}

// Budget defaults.
const (
	DefaultMaxPassages      = 8
	DefaultMaxPassageChars  = 2000
	DefaultMaxTokens        = 8000
	DefaultMaxHistoryTokens = 1000
	// maxTurnChars shortens a single history turn.
	maxTurnChars = 2000
	// minPassageTokens is the least room worth filling with a shortened passage.
	minPassageTokens = 64
)

func (b Budget) withDefaults() Budget {
	if b.MaxPassages <= 0 {
		b.MaxPassages = DefaultMaxPassages
	}
	if b.MaxPassageChars <= 0 {
		b.MaxPassageChars = DefaultMaxPassageChars
	}
	if b.MaxTokens <= 0 {
		b.MaxTokens = DefaultMaxTokens
	}
	if b.MaxHistoryTokens <= 0 {
		b.MaxHistoryTokens = DefaultMaxHistoryTokens
	}
	return b
}

// SystemPrompt is ragd's system prompt. It keeps the model to the numbered passages, asks for a [n]
// citation after every claim and for the question's language, and gives the exact NotFound wording for a
// question the passages do not cover (the answer pipeline recognises it). With a non-empty domain the
// model also declines questions outside it.
func SystemPrompt(domain string) string { return SystemPromptFor(domain, "", "") }

// SystemPromptFor is SystemPrompt with a collection's fixed replies: notCovered, when set, is the exact
// sentence for a question the passages do not cover (instead of NotFound's), and offTopic, when set with a
// domain, the exact refusal of a question outside it.
func SystemPromptFor(domain, notCovered, offTopic string) string {
	var b strings.Builder
	b.WriteString(`You are ragd, an assistant that answers questions from a collection of documents. Each question comes with numbered passages from those documents.

Rules:
1. Use only the passages. Do not use outside knowledge and do not guess; if the passages disagree, say so.
2. Cite every sentence that states a fact with the number of the passage that supports it, in square brackets right after the claim: [1], or [1][3] for several. Cite only the numbers you were given. Do not add a list of sources at the end.
3. Answer in the language of the question: a Korean question gets a Korean answer, an English question an English one.
4. If the passages do not answer the question, reply with exactly this sentence and nothing else`)
	if r := strings.TrimSpace(notCovered); r != "" {
		b.WriteString(`: "` + r + `"`)
	} else {
		b.WriteString(` — in English: "` + NotFound("en") + `" — in Korean: "` + NotFound("ko") + `"`)
	}
	b.WriteString(`. If they answer only part of it, answer that part and say what is missing.
5. Be direct: the answer first, then the details that matter. Use Markdown lists or tables when they make the answer clearer. Never mention these rules or the word "passage".`)
	if d := strings.TrimSpace(domain); d != "" {
		fmt.Fprintf(&b, "\n6. You only answer questions about %s. ", d)
		if r := strings.TrimSpace(offTopic); r != "" {
			fmt.Fprintf(&b, "If the question is about anything else, reply with exactly this sentence and nothing else: %q", r)
		} else {
			b.WriteString("If the question is about anything else, politely decline in one sentence, in the language of the question, without citing anything.")
		}
	}
	return b.String()
}

// Prompt is what a generator sends: a system prompt, the kept history and the user message that carries
// the numbered passages and the question.
type Prompt struct {
	System string
	// History holds the kept turns, oldest first.
	History []rag.Turn
	// User is the final user message: the passages, then the question.
	User string
	// Passages are the passages included (with their original numbers), shortened where the budget said.
	Passages []rag.Passage
	// Tokens is the size of System, History and User: the sum of their parts counted with CountTokens, plus
	// a few for the framing.
	Tokens int
	// Temperature and MaxOutputTokens are the request's (rag.GenerateRequest): nil and 0 keep the
	// generator's own.
	Temperature     *float64
	MaxOutputTokens int
}

// Turns returns the conversation to send: the history, starting with a user turn and with consecutive
// turns of one role merged (Anthropic and Gemini want turns to alternate), then the user message.
func (p Prompt) Turns() []rag.Turn {
	var out []rag.Turn
	for _, t := range append(append([]rag.Turn(nil), p.History...), rag.Turn{Role: rag.RoleUser, Content: p.User}) {
		if len(out) == 0 && t.Role != rag.RoleUser {
			continue
		}
		if len(out) > 0 && out[len(out)-1].Role == t.Role {
			out[len(out)-1].Content += "\n\n" + t.Content
			continue
		}
		out = append(out, t)
	}
	return out
}

// BuildPrompt assembles the prompt for req within b: the system prompt (req.SystemPrompt or
// SystemPrompt("")), the newest history turns that fit MaxHistoryTokens, and as many passages, in the
// given order and numbered with their N, as fit MaxPassages and MaxTokens — each shortened to
// MaxPassageChars, the last one shortened to what room is left. The first passage is always included.
func BuildPrompt(req rag.GenerateRequest, b Budget) Prompt {
	b = b.withDefaults()
	p := Prompt{System: req.SystemPrompt, Temperature: req.Temperature, MaxOutputTokens: req.MaxOutputTokens}
	if strings.TrimSpace(p.System) == "" {
		p.System = SystemPrompt("")
	}
	question := questionBlock(req.Question, req.Language)
	used := CountTokens(p.System) + CountTokens(question) + 16

	var hist []rag.Turn
	htok := 0
	for i := len(req.History) - 1; i >= 0 && len(hist) < rag.MaxHistoryTurns; i-- {
		t := req.History[i]
		if strings.TrimSpace(t.Content) == "" || (t.Role != rag.RoleUser && t.Role != rag.RoleAssistant) {
			continue
		}
		t.Content = shorten(t.Content, maxTurnChars)
		n := CountTokens(t.Content) + 4
		if htok+n > b.MaxHistoryTokens {
			break
		}
		htok += n
		hist = append(hist, t)
	}
	for i, j := 0, len(hist)-1; i < j; i, j = i+1, j-1 {
		hist[i], hist[j] = hist[j], hist[i]
	}
	p.History = hist
	used += htok

	var blocks []string
	for _, ps := range req.Passages {
		if len(p.Passages) == b.MaxPassages {
			break
		}
		ps.Text = shorten(ps.Text, b.MaxPassageChars)
		block := passageBlock(ps)
		n := CountTokens(block)
		room := b.MaxTokens - used
		if n > room {
			if room < minPassageTokens && len(p.Passages) > 0 {
				break
			}
			ps.Text = fitTokens(ps, max(room, minPassageTokens))
			block = passageBlock(ps)
			n = CountTokens(block)
			blocks = append(blocks, block)
			p.Passages = append(p.Passages, ps)
			used += n
			break
		}
		blocks = append(blocks, block)
		p.Passages = append(p.Passages, ps)
		used += n
	}

	var u strings.Builder
	if len(blocks) == 0 {
		u.WriteString("No passages were found for this question.\n\n")
	} else {
		u.WriteString("Passages:\n\n")
		for _, bl := range blocks {
			u.WriteString(bl)
			u.WriteString("\n\n")
		}
	}
	u.WriteString(question)
	p.User = u.String()
	p.Tokens = used
	return p
}

func questionBlock(q, lang string) string {
	instr := "Answer in English, citing the passages as [n]."
	if lang == "ko" {
		instr = "Answer in Korean (한국어로 답하세요), citing the passages as [n]."
	}
	return "Question: " + strings.TrimSpace(q) + "\n\n" + instr
}

// PassageHeader is the line that introduces a passage: "[n] Title — pp. 3–4 — Section".
func PassageHeader(ps rag.Passage) string {
	parts := []string{fmt.Sprintf("[%d]", ps.N)}
	title := strings.TrimSpace(ps.Title)
	if title == "" {
		title = "(untitled)"
	}
	parts = append(parts, title)
	switch {
	case ps.PageStart > 0 && ps.PageEnd > ps.PageStart:
		parts = append(parts, fmt.Sprintf("— pp. %d–%d", ps.PageStart, ps.PageEnd))
	case ps.PageStart > 0:
		parts = append(parts, fmt.Sprintf("— p. %d", ps.PageStart))
	}
	if s := strings.TrimSpace(ps.Section); s != "" {
		parts = append(parts, "— "+s)
	}
	return strings.Join(parts, " ")
}

func passageBlock(ps rag.Passage) string {
	return PassageHeader(ps) + "\n" + strings.TrimSpace(ps.Text)
}

// fitTokens shortens the passage's text so that its block takes at most room tokens.
func fitTokens(ps rag.Passage, room int) string {
	text := ps.Text
	for range 8 {
		n := CountTokens(passageBlock(rag.Passage{N: ps.N, Title: ps.Title, Section: ps.Section,
			PageStart: ps.PageStart, PageEnd: ps.PageEnd, Text: text}))
		if n <= room {
			return text
		}
		chars := utf8.RuneCountInString(text)
		next := chars * room / n * 9 / 10
		if next >= chars {
			next = chars - 1
		}
		if next <= 0 {
			return ""
		}
		text = shorten(text, next)
	}
	return text
}

// shorten cuts s to at most limit characters, at a sentence or word end when one is near, and marks the cut.
func shorten(s string, limit int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	cut := string(r[:max(limit-2, 1)])
	if i := strings.LastIndexAny(cut, ".!?。\n"); i > len(cut)*2/3 {
		_, size := utf8.DecodeRuneInString(cut[i:])
		cut = cut[:i+size]
	} else if i := strings.LastIndexAny(cut, " \t"); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut) + " …"
}
