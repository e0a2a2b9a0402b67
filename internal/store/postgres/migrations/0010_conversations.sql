-- Conversations (docs/api.md "Conversations"): a principal's chats, kept on the server so that they survive a
-- reload and follow the principal between browsers. collections and document_ids are the scope the chat UI
-- remembers; an assistant message keeps its sources, passages, search_info and other details as the chat API
-- returned them.
-- Deleting a conversation deletes its messages.
CREATE TABLE {S}.conversations (
    id            text PRIMARY KEY,
    principal     text NOT NULL,
    title         text NOT NULL DEFAULT '',
    collections   jsonb NOT NULL DEFAULT '[]',
    document_ids  jsonb NOT NULL DEFAULT '[]',
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX conversations_principal_idx ON {S}.conversations (principal, updated_at);
CREATE TABLE {S}.conversation_messages (
    id               text PRIMARY KEY,
    conversation_id  text NOT NULL REFERENCES {S}.conversations (id) ON DELETE CASCADE,
    seq              integer NOT NULL,
    role             text NOT NULL,
    content          text NOT NULL,
    not_found        boolean NOT NULL DEFAULT false,
    stopped          boolean NOT NULL DEFAULT false,
    sources          jsonb,
    passages         jsonb,
    search_info      jsonb,
    details          jsonb,
    created_at       timestamptz NOT NULL,
    UNIQUE (conversation_id, seq)
);
