#!/usr/bin/env bash
# A stand-in for the node:N-bookworm-slim base image, for machines that reach Debian's mirror and the npm
# registry but not Docker Hub (where the CPU image was verified): a minimal Debian 12 root from debootstrap
# plus this machine's Node and npm, imported as node:N-bookworm-slim (N: this machine's Node major), so that
#   bash infra/offline-base-image.sh && docker build --build-arg NODE_IMAGE=node:N-bookworm-slim -f infra/Dockerfile.cpu -t specula-cpu .
# builds the unchanged recipe (whose default base is node:22-bookworm-slim). Needs root, debootstrap and a running Docker daemon. Where Docker Hub is
# reachable, do not use this: the real image is pulled.
set -euo pipefail
major=$(node -p 'process.versions.node.split(".")[0]')
tag=${1:-node:${major}-bookworm-slim}
node_bin=$(command -v node)
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian
install -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
# This machine's trust store: where the registry is reached through an intercepting proxy, its CA is in it.
install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  -c 'CMD ["node"]' - "$tag"
docker run --rm "$tag" node -e 'console.log("base image ready: node " + process.version)'
