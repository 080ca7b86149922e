-- 0004_watch_attempt: a node numbers its watch-stream attempts. An attempt that reaches the
-- database late (it waited on a replica while the node had already given up on it and
-- reconnected elsewhere) must not replace the newer stream's session.
ALTER TABLE nodes ADD COLUMN watch_attempt bigint NOT NULL DEFAULT 0;
