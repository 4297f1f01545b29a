CREATE TABLE applied (
    event_id uuid NOT NULL,
    sequence integer NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
