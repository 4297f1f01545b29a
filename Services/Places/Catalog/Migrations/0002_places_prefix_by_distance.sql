-- The nearest names a typed text begins, found either way round. A text that begins few names finds them by name:
-- the name index holds each place's kind, location and id too, so that it alone answers. One that begins thousands
-- walks the locations outwards from the searcher and skips the names it does not begin inside the index: its second
-- column holds the name in byte order ("C"), which btree_gist lets a GiST index compare.
CREATE EXTENSION IF NOT EXISTS btree_gist;

DROP INDEX places_name_prefix;
CREATE INDEX places_name_prefix ON places (campus, name_key text_pattern_ops) INCLUDE (kind, location, id)
    WHERE retired_at IS NULL;
CREATE INDEX places_location_name ON places USING gist (location, name_key COLLATE "C") WHERE retired_at IS NULL;
-- How many names a range in byte order holds: without it the planner guesses a handful, and rather than walk
-- outwards it reads the whole index to sort what it found.
CREATE STATISTICS places_name_key_bytes ON (name_key COLLATE "C") FROM places;
