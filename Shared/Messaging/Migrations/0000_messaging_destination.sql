-- Rows for another exchange than the service's own, with their own routing key (live notifications).
ALTER TABLE outbox ADD COLUMN exchange text, ADD COLUMN routing_key text;
