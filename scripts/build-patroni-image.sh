#!/usr/bin/env bash
# Builds fencer-patroni:15, the members' image of deploy/components/patroni, without a registry:
# debootstrap lays out a Debian bookworm root with the Dockerfile's packages from the Debian
# mirror, and `docker import` makes it an image with the Dockerfile's user and entrypoint. Where a
# registry is reachable, `docker build -t fencer-patroni:15 deploy/components/patroni` builds the
# same. Then a smoke test runs one member from it as the StatefulSet does (its user and group, the
# component's patroni.yml and post-bootstrap.sh), with a throwaway etcd instead of the Kubernetes
# API as Patroni's store: the member must bootstrap, lead, and create the database fencer.
#
#   bash scripts/build-patroni-image.sh        # or: make image-patroni
#   IMAGE=fencer-patroni:dev MIRROR=http://deb.debian.org/debian bash scripts/build-patroni-image.sh
#   SMOKE_ONLY=1 bash scripts/build-patroni-image.sh   # only the smoke test, of the image there is
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=${IMAGE:-fencer-patroni:15}
component=deploy/components/patroni

say() { printf 'build-patroni-image: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die 'debootstrap needs root'
command -v debootstrap >/dev/null || die 'debootstrap is not installed (apt-get install debootstrap)'
command -v docker >/dev/null || die 'no docker client on PATH'
docker info >/dev/null 2>&1 || die 'no Docker engine answers (`docker info` fails)'
command -v etcd >/dev/null || die 'the smoke test needs etcd (apt-get install etcd-server)'
command -v psql >/dev/null || die 'the smoke test needs psql (apt-get install postgresql-client-15)'

# The mirror apt uses here, unless given.
if [ -z "${MIRROR:-}" ]; then
  MIRROR=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
# The Dockerfile's package list, so that the two ways of building cannot drift apart.
packages=$(sed -n 's/.*apt-get install -y --no-install-recommends //p' "$component/Dockerfile" | sed 's/[ \\]*$//' | tr -s ' ' ',')
[ -n "$packages" ] || die "no package list found in $component/Dockerfile"

work=$(mktemp -d "${TMPDIR:-/tmp}/fencer-patroni-image-XXXXXX")
etcd_pid=''
container=''
cleanup() {
  [ -n "$container" ] && docker rm -f "$container" >/dev/null 2>&1 || true
  [ -n "$etcd_pid" ] && kill "$etcd_pid" 2>/dev/null || true
  mountpoint -q "$work/rootfs/proc" 2>/dev/null && umount "$work/rootfs/proc"
  rm -rf "$work"
}
trap cleanup EXIT
rootfs=$work/rootfs

if [ "${SMOKE_ONLY:-}" = 1 ]; then
  docker image inspect "$IMAGE" >/dev/null 2>&1 || die "SMOKE_ONLY=1: there is no image $IMAGE to test"
  uid=$(docker run --rm --entrypoint id "$IMAGE" -u postgres)
  gid=$(docker run --rm --entrypoint id "$IMAGE" -g postgres)
else
say "debootstrap bookworm from $MIRROR"
debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log" >&2; die 'debootstrap failed; its log ends above'; }
# Then the Dockerfile's step, in the root: apt-get install, no service started (policy-rc.d).
say "apt-get install $packages"
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
mount -t proc proc "$rootfs/proc"
installed=0
chroot "$rootfs" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${packages//,/ }" \
  >"$work/apt.log" 2>&1 && installed=1
umount "$rootfs/proc"
[ "$installed" = 1 ] || { tail -20 "$work/apt.log" >&2; die 'apt-get install failed in the root; its log ends above'; }
rm -f "$rootfs/usr/sbin/policy-rc.d" "$rootfs/etc/resolv.conf"
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb
# The StatefulSet runs as postgres by number (runAsUser, runAsGroup): they must be this image's.
uid=$(chroot "$rootfs" id -u postgres)
gid=$(chroot "$rootfs" id -g postgres)
want_uid=$(sed -n 's/^ *runAsUser: *\([0-9]*\).*/\1/p' "$component/patroni.yaml")
want_gid=$(sed -n 's/^ *runAsGroup: *\([0-9]*\).*/\1/p' "$component/patroni.yaml")
[ "$uid:$gid" = "$want_uid:$want_gid" ] \
  || die "postgres is $uid:$gid in the image but $component/patroni.yaml runs as $want_uid:$want_gid"

previous=$(docker image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
say "importing $(du -sh "$rootfs" | cut -f1) as $IMAGE"
tar -C "$rootfs" --numeric-owner -c . | docker import \
  --change 'USER postgres' \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'ENTRYPOINT ["patroni", "/etc/patroni/patroni.yml"]' \
  --message "Debian bookworm with $packages (deploy/components/patroni)" \
  - "$IMAGE" >/dev/null
# The image it replaces would linger untagged; containers still using it keep it alive.
current=$(docker image inspect --format '{{.Id}}' "$IMAGE")
if [ -n "$previous" ] && [ "$previous" != "$current" ]; then docker rmi "$previous" >/dev/null 2>&1 || true; fi
fi

# The smoke test. Loopback ports the kernel hands out, so that nothing else here is disturbed.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
etcd_client=$(free_port)
etcd_peer=$(free_port)
pg_port=$(free_port)
api_port=$(free_port)
etcd --name smoke --data-dir "$work/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_client" --advertise-client-urls "http://127.0.0.1:$etcd_client" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
  --initial-cluster "smoke=http://127.0.0.1:$etcd_peer" --enable-v2=true >"$work/etcd.log" 2>&1 &
etcd_pid=$!

# The component's patroni.yml with etcd (v2, as `fencer cluster up --postgres ha` uses it) in
# place of the Kubernetes API; everything else as the StatefulSet gives it.
mkdir -p "$work/etc" "$work/data"
python3 - "$component/patroni.yml" "$work/etc/patroni.yml" "127.0.0.1:$etcd_client" <<'EOF'
import sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
del config['kubernetes']
config['etcd'] = {'hosts': [sys.argv[3]]}
yaml.safe_dump(config, open(sys.argv[2], 'w'))
EOF
cp "$component/post-bootstrap.sh" "$work/etc/"
chmod 0755 "$work/etc/post-bootstrap.sh"
chmod 0644 "$work/etc/patroni.yml"
# The volume as the StatefulSet's fsGroup leaves it: the group's, group-writable, setgid; the
# emptyDirs (/tmp, /var/run/postgresql) likewise, as tmpfs mounts.
chown "0:$gid" "$work/data"
chmod 2775 "$work/data"
password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
container=fencer-patroni-smoke-$$
docker run -d --name "$container" --network host --user "$uid:$gid" --read-only --cap-drop ALL \
  --security-opt no-new-privileges --tmpfs "/tmp:gid=$gid,mode=2777" --tmpfs "/var/run/postgresql:gid=$gid,mode=2777" \
  -v "$work/etc:/etc/patroni:ro" -v "$work/data:/var/lib/postgresql/data" \
  -e PATRONI_NAME=smoke-0 \
  -e PATRONI_POSTGRESQL_LISTEN="127.0.0.1:$pg_port" -e PATRONI_POSTGRESQL_CONNECT_ADDRESS="127.0.0.1:$pg_port" \
  -e PATRONI_RESTAPI_LISTEN="127.0.0.1:$api_port" -e PATRONI_RESTAPI_CONNECT_ADDRESS="127.0.0.1:$api_port" \
  -e PATRONI_SUPERUSER_PASSWORD="$password" -e PATRONI_REPLICATION_PASSWORD="$password" \
  "$IMAGE" >/dev/null

for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$api_port/primary" >/dev/null 2>&1 \
    && PGPASSWORD=$password psql -h 127.0.0.1 -p "$pg_port" -U postgres -d fencer -Atc 'select 1' >/dev/null 2>&1; then
    say "smoke test: the member leads and the database fencer exists ($(docker exec "$container" patroni --version))"
    say "built $IMAGE"
    exit 0
  fi
  sleep 1
done
docker logs "$container" 2>&1 | grep -v '^  ' | tail -40 >&2
die "smoke test: the member from $IMAGE did not lead with a database fencer within 120 s; its log ends above"
