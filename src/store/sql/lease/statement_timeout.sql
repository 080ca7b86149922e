-- lease/statement_timeout: the lease session's statement timeout, for the whole session (a
-- renewal stuck behind a frozen transaction must not hang the lease loop). $1 milliseconds (text).
SELECT set_config('statement_timeout', $1, false)
