#!/usr/bin/env bash
# The test suite: install what is missing, lint with ruff, then run pytest (slow tests
# excluded; add -m slow).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check --quiet .
exec .venv/bin/python -m pytest "$@"
