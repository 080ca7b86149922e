#!/bin/sh
# Patroni runs this once, on the member that bootstraps the cluster, with a connection URL.
set -eu
psql -d "$1" -v ON_ERROR_STOP=1 -c 'CREATE DATABASE fencer'
