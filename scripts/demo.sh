#!/usr/bin/env bash
# The main job: install what is missing, then run the whole pipeline on the bundled sample.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/chesslab demo "$@"
