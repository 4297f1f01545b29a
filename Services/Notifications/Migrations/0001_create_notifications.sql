-- Each user's feed: seq grows by one per user with no gap, allocated under the row lock of feed_heads.
CREATE TABLE feed_heads (
    user_id uuid PRIMARY KEY,
    last_seq bigint NOT NULL
);

CREATE TABLE feed (
    user_id uuid NOT NULL,
    seq bigint NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- A socket sent it; otherwise a push goes out, once.
    delivered_at timestamptz,
    pushed_at timestamptz,
    PRIMARY KEY (user_id, seq)
);

CREATE INDEX feed_awaiting_push ON feed (created_at) WHERE delivered_at IS NULL AND pushed_at IS NULL;

-- Who may send typing hints to whom, from chat's events.
CREATE TABLE conversations (
    id uuid PRIMARY KEY,
    member_ids uuid[] NOT NULL,
    is_open boolean NOT NULL
);

CREATE TABLE devices (
    id uuid PRIMARY KEY,
    user_id uuid NOT NULL,
    token text NOT NULL,
    platform text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, token)
);
