-- listener/listen: the channels a replica's listener connection hears, every one of
-- src/store/channels.ts (which says what each wakes; test/unit/channels.test.ts checks the list).
-- No parameters.
LISTEN fencer_pending;
LISTEN fencer_room;
LISTEN fencer_assignments;
LISTEN fencer_outcomes;
LISTEN fencer_auth;
