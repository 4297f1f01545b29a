-- A delivery match's deliverer's latest position, for its orderer while the match is active, overwritten by the next
-- one and cleared when the match ends: no history is kept. With it, the pace of its live frames to the orderer (at
-- most one a second, across replicas): when the last frame went, and whether a timer will send the latest.
ALTER TABLE matches
    ADD COLUMN deliverer_lat double precision,
    ADD COLUMN deliverer_lon double precision,
    ADD COLUMN deliverer_position_at timestamptz,
    ADD COLUMN position_sent_at timestamptz,
    ADD COLUMN position_pending boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT matches_deliverer_position_whole
        CHECK ((deliverer_lat IS NULL) = (deliverer_lon IS NULL)
            AND (deliverer_lat IS NULL) = (deliverer_position_at IS NULL));
