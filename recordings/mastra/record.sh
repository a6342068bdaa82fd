#!/usr/bin/env bash
# Re-create the environment (if missing) and re-record tests/fixtures/recordings/mastra.
#   bash recordings/mastra/record.sh            (from /work/main)
# ENV (default /work/envs/mastra): the node project (package.json + package-lock.json copied
# from here, `npm ci`) plus a Python venv `pyenv` with the recording kit's requirements.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ENV="${BADGE_ENV_DIR:-/work/envs/mastra}"
mkdir -p "$ENV"
if ! cmp -s "$HERE/package-lock.json" "$ENV/package-lock.json" || [ ! -d "$ENV/node_modules" ]; then
  cp "$HERE/package.json" "$HERE/package-lock.json" "$ENV/"
  (cd "$ENV" && npm ci --no-audit --no-fund)
fi
if [ ! -x "$ENV/pyenv/bin/python" ]; then
  python3 -m venv "$ENV/pyenv"
  "$ENV/pyenv/bin/pip" install --quiet -r "$HERE/../kit/requirements.txt"
fi
ln -sf "$HERE/record.mjs" "$ENV/record.mjs"
cd "$ENV"
# --preserve-symlinks-main: resolve the packages from $ENV/node_modules, not from the repo.
BADGE_ENV_DIR="$ENV" MASTRA_TELEMETRY_DISABLED=1 exec node --preserve-symlinks-main record.mjs
