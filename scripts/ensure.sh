#!/bin/sh
# Makes a fresh clone runnable: installs the locked dependencies (which bring Node 22 and Deno from the npm
# registry) when node_modules is missing or older than package-lock.json. Used by `npm start` and `npm test`
# so the README's two commands work on a machine that has only the system Node and npm.
set -eu
cd "$(dirname "$0")/.."
marker=node_modules/.package-lock.json
if [ ! -f "$marker" ] || [ package-lock.json -nt "$marker" ] || [ ! -x node_modules/.bin/node ]; then
  echo "switchyard: installing the locked dependencies…" >&2
  # `npm install` rather than `npm ci`: the registry mirror here lacks some platform-specific optional packages
  # (for example @biomejs/cli-darwin-arm64), so the lockfile cannot list them and `npm ci` refuses it as out of
  # sync. With an in-sync lockfile, `npm install` installs exactly the locked versions and changes nothing.
  npm install --no-audit --no-fund --loglevel=error
fi
