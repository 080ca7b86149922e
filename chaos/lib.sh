# Shared by the chaos scripts: run the fencer binary of this checkout against the cluster that
# `fencer cluster up` (or `make cluster-up`) started here, whatever its runtime.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fencer() { node "$ROOT/dist/cli/main.js" "$@"; }
if [ ! -f "$ROOT/dist/cli/main.js" ]; then
  (cd "$ROOT" && npm run build --silent)
fi
