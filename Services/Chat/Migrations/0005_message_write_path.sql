-- A message is found by its id (a send's retry, a removal, the page before a message) and by its conversation in seq
-- order; nothing finds one by its seq alone. So the id is the primary key, and the seq, which orders a conversation,
-- lives in the conversation's index only: one B-tree insert fewer for every message.
ALTER TABLE messages DROP CONSTRAINT messages_pkey, DROP CONSTRAINT messages_id_key, ADD PRIMARY KEY (id);

-- The send inserts a message only in the statement that finds its conversation open, and its sender a member, with
-- both rows locked; the foreign key's trigger looked the conversation up once more for every message.
ALTER TABLE messages DROP CONSTRAINT messages_conversation_id_fkey;
