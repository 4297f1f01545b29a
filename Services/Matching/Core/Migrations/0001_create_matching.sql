-- Great-circle distance in meters; matching compares a handful of candidate runs, so no spatial index is needed.
CREATE FUNCTION distance_meters(lat1 double precision, lon1 double precision, lat2 double precision, lon2 double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT 2 * 6371008.8 * asin(sqrt(
        power(sin(radians(lat2 - lat1) / 2), 2)
        + cos(radians(lat1)) * cos(radians(lat2)) * power(sin(radians(lon2 - lon1) / 2), 2)))
$$;

-- Read models, kept from places' and accounts' events.
CREATE TABLE places (
    id uuid PRIMARY KEY,
    campus text NOT NULL,
    name text NOT NULL,
    kind text NOT NULL,
    latitude double precision NOT NULL,
    longitude double precision NOT NULL,
    is_retired boolean NOT NULL DEFAULT false,
    version bigint NOT NULL
);

CREATE TABLE users (
    id uuid PRIMARY KEY,
    campus text NOT NULL,
    name text NOT NULL,
    version bigint NOT NULL
);

-- Offer windows, run windows and order lifetimes: worked by every replica's scheduler with SKIP LOCKED.
CREATE TABLE timers (
    id bigserial PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('offer', 'run', 'order')),
    target_id uuid NOT NULL,
    due_at timestamptz NOT NULL,
    done_at timestamptz
);

CREATE INDEX timers_due ON timers (due_at) WHERE done_at IS NULL;
