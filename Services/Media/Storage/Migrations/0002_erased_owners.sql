-- People who deleted their account: their images are gone, and they upload none again (their access token outlives
-- the deletion by minutes).
CREATE TABLE erased_owners (
    user_id uuid PRIMARY KEY,
    erased_at timestamptz NOT NULL DEFAULT now()
);
