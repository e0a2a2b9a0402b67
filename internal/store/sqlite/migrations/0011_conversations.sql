-- Conversations (docs/api.md "Conversations"): a principal's chats, kept on the server so that they survive a
-- reload and follow the principal between browsers. collections and document_ids are the scope the chat UI
-- remembers (JSON lists); an assistant message keeps its sources, passages, search_info and other details as
-- the chat API returned them (JSON). Deleting a conversation deletes its messages.
CREATE TABLE conversations (
    id            TEXT PRIMARY KEY,
    principal     TEXT NOT NULL,
    title         TEXT NOT NULL DEFAULT '',
    collections   TEXT NOT NULL DEFAULT '[]',
    document_ids  TEXT NOT NULL DEFAULT '[]',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX conversations_principal ON conversations (principal, updated_at);
CREATE TABLE conversation_messages (
    id               TEXT PRIMARY KEY,
    conversation_id  TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL,
    role             TEXT NOT NULL,
    content          TEXT NOT NULL,
    not_found        INTEGER NOT NULL DEFAULT 0,
    stopped          INTEGER NOT NULL DEFAULT 0,
    sources          TEXT,
    passages         TEXT,
    search_info      TEXT,
    details          TEXT,
    created_at       INTEGER NOT NULL,
    UNIQUE (conversation_id, seq)
);
