CREATE TABLE things (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    note text,
    happened_at timestamptz,
    payload bytea,
    flag boolean,
    amount bigint
);
