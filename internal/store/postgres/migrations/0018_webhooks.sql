-- Webhooks (docs/integrations.md "Webhooks"): URLs a collection's events are POSTed to. events is a JSON
-- array of event names; secret is the HMAC key, sealed with the data key (secret_key names it, '' in the
-- clear). webhook_deliveries is the delivery log: one row per attempt, the newest kept per webhook.
CREATE TABLE {S}.webhooks (
    id             text PRIMARY KEY,
    collection_id  text NOT NULL REFERENCES {S}.collections (id) ON DELETE CASCADE,
    url            text NOT NULL,
    events         jsonb NOT NULL DEFAULT '[]',
    description    text NOT NULL DEFAULT '',
    secret         bytea NOT NULL,
    secret_key     text NOT NULL DEFAULT '',
    owner          text NOT NULL,
    created_at     timestamptz NOT NULL
);
CREATE INDEX webhooks_collection_idx ON {S}.webhooks (collection_id, created_at);
CREATE TABLE {S}.webhook_deliveries (
    id           bigserial PRIMARY KEY,
    webhook_id   text NOT NULL REFERENCES {S}.webhooks (id) ON DELETE CASCADE,
    event_id     text NOT NULL,
    event        text NOT NULL,
    attempt      integer NOT NULL,
    status_code  integer NOT NULL DEFAULT 0,
    error        text NOT NULL DEFAULT '',
    duration_ms  bigint NOT NULL DEFAULT 0,
    outcome      text NOT NULL,
    created_at   timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_webhook_idx ON {S}.webhook_deliveries (webhook_id, id);
