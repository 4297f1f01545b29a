-- Conversations of any flow: a member list, the flow and a one-line subject instead of an orderer and a deliverer.
ALTER TABLE conversations ADD COLUMN flow text NOT NULL DEFAULT 'delivery', ADD COLUMN subject text NOT NULL DEFAULT '';
ALTER TABLE conversations ALTER COLUMN flow DROP DEFAULT;

CREATE TABLE conversation_members (
    conversation_id uuid NOT NULL REFERENCES conversations (id),
    user_id uuid NOT NULL,
    -- The name the match named them by; the users read model's newer name wins when shown.
    name text NOT NULL,
    role text NOT NULL,
    -- Their place in the match's member list.
    position integer NOT NULL,
    PRIMARY KEY (conversation_id, user_id)
);

CREATE INDEX conversation_members_by_user ON conversation_members (user_id, conversation_id);

INSERT INTO conversation_members (conversation_id, user_id, name, role, position)
SELECT id, orderer_id, orderer_name, 'orderer', 0 FROM conversations;
INSERT INTO conversation_members (conversation_id, user_id, name, role, position)
SELECT id, deliverer_id, deliverer_name, 'deliverer', 1 FROM conversations;

DROP INDEX conversations_of_orderer;
DROP INDEX conversations_of_deliverer;
ALTER TABLE conversations DROP COLUMN orderer_id, DROP COLUMN orderer_name, DROP COLUMN deliverer_id,
    DROP COLUMN deliverer_name;
