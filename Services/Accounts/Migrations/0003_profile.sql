-- The person beyond a name: a few lines about oneself and a photo uploaded to media.
ALTER TABLE users ADD COLUMN bio text NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN photo_id uuid;
