-- A row per entry of a feed: analyzed from a small sample, like the outbox (see 0000_messaging_statistics). Its
-- statements go by key (a user's entries after a seq) or by the partial index of entries awaiting a push.
SELECT analyze_from_small_sample('feed');
