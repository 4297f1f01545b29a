CREATE EXTENSION IF NOT EXISTS postgis;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;

-- Snack Exchange: listings, the exchange the first taker makes of one, and the reviews after it.
CREATE TABLE exchange_listings (
    id uuid PRIMARY KEY,
    owner_id uuid NOT NULL,
    -- The name from the owner's token, for a user whose account events have not arrived yet.
    owner_name text NOT NULL,
    campus text NOT NULL,
    offered text NOT NULL CHECK (char_length(offered) BETWEEN 1 AND 200),
    wanted text[] NOT NULL CHECK (cardinality(wanted) <= 10),
    category text NOT NULL CHECK (category IN ('sweet', 'salty', 'drink', 'healthy', 'other')),
    -- The place the listing was given at, when it was given as a place; its point is copied into location.
    place_id uuid,
    location geography(Point, 4326) NOT NULL,
    photo_id uuid,
    note text,
    status text NOT NULL CHECK (status IN ('active', 'in_progress', 'exchanged', 'withdrawn')),
    -- The words of the offered text and the wanted items, lower case and without accents: what a text search matches.
    -- Compared byte by byte: a search compares each with up to a hundred words, and the locale's rules cost ten times
    -- as much.
    search_words text[] COLLATE "C" NOT NULL,
    version bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Browsing sees active listings only; one's own listings of any status come from the owner index.
CREATE INDEX exchange_listings_location ON exchange_listings USING gist (location) WHERE status = 'active';
CREATE INDEX exchange_listings_search ON exchange_listings USING gin (search_words) WHERE status = 'active';
CREATE INDEX exchange_listings_newest ON exchange_listings (campus, created_at DESC, id DESC) WHERE status = 'active';
CREATE INDEX exchange_listings_owner ON exchange_listings (owner_id, created_at DESC, id DESC);

-- Every word listings have used: a typed word is matched against these few thousand words (the words it begins, or
-- with a typo the words it resembles, by trigrams), and the listings holding the words it matched are found by the
-- array index above. Scoring the likeness of every listing's text instead costs milliseconds per thousand listings
-- that a common word matches.
CREATE TABLE exchange_words (
    word text PRIMARY KEY
);

CREATE INDEX exchange_words_prefix ON exchange_words (word text_pattern_ops);
CREATE INDEX exchange_words_trigrams ON exchange_words USING gin (word gin_trgm_ops);

CREATE TABLE exchanges (
    id uuid PRIMARY KEY,
    listing_id uuid NOT NULL REFERENCES exchange_listings (id),
    campus text NOT NULL,
    owner_id uuid NOT NULL,
    taker_id uuid NOT NULL,
    taker_name text NOT NULL,
    offering text,
    status text NOT NULL CHECK (status IN ('in_progress', 'exchanged', 'cancelled')),
    owner_completed boolean NOT NULL DEFAULT false,
    taker_completed boolean NOT NULL DEFAULT false,
    cancelled_by uuid,
    version bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (owner_id <> taker_id)
);

-- The first to agree holds the listing: at most one exchange of it that was not cancelled.
CREATE UNIQUE INDEX exchanges_one_per_listing ON exchanges (listing_id) WHERE status <> 'cancelled';

-- Each party reviews the other once per exchange.
CREATE TABLE exchange_reviews (
    exchange_id uuid NOT NULL REFERENCES exchanges (id),
    reviewer_id uuid NOT NULL,
    reviewee_id uuid NOT NULL,
    stars integer NOT NULL CHECK (stars BETWEEN 1 AND 5),
    text text,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (exchange_id, reviewer_id)
);

-- A user's reviews summed as they arrive, so that every listing shows its owner's rating without counting.
CREATE TABLE exchange_ratings (
    user_id uuid PRIMARY KEY,
    reviews integer NOT NULL,
    stars bigint NOT NULL
);
