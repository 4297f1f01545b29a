-- Calls between the two members of an open conversation (an open match of any flow): WebRTC between the clients,
-- relayed by coturn; chat keeps their states and relays their signals. A call rings, then is answered (active) and
-- ended, or is declined, missed (unanswered after the ring's time) or cancelled (by its caller, or its match closing).
CREATE TABLE calls (
    id uuid PRIMARY KEY,
    conversation_id uuid NOT NULL,
    caller_id uuid NOT NULL,
    callee_id uuid NOT NULL,
    video boolean NOT NULL,
    status text NOT NULL CHECK (status IN ('ringing', 'active', 'ended', 'declined', 'missed', 'cancelled')),
    created_at timestamptz NOT NULL DEFAULT now(),
    answered_at timestamptz,
    ended_at timestamptz
);
CREATE INDEX calls_ringing ON calls (created_at) WHERE status = 'ringing';
CREATE INDEX calls_live_of_conversation ON calls (conversation_id) WHERE status IN ('ringing', 'active');
CREATE INDEX calls_of_caller ON calls (caller_id);
CREATE INDEX calls_of_callee ON calls (callee_id);

-- Who is in a call that rings or is under way: one call at a time per person, kept by the primary key.
CREATE TABLE call_parties (
    user_id uuid PRIMARY KEY,
    call_id uuid NOT NULL REFERENCES calls (id) ON DELETE CASCADE
);
