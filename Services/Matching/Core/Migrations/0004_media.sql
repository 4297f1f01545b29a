-- Images as media announces them, so that a flow takes a photo id only from its owner.
CREATE TABLE media (
    id uuid PRIMARY KEY,
    owner_id uuid NOT NULL,
    -- Unknown (null) for an image whose deletion arrived before it was stored.
    campus text,
    deleted boolean NOT NULL DEFAULT false,
    version bigint NOT NULL
);
