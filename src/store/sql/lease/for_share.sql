-- lease/for_share: the first statement of every fenced transaction. No parameters.
-- FOR SHARE makes a concurrent takeover (UPDATE of this row) wait until we commit or abort,
-- so either our decision commits under our epoch or we see the new one and abort.
SELECT epoch, holder FROM lease WHERE id = 1 FOR SHARE
