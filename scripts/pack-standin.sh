#!/usr/bin/env bash
# Packs the GitHub REST stand-in into .carry/standin/ (ignored by git) so a run on the GPU machine,
# which has no node_modules, can serve the action: the bundled stand-in plus the one file of
# @octokit/openapi it validates requests against (xz-compressed: 13 MB → 0.4 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.carry/standin
spec=node_modules/@octokit/openapi
rm -rf "$dest"
mkdir -p "$dest/$spec/generated"
npx esbuild scripts/standin.ts --bundle --platform=node --format=esm --target=node20 \
  --outfile="$dest/standin.mjs" --log-level=warning \
  --banner:js="import { createRequire as __kgCreateRequire } from 'node:module'; const require = __kgCreateRequire(import.meta.url);"
cp "$spec/package.json" "$dest/$spec/package.json"
xz -T2 -6 -c "$spec/generated/api.github.com.json" >"$dest/$spec/generated/api.github.com.json.xz"
du -sh "$dest"
