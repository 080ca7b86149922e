-- lease/fenced_epoch: the epoch a fenced transaction decides under, for this transaction only:
-- the history triggers stamp it on every row they write. $1 epoch (text).
SELECT set_config('fencer.epoch', $1, true)
