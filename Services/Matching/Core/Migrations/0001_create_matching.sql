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

CREATE TABLE runs (
    id uuid PRIMARY KEY,
    deliverer_id uuid NOT NULL,
    deliverer_name text NOT NULL,
    campus text NOT NULL,
    restaurant_id uuid NOT NULL REFERENCES places (id),
    destination_id uuid NOT NULL REFERENCES places (id),
    capacity integer NOT NULL CHECK (capacity BETWEEN 1 AND 4),
    -- Accepted, not yet finished orders: never more than the capacity.
    held integer NOT NULL DEFAULT 0 CHECK (held >= 0 AND held <= capacity),
    status text NOT NULL,
    closes_at timestamptz NOT NULL,
    version bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX runs_open_at_restaurant ON runs (restaurant_id) WHERE status = 'open';
CREATE UNIQUE INDEX runs_one_open_per_deliverer ON runs (deliverer_id) WHERE status = 'open';

CREATE TABLE orders (
    id uuid PRIMARY KEY,
    orderer_id uuid NOT NULL,
    orderer_name text NOT NULL,
    campus text NOT NULL,
    restaurant_id uuid NOT NULL REFERENCES places (id),
    destination_id uuid NOT NULL REFERENCES places (id),
    items text NOT NULL,
    requested_run_id uuid REFERENCES runs (id),
    status text NOT NULL,
    expires_at timestamptz NOT NULL,
    version bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX orders_waiting_at_restaurant ON orders (restaurant_id, created_at) WHERE status = 'waiting';

CREATE TABLE offers (
    id uuid PRIMARY KEY,
    order_id uuid NOT NULL REFERENCES orders (id),
    run_id uuid NOT NULL REFERENCES runs (id),
    deliverer_id uuid NOT NULL,
    status text NOT NULL,
    expires_at timestamptz NOT NULL,
    version bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX offers_one_pending_per_order ON offers (order_id) WHERE status = 'pending';
CREATE INDEX offers_by_run ON offers (run_id) WHERE status = 'pending';

CREATE TABLE matches (
    id uuid PRIMARY KEY,
    order_id uuid NOT NULL REFERENCES orders (id),
    run_id uuid NOT NULL REFERENCES runs (id),
    campus text NOT NULL,
    orderer_id uuid NOT NULL,
    deliverer_id uuid NOT NULL,
    status text NOT NULL,
    orderer_completed boolean NOT NULL DEFAULT false,
    deliverer_completed boolean NOT NULL DEFAULT false,
    version bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX matches_one_active_per_order ON matches (order_id) WHERE status = 'active';

-- Offer windows, run windows and order lifetimes: worked by every replica's scheduler with SKIP LOCKED.
CREATE TABLE timers (
    id bigserial PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('offer', 'run', 'order')),
    target_id uuid NOT NULL,
    due_at timestamptz NOT NULL,
    done_at timestamptz
);

CREATE INDEX timers_due ON timers (due_at) WHERE done_at IS NULL;
