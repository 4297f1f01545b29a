CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;

CREATE TABLE places (
    id uuid PRIMARY KEY,
    -- The OpenStreetMap object, `node/123` or `way/456`: the same object keeps the same id across imports.
    source_key text NOT NULL UNIQUE,
    campus text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('restaurant', 'building')),
    subtype text,
    cuisine text,
    name text NOT NULL,
    street text,
    housenumber text,
    postcode text,
    city text,
    opening_hours text,
    location geography(Point, 4326) NOT NULL,
    outline geography(Geometry, 4326),
    -- Lower-cased, accent-free text the search matches: name and address, and the name alone.
    search_text text NOT NULL,
    name_key text NOT NULL,
    content_hash text NOT NULL,
    version bigint NOT NULL DEFAULT 1,
    retired_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX places_location ON places USING gist (location) WHERE retired_at IS NULL;
CREATE INDEX places_search_text ON places USING gin (search_text gin_trgm_ops) WHERE retired_at IS NULL;
CREATE INDEX places_name_prefix ON places (campus, name_key text_pattern_ops) WHERE retired_at IS NULL;
CREATE INDEX places_campus ON places (campus) WHERE retired_at IS NULL;
