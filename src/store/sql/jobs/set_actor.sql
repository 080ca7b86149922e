-- jobs/set_actor: who asks for this transaction's changes, for the history (fencer.actor). $1 actor.
SELECT set_config('fencer.actor', $1, true)
