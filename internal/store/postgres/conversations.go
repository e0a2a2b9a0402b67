package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
)

const conversationColumns = `c.id, c.principal, c.title, c.collections, c.document_ids, c.created_at, c.updated_at,
	(SELECT count(*) FROM {S}.conversation_messages m WHERE m.conversation_id = c.id)`

func scanConversation(row pgx.Row) (*rag.Conversation, error) {
	var c rag.Conversation
	var collections, docs []byte
	if err := row.Scan(&c.ID, &c.Principal, &c.Title, &collections, &docs, &c.CreatedAt, &c.UpdatedAt, &c.MessageCount); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(collections, &c.Collections); err != nil {
		return nil, fmt.Errorf("conversation %s: collections: %w", c.ID, err)
	}
	if err := json.Unmarshal(docs, &c.DocumentIDs); err != nil {
		return nil, fmt.Errorf("conversation %s: document_ids: %w", c.ID, err)
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return &c, nil
}

// CreateConversation stores c for c.Principal.
func (s *Store) CreateConversation(ctx context.Context, c *rag.Conversation) error {
	if err := rag.CheckConversation(c); err != nil {
		return err
	}
	now := s.now()
	c.ID, c.CreatedAt, c.UpdatedAt, c.MessageCount, c.Messages = uuid.NewString(), now, now, 0, nil
	collections, docs := c.ScopeJSON()
	_, err := s.pool.Exec(ctx, s.q(`INSERT INTO {S}.conversations (id, principal, title, collections, document_ids, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`), c.ID, c.Principal, c.Title, collections, docs, now)
	return interpretError(errorf(err, "create conversation"))
}

// errorf wraps a non-nil err with what failed.
func errorf(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// ListConversations returns principal's conversations, most recently updated first.
func (s *Store) ListConversations(ctx context.Context, principal string, limit int) ([]*rag.Conversation, error) {
	if limit <= 0 || limit > rag.MaxConversationList {
		limit = rag.MaxConversationList
	}
	var out []*rag.Conversation
	err := s.read(ctx, ownRows(principal), func(db querier) error {
		rows, err := db.Query(ctx, s.q(`SELECT `+conversationColumns+` FROM {S}.conversations c WHERE c.principal = $1
			ORDER BY c.updated_at DESC, c.id DESC LIMIT $2`), principal, limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Conversation, error) { return scanConversation(r) })
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("list conversations: %w", err))
	}
	if out == nil {
		out = []*rag.Conversation{}
	}
	return out, nil
}

// getConversation reads one of principal's conversations, locking it for the transaction when lock is set.
func (s *Store) getConversation(ctx context.Context, tx pgx.Tx, principal, id string, lock bool) (*rag.Conversation, error) {
	if lock {
		var got string
		err := tx.QueryRow(ctx, s.q(`SELECT id FROM {S}.conversations WHERE id = $1 AND principal = $2 FOR UPDATE`), id, principal).Scan(&got)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("conversation %q: %w", id, rag.ErrNotFound)
		}
		if err != nil {
			return nil, err
		}
	}
	c, err := scanConversation(tx.QueryRow(ctx, s.q(`SELECT `+conversationColumns+` FROM {S}.conversations c
		WHERE c.id = $1 AND c.principal = $2`), id, principal))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("conversation %q: %w", id, rag.ErrNotFound)
	}
	return c, err
}

// GetConversation returns one of principal's conversations with its messages.
func (s *Store) GetConversation(ctx context.Context, principal, id string) (*rag.Conversation, error) {
	var c *rag.Conversation
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := s.becomeReader(ctx, tx, ownRows(principal)); err != nil {
			return err
		}
		var err error
		if c, err = s.getConversation(ctx, tx, principal, id, false); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, s.q(`SELECT id, seq, role, content, not_found, stopped, sources, passages, search_info,
			details, created_at FROM {S}.conversation_messages WHERE conversation_id = $1 ORDER BY seq`), id)
		if err != nil {
			return err
		}
		c.Messages, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*rag.Message, error) {
			var m rag.Message
			var sources, passages, info, details []byte
			if err := r.Scan(&m.ID, &m.Seq, &m.Role, &m.Content, &m.NotFound, &m.Stopped, &sources, &passages, &info, &details,
				&m.CreatedAt); err != nil {
				return nil, err
			}
			m.Sources, m.Passages, m.SearchInfo, m.Details, m.CreatedAt = sources, passages, info, details, m.CreatedAt.UTC()
			return &m, nil
		})
		if c.Messages == nil {
			c.Messages = []*rag.Message{}
		}
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("get conversation: %w", err))
	}
	return c, nil
}

