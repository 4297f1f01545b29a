-- When the student deleted their account: the row stays (reports and others' blocks refer to it) but names no one.
ALTER TABLE users ADD COLUMN deleted_at timestamptz;

-- Failed logins are now counted under a digest of the email; the counts under plain addresses go.
DELETE FROM throttle_events WHERE key LIKE 'email:%@%';
