-- A join token may be bound to one node name (`fencer token create --join --node NAME`; cluster up
-- makes one per node): it registers that name alone, so whoever holds one node host's token cannot
-- register as another node. NULL: any name, as kubeadm's bootstrap tokens.
ALTER TABLE join_tokens ADD COLUMN node_name text CHECK (node_name <> '');
