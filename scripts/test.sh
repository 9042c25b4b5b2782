#!/usr/bin/env bash
# The test suite: install what is missing, then run pytest (slow tests excluded; add -m slow).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python -m pytest "$@"
