#!/usr/bin/env bash
# The GPU bench on a lent machine (docs/gpu.md). Two halves:
#   bash bench/gpu.sh pack [--node] [--pages N]   here: builds .gpu/ (git-ignored), what the run needs and the lent
#                                                 machine lacks: the built app and its production modules (Linux x64
#                                                 binaries only), the Vulkan loader's .debs, a slice of the
#                                                 evaluation pages and lines, and with --node this machine's node
#   bash bench/gpu.sh run [bench flags]           there (device tool: carry .gpu): unpacks, finds the NVIDIA Vulkan
#                                                 driver, runs dist/bench/gpu.bench.js, and leaves gpu.json in $OUT
# The device tool sends at most 64 MiB of the tree: see docs/gpu.md for making room (the training checkpoints and
# the other bundles stay here). With no GPU, `run` on this machine measures lavapipe, the script's own check.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"; shift || true
PACK=.gpu

pack() {
  local with_node=0 pages=6
  while [ $# -gt 0 ]; do
    case "$1" in --node) with_node=1 ;; --pages) pages="$2"; shift ;; *) echo "gpu.sh pack: unknown flag $1" >&2; exit 2 ;; esac
    shift
  done
  grep -qs '^/.gpu/' .git/info/exclude || echo /.gpu/ >>.git/info/exclude
  rm -rf "$PACK" && mkdir -p "$PACK/eval"
  [ -f dist/bundle/gpu-bench.js ] || npm run build >/dev/null
  # The bundled app (dist/bundle: infra/bundle.mjs bundles the bench too) and the modules it leaves external: the
  # bundled ones, dev tools and the optional Sentry stay here, and onnxruntime keeps only its Linux x64 binary.
  local skip=(typescript playwright-core esbuild @esbuild @sentry sentry @opentelemetry @graphql-yoga graphql katex
    @pothos zod marked parse5 @whatwg-node @envelop @escape.tech @types yaml fast-xml-parser)
  tar -cf - "${skip[@]/#/--exclude=node_modules/}" --exclude='node_modules/onnxruntime-node/bin/napi-v6/darwin' \
    --exclude='node_modules/onnxruntime-node/bin/napi-v6/win32' --exclude='node_modules/onnxruntime-node/bin/napi-v6/linux/arm64' \
    --exclude='node_modules/.cache' package.json bin dist/bundle node_modules | xz -T0 -6 >"$PACK/app.tar.xz"
  [ "$with_node" = 1 ] && xz -T0 -6 -c "$(command -v node)" >"$PACK/node.xz"
  # The Vulkan loader (the lent machines have the NVIDIA driver's ICD, not the loader), as the device README says.
  local o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  mkdir -p /tmp/amd64/partial
  # shellcheck disable=SC2086
  apt-get $o update -qq && (cd "$PACK" && apt-get $o download libvulkan1 >/dev/null)
  # A slice of the evaluation folder: measuring only, as everywhere (nothing trains on it).
  local ev="${SPECULA_EVAL_DIR:-../shared/eval}"
  if [ -d "$ev" ]; then
    node -e '
      const fs = require("fs"), path = require("path");
      const [ev, out, n] = process.argv.slice(1); const pages = Number(n);
      for (const [set, keep] of [["docbank_samples", (r, k) => r.kind === "line" ? k.line++ < 64 : r.kind === "page" && k.page++ < pages], ["docling_pdfs", (r, k) => r.kind === "pdf_page" && k.page++ < pages]]) {
        const rows = fs.readFileSync(path.join(ev, set, "manifest.jsonl"), "utf8").split("\n").filter(Boolean).map(JSON.parse);
        const k = { line: 0, page: 0 }, kept = rows.filter((r) => keep(r, k));
        for (const r of kept) for (const f of [r.image, r.pdf, r.gt]) if (f) {
          fs.mkdirSync(path.dirname(path.join(out, set, f)), { recursive: true }); fs.copyFileSync(path.join(ev, set, f), path.join(out, set, f));
        }
        fs.writeFileSync(path.join(out, set, "manifest.jsonl"), kept.map((r) => JSON.stringify(r)).join("\n") + "\n");
      }' "$ev" "$PACK/eval" "$pages"
  fi
  du -sh "$PACK"/* | sed 's/^/gpu.sh pack: /'
}

run() {
  local work=/tmp/specula-gpu out="${OUT:-$PWD/bench/results}"
  rm -rf "$work" && mkdir -p "$work"
  xz -dc "$PACK/app.tar.xz" | tar -xf - -C "$work"
  cp -r models examples "$work/"
  local node=node
  if ! command -v node >/dev/null || ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 20 ? 1 : 0)'; then
    [ -f "$PACK/node.xz" ] || { echo "gpu.sh run: no Node 20+ here and none packed (gpu.sh pack --node)" >&2; exit 1; }
    xz -dc "$PACK/node.xz" >"$work/node" && chmod +x "$work/node" && node="$work/node"
  fi
  if ! ldconfig -p | grep -q libvulkan.so.1; then
    for f in "$PACK"/*.deb; do dpkg -x "$f" /; done
    ldconfig
  fi
  local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ] && [ ! -f /usr/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES="$icd"
  export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/specula-xdg}" && mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  mkdir -p "$out"
  (cd "$work" && "$node" dist/bundle/gpu-bench.js --eval-dir "$OLDPWD/$PACK/eval" --out "$out/gpu.json" "$@")
}

case "$mode" in
  pack) pack "$@" ;;
  run) run "$@" ;;
  *) echo "usage: bash bench/gpu.sh pack [--node] [--pages N] | run [gpu.bench.js flags]" >&2; exit 2 ;;
esac
