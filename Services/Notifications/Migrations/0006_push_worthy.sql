-- What stops a push about a person: a block either way between them and the recipient (its latest state, by version),
-- and their suspension.
CREATE TABLE blocks (
    blocker_id uuid NOT NULL,
    blocked_id uuid NOT NULL,
    is_blocked boolean NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (blocker_id, blocked_id)
);
CREATE INDEX blocks_blocked ON blocks (blocked_id);
CREATE TABLE suspended_users (
    user_id uuid PRIMARY KEY,
    suspended_at timestamptz NOT NULL DEFAULT now()
);
-- Only what a person is told of waits for a push: a message, or an entry with a notice. The rest stays in the feed.
DELETE FROM feed_awaiting_push a USING feed f
WHERE f.user_id = a.user_id AND f.seq = a.seq AND NOT (f.type = 'message.sent' OR f.data ? 'notice');
