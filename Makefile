# fencer: a fenced, level-triggered cluster job scheduler on PostgreSQL.
# `make` lists the targets. Everything runs the built binary, node dist/cli/main.js.

FENCER := node dist/cli/main.js
NODE ?= node-1
FREEZE_SECONDS ?= 5

.DEFAULT_GOAL := help
# Chaos on the running cluster (chaos/ scripts; each works on both runtimes).
.PHONY: help build schema image image-patroni cluster-up cluster-up-ha cluster-up-pgbouncer bench-connections kill-postgres-primary freeze-postgres-primary partition-postgres-primary jobs cluster-status kill-leader freeze-leader kill-worker cluster-down test freeze-worker partition-worker restart-postgres terminate-leader-backends campaign check bench-packing bench-placement bench-failover bench-workflows bench-cancel bench-fairness bench-cron bench-throughput

help: ## list these targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z-]*:.*## / {printf "  \033[1m%-26s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## compile TypeScript to dist/
	@npm run build --silent

schema: build ## write docs/schema.sql again from the migrations (after adding one)
	@node scripts/schema-snapshot.mjs

image: build ## build the fencer:latest Docker image offline, from this machine's Node.js
	@bash scripts/build-image.sh

image-patroni: ## build the fencer-patroni:15 image of deploy/components/patroni offline (debootstrap from the Debian mirror) and run one member from it
	@bash scripts/build-patroni-image.sh

cluster-up: build ## start 3 replicas, 5 nodes and PostgreSQL in the background (REPLICAS=, NODES=, RUNTIME=docker)
	@$(FENCER) cluster up --replicas $(or $(REPLICAS),3) --nodes $(or $(NODES),5) --runtime $(or $(RUNTIME),process)

cluster-up-ha: build ## the same on HA PostgreSQL: etcd, three members under Patroni (synchronous), HAProxy (docs/ha.md)
	@$(FENCER) cluster up --postgres ha --replicas $(or $(REPLICAS),3) --nodes $(or $(NODES),5) --runtime $(or $(RUNTIME),process)

cluster-up-pgbouncer: build ## the same with PgBouncer (transaction mode) for the replicas' API traffic; heartbeats stay direct (docs/connections.md)
	@$(FENCER) cluster up --pgbouncer --replicas $(or $(REPLICAS),3) --nodes $(or $(NODES),5) --runtime $(or $(RUNTIME),process)

jobs: build ## submit the example jobs in examples/jobs.yaml
	@$(FENCER) apply -f examples/jobs.yaml

cluster-status: build ## who leads at which epoch; replicas and nodes
	@$(FENCER) cluster status

kill-leader: build ## SIGKILL the leading replica and watch another take over
	@$(FENCER) cluster kill leader

freeze-leader: build ## SIGSTOP the leader for FREEZE_SECONDS (default 5), then resume it
	@$(FENCER) cluster freeze leader
	@sleep $(FREEZE_SECONDS)
	@$(FENCER) cluster resume leader

kill-worker: build ## SIGKILL a worker node (NODE=node-1)
	@$(FENCER) cluster kill $(NODE)

cluster-down: build ## stop the cluster started by cluster-up
	@$(FENCER) cluster down

freeze-worker: build ## SIGSTOP a worker node for FREEZE_SECONDS, then resume it (NODE=node-1)
	@chaos/freeze-node $(NODE) $(FREEZE_SECONDS)

partition-worker: build ## cut a worker off the network for FREEZE_SECONDS without stopping it (NODE=node-1)
	@chaos/partition-node $(NODE) $(FREEZE_SECONDS)

restart-postgres: build ## restart the cluster's PostgreSQL (its data stays)
	@chaos/restart-postgres

kill-postgres-primary: build ## SIGKILL the HA primary's Patroni and PostgreSQL (cluster-up-ha); Patroni promotes the synchronous standby
	@$(FENCER) cluster kill postgres-primary

