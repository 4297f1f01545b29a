-- The pace of a ride's live positions to its rider (at most one frame a second, across replicas): when the last frame
-- went, and whether a timer will send the latest position a second after it. The position itself is the driver's one
-- row in ride_driver_positions.
ALTER TABLE rides
    ADD COLUMN position_sent_at timestamptz,
    ADD COLUMN position_pending boolean NOT NULL DEFAULT false;
