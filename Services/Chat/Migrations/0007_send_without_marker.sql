-- A send reads whether its sender deleted their account from the membership it locks: the erasure marks every
-- membership of the person, and a send that waited for that erasure's lock sees the row as the erasure left it
-- (READ COMMITTED's check of a locked row that changed). Before, a PL/pgSQL function read the users row again with a
-- snapshot of its own, a call and a lookup for every message.
ALTER TABLE conversation_members ADD COLUMN erased boolean NOT NULL DEFAULT false;
UPDATE conversation_members m SET erased = true FROM users u WHERE u.id = m.user_id AND u.erased_at IS NOT NULL;
DROP FUNCTION chat_user_is_erased(uuid);
