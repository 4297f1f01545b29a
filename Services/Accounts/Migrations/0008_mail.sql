-- Mail waits here until the relay hands it to the mail server, so that a sign-up neither fails nor waits while the
-- server is away: written in the transaction of what it tells, taken by one replica at a time (SKIP LOCKED), tried
-- again with a growing pause, and kept a day once sent or given up on.
CREATE TABLE mail_outbox (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id uuid NOT NULL DEFAULT gen_random_uuid(),
    recipient text NOT NULL,
    subject text NOT NULL,
    body text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error text,
    sent_at timestamptz,
    given_up_at timestamptz
);

CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND given_up_at IS NULL;

-- A code that sets a new password, one at a time per account, like an email's verification code.
CREATE TABLE password_resets (
    user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    code_hash bytea NOT NULL,
    expires_at timestamptz NOT NULL,
    failed_attempts integer NOT NULL DEFAULT 0
);
