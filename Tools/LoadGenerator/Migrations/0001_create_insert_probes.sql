-- The table of the single-row INSERT measurement: a row the size of a small outbox entry.
CREATE TABLE insert_probes (
    id uuid PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now(),
    body text NOT NULL
);
