-- Who blocked whom, kept from accounts' `user.blocked` and `user.unblocked`: every flow leaves out of what it shows a
-- student the students in a block with them, either way round.
CREATE TABLE blocks (
    blocker_id uuid NOT NULL,
    blocked_id uuid NOT NULL,
    PRIMARY KEY (blocker_id, blocked_id)
);
CREATE INDEX blocks_by_blocked ON blocks (blocked_id);