freeze-postgres-primary: build ## SIGSTOP the HA primary for FREEZE_SECONDS, then resume it (it rejoins as a standby)
	@$(FENCER) cluster freeze postgres-primary
	@sleep $(FREEZE_SECONDS)
	@$(FENCER) cluster resume postgres-primary

partition-postgres-primary: build ## cut the HA primary off from etcd and HAProxy for FREEZE_SECONDS while its PostgreSQL keeps running
	@$(FENCER) cluster partition postgres-primary
	@sleep $(FREEZE_SECONDS)
	@$(FENCER) cluster heal postgres-primary

terminate-leader-backends: build ## pg_terminate_backend every session of the leader
	@chaos/terminate-leader-backends

campaign: build ## failover campaign: FAILOVERS (default 40) kills and freezes while jobs flow, with faults, then the checker
	@chaos/campaign --failovers $(or $(FAILOVERS),40) --faults

check: build ## run the independent checker: DATABASE_URL=... LOGS=dir-of-node-logs
	@chaos/check --database-url "$(DATABASE_URL)" --logs "$(LOGS)"

test: ## run the tests (npm test)
	@npm test

bench-packing: image ## 10,000 jobs on 100 Docker nodes, 10 per container: CPU and memory use, time to finish vs the lower bound (JOBS=, NODES=, PER=, RUNTIME=process)
	@$(FENCER) bench packing --jobs $(or $(JOBS),10000) --nodes $(or $(NODES),100) --nodes-per-process $(or $(PER),10) --runtime $(or $(RUNTIME),docker)

bench-placement: build ## the placement algorithm at 10k×100, 100k×1,000, 100k×5,000; committed placements per second on 5,000 simulated nodes
	@$(FENCER) bench placement

bench-failover: build ## time to a new leader after SIGKILL and SIGSTOP of the leader (KILLS=, FREEZES=)
	@$(FENCER) bench failover --kills $(or $(KILLS),20) --freezes $(or $(FREEZES),20)

bench-workflows: build ## random DAG workflows in simulation: makespan of critical-path-first placement vs arrival order vs the lower bound (SEED=, SEEDS=, WORKFLOWS=, NODES=)
	@$(FENCER) bench workflows --seed $(or $(SEED),1) --seeds $(or $(SEEDS),5) --workflows $(or $(WORKFLOWS),30) --nodes $(or $(NODES),4)


bench-cancel: build ## cancel workflows of running jobs from a standby: cancel-to-stop p50/p99 on the nodes (ROUNDS=, JOBS=, NODES=)
	@$(FENCER) bench cancel --rounds $(or $(ROUNDS),5) --jobs $(or $(JOBS),40) --nodes $(or $(NODES),8)

bench-fairness: build ## fair share: a flood of FLOOD (10,000) jobs against two trickles, on and off; weights 3:1 (FLOOD=, NODES=, CASE=flood|weights|all, RUNTIME=docker)
	@$(FENCER) bench fairness --flood $(or $(FLOOD),10000) --nodes $(or $(NODES),10) --case $(or $(CASE),all) --runtime $(or $(RUNTIME),process)

bench-cron: build ## CronJobs firing every second, steady then through leader kills and freezes: how late each fired and started (CRONJOBS=, FAILOVERS=)
	@$(FENCER) bench cron --cronjobs $(or $(CRONJOBS),10) --failovers $(or $(FAILOVERS),10)

bench-throughput: build ## the job hot path beside graphile-worker on the same PostgreSQL: jobs/s, submit → start p50/p99, CPU by process (JOBS= burst size, MODE=burst|steady|single|all)
	@$(FENCER) bench throughput --mode $(or $(MODE),burst) --jobs $(or $(JOBS),20000)

bench-connections: build ## PostgreSQL's server sessions and their memory with many nodes, direct and through PgBouncer (docs/connections.md)
	@# Nodes heartbeat every 5 s: a thousand at 1 s take more of a 2-core machine than the replicas (docs/connections.md).
	@$(FENCER) bench connections --nodes $(or $(NODES),1000) --nodes-per-process 100 --heartbeat-ms $(or $(HEARTBEAT_MS),5000)
