-- What media knows of each image: whose it is, its campus, its size and the strong ETag of each variant. The
-- bytes are the image store's (image_blobs while it is PostgreSQL).
CREATE TABLE media (
    id uuid PRIMARY KEY,
    owner_id uuid NOT NULL,
    campus text NOT NULL,
    content_type text NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png', 'image/webp')),
    width integer NOT NULL,
    height integer NOT NULL,
    original_etag text NOT NULL,
    large_etag text NOT NULL,
    small_etag text NOT NULL,
    -- The client's Idempotency-Key: a retried upload answers with the first one's image.
    idempotency_key text,
    created_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
);

CREATE UNIQUE INDEX media_idempotency ON media (owner_id, idempotency_key);

CREATE TABLE image_blobs (
    media_id uuid NOT NULL,
    variant text NOT NULL CHECK (variant IN ('original', 'large', 'small')),
    bytes bytea NOT NULL,
    PRIMARY KEY (media_id, variant)
);
