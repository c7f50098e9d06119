#!/bin/sh
# The Dockerfile's build and run steps, in one place, so a test runs them on this machine (only the FROM lines and
# `npm ci` go untested there):
#   scripts/container-steps.sh build     compile src/ to dist/ (after npm ci)
#   scripts/container-steps.sh migrate   apply migrations, then exit
#   scripts/container-steps.sh start     the server (exec: signals reach Node directly)
#   scripts/container-steps.sh health    exit 0 when /api/health answers 200
set -eu
cd "$(dirname "$0")/.."
case "${1:-}" in
  build) node scripts/build.mjs ;;
  migrate) exec node dist/main.js --role migrate ;;
  start) shift; exec node dist/main.js "$@" ;;
  health) exec node scripts/healthcheck.mjs ;;
  *) echo "usage: $0 build|migrate|start [--role api|worker]|health" >&2; exit 2 ;;
esac
