#!/usr/bin/env bash
# Install everything chesslab needs on a fresh Debian machine: Stockfish and the other
# Debian engines when missing, then a virtual environment in .venv with the project
# (and its compiled engine core) installed in editable mode. Safe to run again: each
# step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

# Stockfish labels positions and anchors ratings; the others are tournament opponents and
# gaviotatb ships endgame tablebases for adjudication; chromium (headless) is the browser the
# served dashboard's test opens.
APT_PACKAGES=(stockfish gaviotatb toga2 phalanx ethereal-chess glaurung chromium chromium-driver)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.chesslab-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ setup.py -nt "$stamp" ] \
   || [ -n "$(find engines pipelines warehouse \( -name '*.pyx' -o -name '*.pxd' -o -name '*.h' \) -newer "$stamp" | head -1)" ]; then
  echo "bootstrap: installing chesslab into .venv (first run takes a few minutes)"
  # setuptools and Cython also serve in-place rebuilds: python setup.py build_ext --inplace
  .venv/bin/pip install -q --upgrade pip "setuptools==80.9.0" "Cython==3.3.1" >/dev/null
  .venv/bin/pip install -q -e ".[test]"
  # sunfish pins an old python-chess it does not use; it is a single-file engine.
  .venv/bin/pip install -q --no-deps "sunfish==2026.1"
  touch "$stamp"
fi
