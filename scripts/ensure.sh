#!/bin/sh
# Makes a fresh clone runnable: installs the locked dependencies (which bring Node 22 and Deno from the npm
# registry) when node_modules is missing or older than package-lock.json. Used by `npm start` and `npm test`
# so the README's two commands work on a machine that has only the system Node and npm.
set -eu
cd "$(dirname "$0")/.."
marker=node_modules/.package-lock.json
if [ ! -f "$marker" ] || [ package-lock.json -nt "$marker" ] || [ ! -x node_modules/.bin/node ]; then
  echo "switchyard: installing the locked dependencies…" >&2
  # `npm ci`: installs exactly what package-lock.json lists and never rewrites it, so the README's commands leave
  # the work tree clean (scripts/lockfile.test.ts checks that npm accepts the lockfile as in sync).
  # --include=dev: under NODE_ENV=production npm leaves devDependencies out by default, and they hold what
  # `npm start` itself runs on: the locked Node 22 (without it the system Node cannot run the .ts entry points)
  # and the console's build tools. The production image installs with --omit=dev and never runs this script.
  npm ci --include=dev --no-audit --no-fund --loglevel=error
fi
