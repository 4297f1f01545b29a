-- What the relay has still to publish is a table of its own, not a mark on the outbox row. The row's `sent_at` was
-- in the condition of the unsent index, so marking it was never a HOT update: every sent row left a dead version and
-- new entries in both of the outbox's indexes, and a vacuum of the outbox read them whole and wrote up to 29 MB of
-- WAL in one second, holding up every commit behind it. Now the outbox only takes rows (and the hourly prune's
-- deletes), and the relay deletes a row's seq from this small table once the broker confirmed it. Retention counts
-- from when a row was made: the relay sends it within the second.
CREATE TABLE outbox_unsent_seq (seq bigint PRIMARY KEY);
INSERT INTO outbox_unsent_seq SELECT seq FROM outbox WHERE sent_at IS NULL;
DROP INDEX outbox_unsent;
ALTER TABLE outbox_unsent_seq RENAME TO outbox_unsent;
ALTER INDEX outbox_unsent_seq_pkey RENAME TO outbox_unsent_pkey;
ALTER TABLE outbox DROP COLUMN sent_at;
SELECT analyze_from_small_sample('outbox_unsent');
