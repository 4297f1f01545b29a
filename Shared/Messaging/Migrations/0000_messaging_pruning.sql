-- The hourly prune of the inbox finds what is older than its retention through this index, not by reading the
-- whole table: rows arrive in time order, so a block range index fits, and it costs next to nothing to keep up.
CREATE INDEX inbox_by_received_at ON inbox USING brin (received_at) WITH (autosummarize = on);
