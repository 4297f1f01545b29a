-- The entries no socket has taken and no push has gone out for are a table of their own, not marks on the feed's
-- rows. The marks were in the condition of the partial index of entries awaiting a push, so setting one was never a
-- HOT update: every entry a socket took left a dead version and a new entry in the feed's primary key, and a vacuum
-- of the feed read them whole and wrote megabytes of WAL in one second, holding up every commit behind it (see
-- Shared/Messaging/Migrations/0000_messaging_unsent.sql for the outbox's like case). Now the feed only takes rows;
-- a socket's delivery and a push (or settling an entry of a user without a device) delete its row here. It holds
-- about one grace period of entries, so the push dispatcher reads it whole rather than through a second index.
CREATE TABLE feed_awaiting_push_entries (
    user_id uuid NOT NULL,
    seq bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, seq)
);
INSERT INTO feed_awaiting_push_entries (user_id, seq, created_at)
SELECT user_id, seq, created_at FROM feed WHERE delivered_at IS NULL AND pushed_at IS NULL;
DROP INDEX feed_awaiting_push;
ALTER TABLE feed DROP COLUMN delivered_at, DROP COLUMN pushed_at;
ALTER TABLE feed_awaiting_push_entries RENAME TO feed_awaiting_push;
ALTER INDEX feed_awaiting_push_entries_pkey RENAME TO feed_awaiting_push_pkey;
