-- Questions about a listing before agreeing to it ("would you take two Pocky packs?"): a conversation between the
-- asker and the owner, one per asker and listing while it is open. It closes when the listing goes to someone else,
-- is withdrawn, or a block falls between them; when the asker agrees, the exchange takes the question's id, so that
-- the swap goes on in the same conversation.
CREATE TABLE exchange_questions (
    id uuid PRIMARY KEY,
    listing_id uuid NOT NULL REFERENCES exchange_listings (id),
    campus text NOT NULL,
    asker_id uuid NOT NULL,
    owner_id uuid NOT NULL,
    status text NOT NULL CHECK (status IN ('open', 'agreed', 'closed')),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX exchange_questions_one_open ON exchange_questions (listing_id, asker_id) WHERE status = 'open';
CREATE INDEX exchange_questions_asker ON exchange_questions (asker_id) WHERE status = 'open';
CREATE INDEX exchange_questions_owner ON exchange_questions (owner_id) WHERE status = 'open';
