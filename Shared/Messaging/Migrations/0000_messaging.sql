CREATE TABLE outbox (
    seq bigserial PRIMARY KEY,
    id uuid NOT NULL UNIQUE,
    type text NOT NULL,
    schema_version integer NOT NULL,
    aggregate_id uuid NOT NULL,
    version bigint NOT NULL,
    payload jsonb NOT NULL,
    traceparent text,
    created_at timestamptz NOT NULL DEFAULT now(),
    sent_at timestamptz
);

CREATE INDEX outbox_unsent ON outbox (seq) WHERE sent_at IS NULL;

CREATE TABLE inbox (
    message_id uuid PRIMARY KEY,
    received_at timestamptz NOT NULL DEFAULT now()
);
