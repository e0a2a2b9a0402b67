package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ragd/ragd/internal/rag"
)

const conversationCols = `c.id, c.principal, c.title, c.collections, c.document_ids, c.created_at, c.updated_at,
	(SELECT count(*) FROM conversation_messages m WHERE m.conversation_id = c.id)`

func scanConversation(row interface{ Scan(...any) error }) (*rag.Conversation, error) {
	var c rag.Conversation
	var collections, docs string
	var created, updated int64
	if err := row.Scan(&c.ID, &c.Principal, &c.Title, &collections, &docs, &created, &updated, &c.MessageCount); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(collections), &c.Collections); err != nil {
		return nil, fmt.Errorf("conversation %s: collections: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(docs), &c.DocumentIDs); err != nil {
		return nil, fmt.Errorf("conversation %s: document_ids: %w", c.ID, err)
	}
	c.CreatedAt, c.UpdatedAt = fromMicro(created), fromMicro(updated)
	return &c, nil
}

// CreateConversation stores c for c.Principal.
func (s *Store) CreateConversation(ctx context.Context, c *rag.Conversation) error {
	if err := rag.CheckConversation(c); err != nil {
		return err
	}
	now := s.now()
	c.ID, c.CreatedAt, c.UpdatedAt, c.MessageCount, c.Messages = newID(), now, now, 0, nil
	collections, docs := c.ScopeJSON()
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO conversations (id, principal, title, collections, document_ids, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, c.ID, c.Principal, c.Title, collections, docs, now.UnixMicro(), now.UnixMicro())
		return err
	})
	return dbError(err, "create conversation")
}

// ListConversations returns principal's conversations, most recently updated first.
func (s *Store) ListConversations(ctx context.Context, principal string, limit int) ([]*rag.Conversation, error) {
	if limit <= 0 || limit > rag.MaxConversationList {
		limit = rag.MaxConversationList
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+conversationCols+` FROM conversations c WHERE c.principal = ?
		ORDER BY c.updated_at DESC, c.id DESC LIMIT ?`, principal, limit)
	if err != nil {
		return nil, dbError(err, "list conversations")
	}
	defer rows.Close()
	out := []*rag.Conversation{}
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return nil, dbError(err, "list conversations")
		}
		out = append(out, c)
	}
	return out, dbError(rows.Err(), "list conversations")
}

func getConversation(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, principal, id string) (*rag.Conversation, error) {
	c, err := scanConversation(q.QueryRowContext(ctx, `SELECT `+conversationCols+` FROM conversations c
		WHERE c.id = ? AND c.principal = ?`, id, principal))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("conversation %q: %w", id, rag.ErrNotFound)
	}
	return c, err
}

// GetConversation returns one of principal's conversations with its messages.
func (s *Store) GetConversation(ctx context.Context, principal, id string) (*rag.Conversation, error) {
	var c *rag.Conversation
	err := s.read(ctx, func(tx *sql.Tx) error {
		var err error
		if c, err = getConversation(ctx, tx, principal, id); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, seq, role, content, not_found, stopped, sources, passages, search_info,
			details, created_at FROM conversation_messages WHERE conversation_id = ? ORDER BY seq`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		c.Messages = []*rag.Message{}
		for rows.Next() {
			var m rag.Message
			var sources, passages, info, details sql.NullString
			var created int64
			if err := rows.Scan(&m.ID, &m.Seq, &m.Role, &m.Content, &m.NotFound, &m.Stopped, &sources, &passages, &info, &details,
				&created); err != nil {
				return err
			}
			m.Sources, m.Passages, m.SearchInfo, m.Details = rawOf(sources), rawOf(passages), rawOf(info), rawOf(details)
			m.CreatedAt = fromMicro(created)
			c.Messages = append(c.Messages, &m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, dbError(err, "get conversation")
	}
	return c, nil
}

func rawOf(v sql.NullString) json.RawMessage {
	if !v.Valid {
		return nil
	}
	return json.RawMessage(v.String)
}

// UpdateConversation renames one of principal's conversations or changes its scope.
func (s *Store) UpdateConversation(ctx context.Context, principal, id string, u rag.ConversationUpdate) (*rag.Conversation, error) {
	var c *rag.Conversation
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		if c, err = getConversation(ctx, tx, principal, id); err != nil {
			return err
		}
		if err := u.Apply(c); err != nil {
			return err
		}
		c.UpdatedAt = s.now()
		collections, docs := c.ScopeJSON()
		_, err = tx.ExecContext(ctx, `UPDATE conversations SET title = ?, collections = ?, document_ids = ?, updated_at = ?
			WHERE id = ?`, c.Title, collections, docs, c.UpdatedAt.UnixMicro(), id)
		return err
	})
	if err != nil {
		return nil, dbError(err, "update conversation")
	}
	return c, nil
}

// DeleteConversation removes one of principal's conversations and its messages.
func (s *Store) DeleteConversation(ctx context.Context, principal, id string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM conversations WHERE id = ? AND principal = ?`, id, principal)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("conversation %q: %w", id, rag.ErrNotFound)
		}
		return nil
	})
	return dbError(err, "delete conversation")
}

// AppendMessages adds msgs at the end of one of principal's conversations, first removing replaceFrom and
// the messages after it when replaceFrom is set.
func (s *Store) AppendMessages(ctx context.Context, principal, id, replaceFrom string, msgs []*rag.Message) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		c, err := getConversation(ctx, tx, principal, id)
		if err != nil {
			return err
		}
		if replaceFrom != "" {
			var seq int
			err := tx.QueryRowContext(ctx, `SELECT seq FROM conversation_messages WHERE id = ? AND conversation_id = ?`,
				replaceFrom, id).Scan(&seq)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("message %q of conversation %q: %w", replaceFrom, id, rag.ErrNotFound)
			}
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `DELETE FROM conversation_messages WHERE conversation_id = ? AND seq >= ?`, id, seq)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			c.MessageCount -= int(n)
		}
		if err := rag.CheckMessages(msgs, c.MessageCount+len(msgs)); err != nil {
			return err
		}
		var next int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM conversation_messages WHERE conversation_id = ?`,
			id).Scan(&next); err != nil {
			return err
		}
		now := s.now()
		for i, m := range msgs {
			m.ID, m.Seq, m.CreatedAt = newID(), next+i, now
			if _, err := tx.ExecContext(ctx, `INSERT INTO conversation_messages (id, conversation_id, seq, role, content,
				not_found, stopped, sources, passages, search_info, details, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				m.ID, id, m.Seq, string(m.Role), m.Content, m.NotFound, m.Stopped, rag.NullJSON(m.Sources), rag.NullJSON(m.Passages),
				rag.NullJSON(m.SearchInfo), rag.NullJSON(m.Details), now.UnixMicro()); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE conversations SET updated_at = ? WHERE id = ?`, now.UnixMicro(), id)
		return err
	})
	return dbError(err, "append messages")
}
