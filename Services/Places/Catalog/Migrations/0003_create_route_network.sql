-- The street network of each campus, from the same OpenStreetMap extract as its places, routed by pgRouting.
-- NB: pgrouting, like postgis, is not a trusted extension: scripts/infra and deploy/postgres/init.sh create it as a
-- superuser, and this line only makes sure it is there.
CREATE EXTENSION IF NOT EXISTS pgrouting;

-- One row per stretch of a way between two junctions. Ids are per campus; pgRouting sees one campus at a time.
CREATE TABLE route_edges (
    campus text NOT NULL,
    id bigint NOT NULL,
    source bigint NOT NULL,
    target bigint NOT NULL,
    -- The OpenStreetMap way, `way/123`, and its name, for looking into a route.
    source_key text NOT NULL,
    name text,
    is_walkable boolean NOT NULL,
    is_drivable boolean NOT NULL,
    meters double precision NOT NULL,
    -- Seconds by car from source to target and back; -1 where a car may not go that way (pgRouting's "no edge").
    drive_seconds double precision NOT NULL,
    drive_reverse_seconds double precision NOT NULL,
    geom geometry(LineString, 4326) NOT NULL,
    PRIMARY KEY (campus, id)
);

-- The junctions; a route starts and ends at the nearest one that lies on the campus's main network of its mode
-- (the largest set of junctions joined to each other: walking both ways, driving along one-way streets), so that a
-- point beside a courtyard lane or a road cut off at the edge of the extract does not end up stranded.
CREATE TABLE route_vertices (
    campus text NOT NULL,
    id bigint NOT NULL,
    location geography(Point, 4326) NOT NULL,
    is_on_walk_network boolean NOT NULL DEFAULT false,
    is_on_drive_network boolean NOT NULL DEFAULT false,
    PRIMARY KEY (campus, id)
);

CREATE INDEX route_vertices_walk ON route_vertices USING gist (location) WHERE is_on_walk_network;
CREATE INDEX route_vertices_drive ON route_vertices USING gist (location) WHERE is_on_drive_network;
