#!/usr/bin/env bash
# The test suite: install what is missing, lint with ruff, type-check with mypy, then run
# pytest over the tests and every module's doctests (slow tests excluded; add -m slow).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
.venv/bin/ruff check --quiet .
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
