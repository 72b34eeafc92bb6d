-- 0012c_pacing_flip_index: find a session's or chain's newest flip without reading all its
-- findings. `pacing rank` asks for it on every call to tell whether the session or chain
-- has been idle too long; only flipped findings are indexed, so rankings pay nothing.
CREATE INDEX findings_session_flips ON findings (session_id, flipped_at) WHERE flipped_at IS NOT NULL;
CREATE INDEX findings_chain_flips ON findings (chain_id, flipped_at) WHERE flipped_at IS NOT NULL;
