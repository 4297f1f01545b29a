-- The order in which the consumer applied the events.
ALTER TABLE applied ADD COLUMN position bigint GENERATED ALWAYS AS IDENTITY;
