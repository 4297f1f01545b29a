CREATE TABLE duets (
    id uuid PRIMARY KEY,
    campus text NOT NULL,
    singer_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    song text NOT NULL,
    ended boolean NOT NULL DEFAULT false
);
