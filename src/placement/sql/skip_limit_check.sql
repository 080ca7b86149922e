-- placement/skip_limit_check: test-only (guard queue-limit-commit): this transaction's placements
-- are not checked against queue limits and quotas by the database.
SET LOCAL fencer.skip_limit_check = 'on'
