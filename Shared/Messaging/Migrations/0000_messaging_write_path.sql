-- An outbox row's id is made by the service that writes it (a time-ordered UUID) and nothing looks a row up by it:
-- its unique index was a B-tree insert for every event, kept for no reader. Consumers drop a repeated id in their
-- inbox, whose key it is.
ALTER TABLE outbox DROP CONSTRAINT IF EXISTS outbox_id_key;
