package rag

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of conversations, checked by the stores (CodeInvalid beyond them, 400 invalid_request in the API).
const (
	MaxConversationTitle       = 200  // characters of a title
	MaxConversationMessages    = 200  // messages of one conversation (100 questions and their answers)
	MaxConversationCollections = 20   // collections a conversation is limited to
	MaxConversationDocuments   = 100  // documents a conversation is limited to
	MaxConversationList        = 1000 // conversations one ListConversations returns
	// MaxMessageContent bounds a message's text: a question is cut to MaxQuestionChars when asked, an answer
	// is a generator's output.
	MaxMessageContent = 100_000
)

// Conversation is one principal's chat: its title, the collections and documents its questions are limited
// to (none: everything the principal can read) and, when read with GetConversation, its messages in order.
type Conversation struct {
	ID        string `json:"id"`
	Principal string `json:"-"`
	Title     string `json:"title"`
	// Collections and DocumentIDs are the scope the chat UI remembers for the conversation.
	Collections  []string   `json:"collections"`
	DocumentIDs  []string   `json:"document_ids"`
	MessageCount int        `json:"message_count"`
	Messages     []*Message `json:"messages,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// Message is one turn of a conversation. An assistant message keeps what the answer showed: its sources,
// its retrieved passages, the search_info of the debug panel and the rest of its details, as the chat API
// returned them (JSON).
type Message struct {
	ID      string `json:"id"`
	Seq     int    `json:"seq"`
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// NotFound: the answer was the not-covered reply. Stopped: the answer was stopped while it streamed
	// (Content is what had arrived).
	NotFound   bool            `json:"not_found"`
	Stopped    bool            `json:"stopped"`
	Sources    json.RawMessage `json:"sources,omitempty"`
	Passages   json.RawMessage `json:"passages,omitempty"`
	SearchInfo json.RawMessage `json:"search_info,omitempty"`
	// Details are the rest of what the answer showed: its citation check, weakly supported sentences,
	// whether the question was truncated, its language and generator.
	Details json.RawMessage `json:"details,omitempty"`
	// Withheld: read back by a principal who can no longer read some of the documents of its sources or
	// passages, which were left out, and its Content (which may quote them) replaced by WithheldAnswer.
	Withheld  bool      `json:"withheld,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// ConversationUpdate changes a conversation; nil fields are kept.
type ConversationUpdate struct {
	Title       *string   `json:"title"`
	Collections *[]string `json:"collections"`
	DocumentIDs *[]string `json:"document_ids"`
}

// ConversationStore keeps conversations per principal. Both stores implement it and pass
// internal/store/storetest. Every method is scoped to principal: another principal's conversation is
// ErrNotFound, as if it did not exist. Errors: ErrNotFound, CodeInvalid, CodeDBError.
type ConversationStore interface {
	// CreateConversation stores c (no messages) for c.Principal; it assigns ID and timestamps. CodeInvalid
	// when the principal is missing or a limit is exceeded.
	CreateConversation(ctx context.Context, c *Conversation) error
	// ListConversations returns principal's conversations, most recently updated first, without messages.
	ListConversations(ctx context.Context, principal string, limit int) ([]*Conversation, error)
	// GetConversation returns one conversation with its messages in order.
	GetConversation(ctx context.Context, principal, id string) (*Conversation, error)
	// UpdateConversation renames a conversation or changes its scope.
	UpdateConversation(ctx context.Context, principal, id string, u ConversationUpdate) (*Conversation, error)
	// DeleteConversation removes a conversation and its messages.
	DeleteConversation(ctx context.Context, principal, id string) error
	// AppendMessages adds msgs at the end of a conversation (assigning ID, Seq and CreatedAt). When
	// replaceFrom names one of its messages, that message and every later one are removed first (a
	// regenerated answer, an edited question). CodeInvalid when the conversation would hold more than
	// MaxConversationMessages, or a message has no known role; ErrNotFound for an unknown replaceFrom.
	AppendMessages(ctx context.Context, principal, id, replaceFrom string, msgs []*Message) error
}

// CheckConversation checks c's title and scope and normalises them (trimmed title, empty lists not nil).
func CheckConversation(c *Conversation) error {
	if c.Principal == "" {
		return Errorf(CodeInvalid, "a conversation needs a principal")
	}
	c.Title = strings.TrimSpace(c.Title)
	if n := utf8.RuneCountInString(c.Title); n > MaxConversationTitle {
		return Errorf(CodeInvalid, "title: at most %d characters, got %d", MaxConversationTitle, n)
	}
	if len(c.Collections) > MaxConversationCollections {
		return Errorf(CodeInvalid, "collections: at most %d, got %d", MaxConversationCollections, len(c.Collections))
	}
	if len(c.DocumentIDs) > MaxConversationDocuments {
		return Errorf(CodeInvalid, "document_ids: at most %d, got %d", MaxConversationDocuments, len(c.DocumentIDs))
	}
	if c.Collections == nil {
		c.Collections = []string{}
	}
	if c.DocumentIDs == nil {
		c.DocumentIDs = []string{}
	}
	return nil
}

// Apply applies u to c and checks the result (CheckConversation).
func (u ConversationUpdate) Apply(c *Conversation) error {
	if u.Title != nil {
		c.Title = *u.Title
	}
	if u.Collections != nil {
		c.Collections = *u.Collections
	}
	if u.DocumentIDs != nil {
		c.DocumentIDs = *u.DocumentIDs
	}
	return CheckConversation(c)
}

// CheckMessages checks messages about to be added to a conversation that will then hold total messages.
func CheckMessages(msgs []*Message, total int) error {
	if total > MaxConversationMessages {
		return Errorf(CodeInvalid, "a conversation holds at most %d messages; start a new one", MaxConversationMessages)
	}
	for _, m := range msgs {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return Errorf(CodeInvalid, "message role must be %q or %q, got %q", RoleUser, RoleAssistant, m.Role)
		}
		if n := utf8.RuneCountInString(m.Content); n > MaxMessageContent {
			return Errorf(CodeInvalid, "message: at most %d characters, got %d", MaxMessageContent, n)
		}
	}
	return nil
}

// ScopeJSON returns c's collections and documents as the JSON lists the stores keep.
func (c *Conversation) ScopeJSON() (collections, documents string) {
	a, _ := json.Marshal(c.Collections)
	b, _ := json.Marshal(c.DocumentIDs)
	return string(a), string(b)
}

// NullJSON is v as a store keeps a JSON value that may be absent: nil (NULL) when empty.
func NullJSON(v json.RawMessage) any {
	if len(v) == 0 {
		return nil
	}
	return string(v)
}

// ConversationTitle is the default title of a conversation: the start of its first question, on one line.
func ConversationTitle(question string) string {
	t := strings.Join(strings.Fields(question), " ")
	if utf8.RuneCountInString(t) <= 60 {
		return t
	}
	r := []rune(t)
	return strings.TrimSpace(string(r[:60])) + "…"
}
