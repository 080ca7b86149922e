-- rehearsal/idle_timeout: a rehearsal (a dry run's write, always rolled back) holds its
-- transaction open across the write's own preparation, which a real write does outside one: it
-- may sit idle longer than the API pool's idle-in-transaction limit without being stuck. Its
-- own, transaction-local limit instead. No parameters.
SET LOCAL idle_in_transaction_session_timeout = '10s'
