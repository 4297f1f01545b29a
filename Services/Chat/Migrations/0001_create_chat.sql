-- Display names, kept from accounts' events.
CREATE TABLE users (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    version bigint NOT NULL
);

-- One conversation per match; its id is the match's id, so a client that heard of the match knows its chat.
CREATE TABLE conversations (
    id uuid PRIMARY KEY,
    campus text NOT NULL,
    orderer_id uuid NOT NULL,
    orderer_name text NOT NULL,
    deliverer_id uuid NOT NULL,
    deliverer_name text NOT NULL,
    status text NOT NULL CHECK (status IN ('open', 'closed')),
    opened_at timestamptz NOT NULL DEFAULT now(),
    closed_at timestamptz,
    -- The version of the match event that last changed it.
    version bigint NOT NULL
);

CREATE INDEX conversations_of_orderer ON conversations (orderer_id) WHERE status = 'open';
CREATE INDEX conversations_of_deliverer ON conversations (deliverer_id) WHERE status = 'open';

CREATE TABLE messages (
    seq bigserial PRIMARY KEY,
    -- The sender's own id for the message: sending it again changes nothing.
    id uuid NOT NULL UNIQUE,
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    sender_id uuid NOT NULL,
    text text NOT NULL,
    sent_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX messages_of_conversation ON messages (conversation_id, seq DESC);

CREATE TABLE read_markers (
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    user_id uuid NOT NULL,
    last_read_seq bigint NOT NULL,
    PRIMARY KEY (conversation_id, user_id)
);
