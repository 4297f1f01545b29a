-- Reports that cannot flood the moderators: a report stays open until a moderator closes it or suspends its subject;
-- a student has one open report per subject (reporting it again answers the open one), and files a bounded number a
-- day (REPORTS_PER_DAY), counted from their own reports.
ALTER TABLE reports ADD COLUMN closed_at timestamptz;

-- Repeats filed before this rule: the newest of each stays open.
UPDATE reports AS older SET closed_at = now()
WHERE EXISTS (
    SELECT 1 FROM reports AS newer
    WHERE newer.reporter_id = older.reporter_id
        AND newer.user_id IS NOT DISTINCT FROM older.user_id
        AND newer.listing_id IS NOT DISTINCT FROM older.listing_id
        AND (newer.created_at, newer.id) > (older.created_at, older.id)
);

CREATE UNIQUE INDEX reports_open_once ON reports (reporter_id, user_id, listing_id) NULLS NOT DISTINCT
    WHERE closed_at IS NULL;
CREATE INDEX reports_by_reporter ON reports (reporter_id, created_at);
