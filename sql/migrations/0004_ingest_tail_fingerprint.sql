-- 0004_ingest_tail_fingerprint: a second fingerprint for incremental ingest.
--
-- ingest_state.head_sha1 covers the first bytes of the part of a file already read. A file
-- rewritten in place (gstack-distill-free-text rewrites question-log.jsonl to annotate
-- lines) can keep its first bytes and its inode and still move every later byte, so the
-- last bytes before the stored offset are fingerprinted too: either hash differing means
-- the offset no longer points at a line boundary we know, and the file is rescanned from
-- the start (harmless: every imported row has a deterministic key).
ALTER TABLE ingest_state ADD COLUMN tail_sha1 TEXT;
