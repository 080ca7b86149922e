#!/usr/bin/env bash
# Validates deploy/ (fencer's Kubernetes manifests) offline, with no cluster; CI runs it and it
# exits non-zero on the first failed step:
#   1. deploy/crds/ holds byte-for-byte copies of crds/*.yaml, and its kustomization lists them
#      (kustomize loads no file outside a kustomization's directory, hence the copies);
#   2. every overlay renders (`kubectl kustomize`), alone and with each component it leaves out
#      (e.g. the prometheus-operator ServiceMonitor);
#   3. every rendered object matches its kind's schema from the Kubernetes OpenAPI, types and
#      field names (deploy/tools/check-schemas.mjs; its packages are pinned in
#      deploy/tools/package-lock.json and installed here on first use, from the npm registry).
# What the schemas cannot see (selectors matching pods, probes on declared ports, the agents'
# replica list, the CRDs unchanged by kustomize, ...) is checked by test/unit/deploy.test.ts.
#
#   bash scripts/validate-deploy.sh               # check
#   bash scripts/validate-deploy.sh --sync-crds   # first copy crds/ into deploy/crds/
#   KEEP=dir bash scripts/validate-deploy.sh      # keep the rendered manifests in dir
#
# `kubectl apply --dry-run=client` is no offline check: it asks the API server for its
# resources first (discovery) and fails without one.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'validate-deploy: %s\n' "$*"; }
die() { printf 'validate-deploy: %s\n' "$*" >&2; exit 1; }

sync=false
case "${1:-}" in
  '') ;;
  --sync-crds) sync=true ;;
  *) die "unknown argument: $1 (usage: $0 [--sync-crds])" ;;
esac

# The kustomization of deploy/crds/, as it must read for the CRDs in crds/.
crds_kustomization() {
  cat <<'EOF'
# fencer's CustomResourceDefinitions: byte-for-byte copies of crds/*.yaml (the schemas fencer's
# API validates against), because a kustomization may not load files outside its own directory.
# After changing crds/, run `bash scripts/validate-deploy.sh --sync-crds`; the validation (CI)
# fails while a copy differs. Apply this directory alone to manage the CRDs apart from fencer.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
EOF
  for crd in crds/*.yaml; do printf '  - %s\n' "$(basename "$crd")"; done
}

# 1. The CRD copies.
if $sync; then
  find deploy/crds -maxdepth 1 -name '*.yaml' ! -name kustomization.yaml -delete
  cp crds/*.yaml deploy/crds/
  crds_kustomization >deploy/crds/kustomization.yaml
  say "copied $(ls crds/*.yaml | wc -l) CRDs into deploy/crds/"
fi
[ "$(cd crds && ls *.yaml)" = "$(cd deploy/crds && ls *.yaml | grep -vx kustomization.yaml)" ] \
  || die 'deploy/crds/ does not hold the same files as crds/: run bash scripts/validate-deploy.sh --sync-crds'
for crd in crds/*.yaml; do
  cmp -s "$crd" "deploy/$crd" || die "deploy/$crd differs from $crd: run bash scripts/validate-deploy.sh --sync-crds"
done
diff <(crds_kustomization) deploy/crds/kustomization.yaml >/dev/null \
  || die 'deploy/crds/kustomization.yaml does not list exactly crds/*.yaml: run bash scripts/validate-deploy.sh --sync-crds'
say "deploy/crds/ is identical to crds/ ($(ls crds/*.yaml | wc -l) CRDs)"

# 2. Render. kubectl's built-in kustomize needs components (kustomize >= 3.7, kubectl >= 1.21).
command -v kubectl >/dev/null || die 'kubectl is not on PATH (it renders the kustomizations: kubectl kustomize)'
kustomize_version=$(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: //p')
case "$kustomize_version" in
  v[4-9]* | v[1-9][0-9]*) ;;
  *) die "kubectl's kustomize is ${kustomize_version:-unknown}: v4 or newer is needed (kubectl 1.21+)" ;;
esac

out=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/validate-deploy-XXXXXX")}
mkdir -p "$out"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
rendered=()
render() { # name dir
  local log=$out/$1.log
  if ! kubectl kustomize "$2" >"$out/$1.yaml" 2>"$log"; then
    cat "$log" >&2
    die "$1: kubectl kustomize $2 failed"
  fi
  say "$1: rendered $(grep -c '^kind:' "$out/$1.yaml") objects"
  rendered+=("$1=$out/$1.yaml")
}
uses() { # overlay component: the overlay lists the component (not commented out)
  grep -Eq "^[[:space:]]*-[[:space:]]*\.\./\.\./components/$2[[:space:]]*(#.*)?$" "$1/kustomization.yaml"
}
for overlay in deploy/overlays/*/; do
  overlay=${overlay%/}
  name=$(basename "$overlay")
  render "$name" "$overlay"
  # The overlay with each component it does not use, as a user would add it.
  for component in deploy/components/*/; do
    component=${component%/}
    uses "$overlay" "$(basename "$component")" && continue
    # One database per render: the bundled single instance or the Patroni members, never both.
    case $(basename "$component") in
      postgres) uses "$overlay" patroni && continue ;;
      patroni) uses "$overlay" postgres && continue ;;
    esac
    combined=$out/$name+$(basename "$component")
    mkdir -p "$combined"
    cat >"$combined/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="$combined" "$overlay")
components:
  - $(realpath --relative-to="$combined" "$component")
EOF
    render "$name+$(basename "$component")" "$combined"
  done
done

# 3. The schemas.
[ -d node_modules/yaml ] && [ -d node_modules/typescript ] || die "fencer's node_modules lacks yaml or typescript: run npm ci first"
tools=deploy/tools
if [ ! -f "$tools/node_modules/.package-lock.json" ] || [ "$tools/package-lock.json" -nt "$tools/node_modules/.package-lock.json" ]; then
  say "installing the schema packages ($tools/package-lock.json)"
  npm ci --prefix "$tools" --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null \
    || die "npm ci in $tools failed"
fi
node "$tools/check-schemas.mjs" "${rendered[@]}" || die 'a rendered object does not match its schema (above)'
say "OK: ${#rendered[@]} renders of deploy/ are valid"
