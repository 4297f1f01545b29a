-- The delivery flow's runs, orders, offers and matches. NB: databases made before the flow had a folder of its own
-- got these tables from matching's 0001_create_matching, which recorded that name; there this file finds them all and
-- changes nothing, and the delivery migrations after it (recorded by the same names as before) are not run again.

CREATE TABLE IF NOT EXISTS runs (
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

CREATE INDEX IF NOT EXISTS runs_open_at_restaurant ON runs (restaurant_id) WHERE status = 'open';
CREATE UNIQUE INDEX IF NOT EXISTS runs_one_open_per_deliverer ON runs (deliverer_id) WHERE status = 'open';

CREATE TABLE IF NOT EXISTS orders (
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

CREATE INDEX IF NOT EXISTS orders_waiting_at_restaurant ON orders (restaurant_id, created_at) WHERE status = 'waiting';

CREATE TABLE IF NOT EXISTS offers (
    id uuid PRIMARY KEY,
    order_id uuid NOT NULL REFERENCES orders (id),
    run_id uuid NOT NULL REFERENCES runs (id),
    deliverer_id uuid NOT NULL,
    status text NOT NULL,
    expires_at timestamptz NOT NULL,
    version bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX IF NOT EXISTS offers_one_pending_per_order ON offers (order_id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS offers_by_run ON offers (run_id) WHERE status = 'pending';

CREATE TABLE IF NOT EXISTS matches (
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

CREATE UNIQUE INDEX IF NOT EXISTS matches_one_active_per_order ON matches (order_id) WHERE status = 'active';
