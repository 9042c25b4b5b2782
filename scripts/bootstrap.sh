#!/usr/bin/env bash
# Install everything chesslab needs on a fresh Debian machine, one line per phase with its
# time: the Debian packages (Stockfish and the other engines) when missing, the environment
# (.venv with the exact package set of constraints.txt), the compiled core (the Cython
# modules, built on every core) and the project in editable mode. Safe to run again: each
# phase is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

began=$SECONDS
phase() {   # phase N "what": the line a phase starts with
  printf 'bootstrap: [%s/4] %s ... ' "$1" "$2"
  phase_began=$SECONDS
}
done_in() {   # the end of the phase's line: what it did and its time
  echo "$1 ($((SECONDS - phase_began)) s)"
}
# pip's and setuptools' own output (warnings about the machine's index settings, the editable
# install's banner) goes to a log, so a phase stays one line; a failing step prints the log's
# end and the log's path.
LOG=${CHESSLAB_BOOTSTRAP_LOG:-$PWD/.bootstrap.log}
: > "$LOG"
quietly() {
  "$@" >> "$LOG" 2>&1 || { status=$?; echo "failed (exit $status): $*"; tail -n 25 "$LOG"
                           echo "bootstrap: the whole output is in $LOG"; exit "$status"; }
}

# Stockfish labels positions and anchors ratings; the others are tournament opponents and
# gaviotatb ships endgame tablebases for adjudication; chromium (headless) is the browser the
# served dashboard's test opens.
APT_PACKAGES=(stockfish gaviotatb toga2 phalanx ethereal-chess glaurung chromium chromium-driver)
phase 1 "Debian packages"
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  printf 'installing %s ... ' "${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  done_in "${#missing[@]} installed"
else
  done_in "all ${#APT_PACKAGES[@]} present"
fi

PY=${PYTHON:-python3}
PIP=(.venv/bin/pip install --quiet --progress-bar off --disable-pip-version-check)
phase 2 "the environment (.venv, the packages of constraints.txt)"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
packages=.venv/.chesslab-packages
if [ ! -f "$packages" ] || [ constraints.txt -nt "$packages" ]; then
  # setuptools, wheel and Cython also build the core below (no build isolation: the build
  # uses these, already here) and serve in-place rebuilds: python setup.py build_ext --inplace
  quietly "${PIP[@]}" --upgrade pip "setuptools==80.9.0" "wheel" "Cython==3.3.1"
  quietly "${PIP[@]}" -c constraints.txt -r constraints.txt
  # sunfish pins an old python-chess it does not use; it is a single-file engine.
  quietly "${PIP[@]}" --no-deps "sunfish==2026.1"
  touch "$packages"
  done_in "$(grep -c '^[^#].*==' constraints.txt) packages installed"
else
  done_in "up to date"
fi

stamp=.venv/.chesslab-installed
phase 3 "the compiled core ($(find engines pipelines warehouse -name '*.pyx' | wc -l) Cython modules on $(nproc) cores)"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ setup.py -nt "$stamp" ] \
   || [ "$packages" -nt "$stamp" ] \
   || [ -n "$(find engines pipelines warehouse \( -name '*.pyx' -o -name '*.pxd' -o -name '*.h' \) -newer "$stamp" | head -1)" ]; then
  # the project alone: its dependencies are the environment's (phase 2)
  quietly "${PIP[@]}" --no-deps --no-build-isolation -e ".[test]"
  touch "$stamp"
  done_in "built"
else
  done_in "up to date"
fi

phase 4 "check"
.venv/bin/python -c "import engines.core.position, pipelines.ingest._pgn" 2>/dev/null \
  || { echo "failed: the compiled core does not import (rm $stamp and run again)"; exit 1; }
done_in "$(.venv/bin/chesslab --version)"
echo "bootstrap: done in $((SECONDS - began)) s"