// UpdateConversation renames one of principal's conversations or changes its scope.
func (s *Store) UpdateConversation(ctx context.Context, principal, id string, u rag.ConversationUpdate) (*rag.Conversation, error) {
	var c *rag.Conversation
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if c, err = s.getConversation(ctx, tx, principal, id, true); err != nil {
			return err
		}
		if err := u.Apply(c); err != nil {
			return err
		}
		c.UpdatedAt = s.now()
		collections, docs := c.ScopeJSON()
		_, err = tx.Exec(ctx, s.q(`UPDATE {S}.conversations SET title = $1, collections = $2, document_ids = $3, updated_at = $4
			WHERE id = $5`), c.Title, collections, docs, c.UpdatedAt, id)
		return err
	})
	if err != nil {
		return nil, interpretError(fmt.Errorf("update conversation: %w", err))
	}
	return c, nil
}

// DeleteConversation removes one of principal's conversations and its messages.
func (s *Store) DeleteConversation(ctx context.Context, principal, id string) error {
	tag, err := s.pool.Exec(ctx, s.q(`DELETE FROM {S}.conversations WHERE id = $1 AND principal = $2`), id, principal)
	if err != nil {
		return interpretError(fmt.Errorf("delete conversation: %w", err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("conversation %q: %w", id, rag.ErrNotFound)
	}
	return nil
}

// AppendMessages adds msgs at the end of one of principal's conversations, first removing replaceFrom and
// the messages after it when replaceFrom is set.
func (s *Store) AppendMessages(ctx context.Context, principal, id, replaceFrom string, msgs []*rag.Message) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		c, err := s.getConversation(ctx, tx, principal, id, true)
		if err != nil {
			return err
		}
		if replaceFrom != "" {
			var seq int
			err := tx.QueryRow(ctx, s.q(`SELECT seq FROM {S}.conversation_messages WHERE id = $1 AND conversation_id = $2`),
				replaceFrom, id).Scan(&seq)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("message %q of conversation %q: %w", replaceFrom, id, rag.ErrNotFound)
			}
			if err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, s.q(`DELETE FROM {S}.conversation_messages WHERE conversation_id = $1 AND seq >= $2`), id, seq)
			if err != nil {
				return err
			}
			c.MessageCount -= int(tag.RowsAffected())
		}
		if err := rag.CheckMessages(msgs, c.MessageCount+len(msgs)); err != nil {
			return err
		}
		var next int
		if err := tx.QueryRow(ctx, s.q(`SELECT coalesce(max(seq), 0) + 1 FROM {S}.conversation_messages WHERE conversation_id = $1`),
			id).Scan(&next); err != nil {
			return err
		}
		now := s.now()
		for i, m := range msgs {
			m.ID, m.Seq, m.CreatedAt = uuid.NewString(), next+i, now
			if _, err := tx.Exec(ctx, s.q(`INSERT INTO {S}.conversation_messages (id, conversation_id, seq, role, content,
				not_found, stopped, sources, passages, search_info, details, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`),
				m.ID, id, m.Seq, string(m.Role), m.Content, m.NotFound, m.Stopped, rag.NullJSON(m.Sources), rag.NullJSON(m.Passages),
				rag.NullJSON(m.SearchInfo), rag.NullJSON(m.Details), now); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, s.q(`UPDATE {S}.conversations SET updated_at = $1 WHERE id = $2`), now, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("append messages: %w", err)
	}
	return nil
}
