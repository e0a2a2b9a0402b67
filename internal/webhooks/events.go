package webhooks

import (
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// DocumentEvent is the data of document.ready and document.failed.
type DocumentEvent struct {
	Document EventDocument `json:"document"`
}

// EventDocument is a document as an event shows it: what it is and how its processing ended.
type EventDocument struct {
	ID         string     `json:"id"`
	ExternalID string     `json:"external_id"`
	Title      string     `json:"title"`
	Source     string     `json:"source"`
	MediaType  string     `json:"media_type"`
	Status     rag.Status `json:"status"`
	// Version is the current searchable version (0: none). When a new version of a ready document
	// failed, Status stays ready and Error says which version failed.
	Version     int       `json:"version"`
	ContentHash string    `json:"content_hash"`
	ChunkCount  int       `json:"chunk_count"`
	ErrorCode   rag.Code  `json:"error_code,omitempty"`
	Error       string    `json:"error,omitempty"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// DocumentData is the event data of a settled document.
func DocumentData(d *rag.Document) DocumentEvent {
	return DocumentEvent{Document: EventDocument{ID: d.ID, ExternalID: d.ExternalID, Title: d.Title, Source: d.Source, MediaType: d.MediaType,
		Status: d.Status, Version: d.Version, ContentHash: d.ContentHash, ChunkCount: d.ChunkCount, ErrorCode: d.ErrorCode, Error: d.Error,
		UpdatedAt: d.UpdatedAt}}
}

// AnswerEvent is the data of question.answered.
type AnswerEvent struct {
	Question EventQuestion    `json:"question"`
	Answer   *rag.BoardAnswer `json:"answer"`
}

// EventQuestion is a board question as an event shows it.
type EventQuestion struct {
	ID        string             `json:"id"`
	Title     string             `json:"title"`
	Body      string             `json:"body"`
	Author    string             `json:"author"`
	Status    rag.QuestionStatus `json:"status"`
	CreatedAt time.Time          `json:"created_at"`
}

// AnswerData is the event data of an answer to q.
func AnswerData(q *rag.Question, a *rag.BoardAnswer) AnswerEvent {
	return AnswerEvent{Question: EventQuestion{ID: q.ID, Title: q.Title, Body: q.Body, Author: q.Author, Status: q.Status,
		CreatedAt: q.CreatedAt}, Answer: a}
}
