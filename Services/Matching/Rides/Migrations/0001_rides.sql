CREATE EXTENSION IF NOT EXISTS postgis;

-- My Driver: drivers with their car, each driver's latest position, ride requests and the offers made of them.
CREATE TABLE ride_drivers (
    user_id uuid PRIMARY KEY,
    campus text NOT NULL,
    -- The name from the driver's token, for a user whose account events have not arrived yet.
    name text NOT NULL,
    car text NOT NULL CHECK (char_length(car) BETWEEN 1 AND 80),
    seats integer NOT NULL CHECK (seats BETWEEN 1 AND 8),
    version bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Each driver's latest position, overwritten by the next one: no history is kept. A driver is online while it is
-- recent (a minute by default); going offline deletes it. The rider of the driver's ride under way reads it with the
-- ride.
CREATE TABLE ride_driver_positions (
    driver_id uuid PRIMARY KEY REFERENCES ride_drivers (user_id),
    campus text NOT NULL,
    location geography(Point, 4326) NOT NULL,
    reported_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX ride_driver_positions_location ON ride_driver_positions USING gist (location);

CREATE TABLE rides (
    id uuid PRIMARY KEY,
    campus text NOT NULL,
    rider_id uuid NOT NULL,
    rider_name text NOT NULL,
    pickup geography(Point, 4326) NOT NULL,
    -- The place a spot was given as, when it was given as one; its point is copied into the spot.
    pickup_place_id uuid,
    dropoff geography(Point, 4326),
    dropoff_place_id uuid,
    note text CHECK (char_length(note) <= 500),
    status text NOT NULL CHECK (status IN ('open', 'accepted', 'arrived', 'started', 'completed', 'cancelled', 'expired')),
    -- The driver who accepted (kept when the rider cancels, cleared when the driver gives the ride up), with the name
    -- and car they had then.
    driver_id uuid,
    driver_name text,
    car text,
    seats integer,
    -- The match (and chat) of the rider and the driver who accepted; a new one for each acceptance.
    match_id uuid,
    -- The last round of offers made, and when the next one is due while nobody accepts (nil: no more rounds).
    offer_round integer NOT NULL DEFAULT 0,
    next_offer_at timestamptz,
    expires_at timestamptz NOT NULL,
    accepted_at timestamptz,
    arrived_at timestamptz,
    started_at timestamptz,
    finished_at timestamptz,
    version bigint NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (status NOT IN ('accepted', 'arrived', 'started', 'completed') OR driver_id IS NOT NULL),
    CHECK (driver_id <> rider_id)
);

-- One request per rider until it is over; one ride under way per driver. Accepting relies on both, across replicas.
CREATE UNIQUE INDEX rides_one_unfinished_per_rider ON rides (rider_id)
    WHERE status IN ('open', 'accepted', 'arrived', 'started');
CREATE UNIQUE INDEX rides_one_underway_per_driver ON rides (driver_id) WHERE status IN ('accepted', 'arrived', 'started');
CREATE INDEX rides_open_pickup ON rides USING gist (pickup) WHERE status = 'open';

-- Which drivers a request was offered to, in which round: offers go to the nearest not yet offered. Round 0 is a
-- driver who accepted the ride and gave it up: it is never offered to them again.
CREATE TABLE ride_offers (
    ride_id uuid NOT NULL REFERENCES rides (id),
    driver_id uuid NOT NULL,
    round integer NOT NULL,
    -- From the driver to the pickup when it was offered to them.
    distance_meters double precision,
    offered_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ride_id, driver_id)
);
