-- People who deleted their account: their feed is gone, and nothing is appended to it again (an event of before
-- the deletion may arrive after it).
CREATE TABLE erased_users (
    user_id uuid PRIMARY KEY,
    erased_at timestamptz NOT NULL DEFAULT now()
);
