-- Moderation: campus moderators (made with `accounts moderator add EMAIL`), reports of a user or a listing by
-- students, and suspensions: a suspended student cannot log in, their sessions end, and the other services hide
-- everything of theirs from everyone (`user.suspended`).
ALTER TABLE users
    ADD COLUMN is_moderator boolean NOT NULL DEFAULT false,
    ADD COLUMN suspended_at timestamptz,
    ADD COLUMN suspension_reason text;

CREATE TABLE reports (
    id uuid PRIMARY KEY,
    campus text NOT NULL REFERENCES campuses (domain),
    reporter_id uuid NOT NULL REFERENCES users (id),
    user_id uuid REFERENCES users (id),
    listing_id uuid,
    reason text NOT NULL CHECK (reason IN ('spam', 'harassment', 'unsafe', 'fake', 'other')),
    detail text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (user_id IS NOT NULL OR listing_id IS NOT NULL)
);
CREATE INDEX reports_by_campus ON reports (campus, created_at DESC);
