-- The person as flows show them on cards: a photo and a few lines of their own.
ALTER TABLE users ADD COLUMN photo_id uuid;
ALTER TABLE users ADD COLUMN bio text;
