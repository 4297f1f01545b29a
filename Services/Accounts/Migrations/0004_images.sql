-- Whose each image is, learned from media's events: a person's photo must be their own upload.
CREATE TABLE images (
    id uuid PRIMARY KEY,
    owner_id uuid NOT NULL,
    is_deleted boolean NOT NULL,
    version bigint NOT NULL
);
