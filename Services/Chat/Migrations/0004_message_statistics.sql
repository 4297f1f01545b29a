-- A row per message: analyzed from a small sample, like the outbox (see 0000_messaging_statistics). Its statements go
-- by key (a conversation's page, a message's id).
SELECT analyze_from_small_sample('messages');
