#!/usr/bin/env bash
# Mutation testing of one core module with mutmut 3: small plausible bugs (an operator, a
# constant, a condition flipped) are put into the module one at a time and the module's tests
# run against each; a mutant no test notices "survived". Too slow for CI: run it after changing
# one of these modules or its tests (docs/mutation.md has the scores and the survivors that are
# equivalent, with the reason).
#
#   scripts/mutation.sh MODULE            # MODULE: a name below
#   scripts/mutation.sh FILE.py TEST...   # any module, with the tests to run against it
#
# It works on a copy of the checkout (tracked files and the compiled core) under
# ${MUTATION_DIR:-${TMPDIR:-/tmp}/chesslab-mutation}/NAME, so the checkout stays clean and
# modules can run side by side; it prints the score and the survivors, and leaves
# survivors.txt there (``cd`` there and ``mutmut show NAME`` shows one). MUTATION_CHILDREN
# sets the parallel test processes (default 2); it runs under ``nice -n 19``. MUTATION_ONLY
# narrows a run to some mutants (below). MUTATION_RESUME=1 continues a stopped run in its copy
# (refused if the module or its tests changed since). Not beside another test run: mutmut
# 3.8.1's timeout thread sends SIGXCPU to stale process ids, and a reused one (another pytest)
# dies; a large kernel.pid_max (4194304) makes a reuse within a run unlikely.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3

usage() {
  sed -n '2,19p' "$0" >&2
  echo "modules: ratings sprt nnue tournament games pgn label formats export registry cluster" >&2
  exit 2
}
[ $# -ge 1 ] || usage

# the copy's folder: the module's name, or the file's without .py (before the shift below)
NAME=$(basename "${1%.py}")
# name -> files to mutate (globs over mutmut's mutant names narrow a file to some functions)
# and the tests that guard them.
FUNCTIONS=()
case "$1" in
  ratings)
    FILES=(pipelines/ratings/bayeselo.py pipelines/ratings/pair.py)
    TESTS=(tests/pipelines/test_ratings.py) ;;
  sprt)
    FILES=(pipelines/sprt/__init__.py pipelines/sprt/store.py)
    TESTS=(tests/pipelines/test_sprt.py) ;;
  nnue)   # the export: quantisation and the integer evaluation of the exported arrays
    FILES=(pipelines/kinds/nnue/export.py pipelines/train/artifacts.py)
    FUNCTIONS=("pipelines.kinds.nnue.export.x_quantise__mutmut_*"
               "pipelines.kinds.nnue.export.x_mean_layer_inputs__mutmut_*"
               "pipelines.train.artifacts.x_save_npz__mutmut_*"
               "pipelines.kinds.nnue.export.x_evaluate_quantised_batch__mutmut_*"
               "pipelines.kinds.nnue.export.x__evaluate_chunk__mutmut_*"
               "pipelines.kinds.nnue.export.x__affine__mutmut_*"
               "pipelines.kinds.nnue.export.x_reference_check__mutmut_*")
    # the export's own tests: test_train_nnue.py calls the export too, but labels positions
    # with Stockfish and trains first, minutes per mutant
    TESTS=(tests/pipelines/test_nnue_export.py) ;;
  tournament)   # adjudication and how a game is scored (rules verdicts, forfeits, scores;
                # mutmut leaves properties such as GameRecord.white_score alone)
    FILES=(pipelines/games/adjudication.py pipelines/games/game.py)
    FUNCTIONS=("pipelines.games.adjudication.*"
               "pipelines.games.game.x_rules_verdict__mutmut_*"
               "pipelines.games.game.x_forfeit__mutmut_*"
               "pipelines.games.game.x_score_for_white__mutmut_*")
    TESTS=(tests/pipelines/test_tournament.py) ;;
  games)   # test_ingest_compiled.py checks the Python reader's rows against the compiled ones
    FILES=(pipelines/ingest/games.py)
    TESTS=(tests/pipelines/test_ingest.py tests/pipelines/test_ingest_recovery.py
           tests/pipelines/test_ingest_compiled.py) ;;
  pgn)   # the Python reader is the reference the compiled one is checked against, game by
         # game (index, lines, tags, movetext): test_ingest_compiled.py holds those checks
    FILES=(pipelines/ingest/pgn.py)
    TESTS=(tests/pipelines/test_ingest.py tests/pipelines/test_ingest_recovery.py
           tests/pipelines/test_ingest_compiled.py tests/pipelines/test_pgn_reader.py) ;;
  label)   # info parsing and the label rows
    FILES=(pipelines/label/info.py pipelines/label/run.py)
    TESTS=(tests/pipelines/test_label.py) ;;
  formats)   # the Python side of the training-data formats (binpack.pyx, fens.pyx and
             # _lichess_eval.pyx are compiled: mutmut mutates Python only)
    FILES=(pipelines/formats/text.py pipelines/formats/lichess_eval.py
           pipelines/formats/binpack_file.py pipelines/formats/records.py
           pipelines/formats/parquet.py pipelines/formats/blocks.py)
    # the export's tests too: they write text and binpack and read Parquet back
    TESTS=(tests/pipelines/test_formats_binpack.py tests/pipelines/test_formats_text.py
           tests/pipelines/test_formats_lichess.py tests/pipelines/test_formats_lichess_scan.py
           tests/pipelines/test_formats_resume.py tests/pipelines/test_formats_parquet.py
           tests/pipelines/test_formats_blocks.py
           tests/pipelines/test_export.py
           -k "not snapshot") ;;
  export)   # the writers and the selection (not the model snapshot's test: it trains a net)
    FILES=(pipelines/export/run.py pipelines/export/config.py)
    TESTS=(tests/pipelines/test_export.py -k "not snapshot") ;;
  registry)
    FILES=(pipelines/models/registry.py)
    TESTS=(tests/pipelines/test_registry.py) ;;
  cluster)   # the games runner: local processes or a Dask cluster
    FILES=(pipelines/games/cluster.py)
    TESTS=(tests/pipelines/test_games_cluster.py tests/pipelines/test_games_stop.py) ;;
  *.py)
    [ $# -ge 2 ] || usage
    FILES=("$1"); shift
    TESTS=("$@") ;;
  *) usage ;;
esac
# MUTATION_ONLY="GLOB ..." narrows the run to those mutants (mutmut's names, such as
# "pipelines.formats.text.x_parse_block__mutmut_*"): a second look at a module's survivors.
if [ -n "${MUTATION_ONLY:-}" ]; then
  read -r -a FUNCTIONS <<< "$MUTATION_ONLY"
fi
for path in "${FILES[@]}" "${TESTS[@]}"; do
  case "$path" in -*|"not "*) continue ;; esac   # pytest options (-k EXPR) among the tests
  [ -e "$path" ] || { echo "mutation: $path not found" >&2; exit 2; }
done
WORK=${MUTATION_DIR:-${TMPDIR:-/tmp}/chesslab-mutation}/$NAME
CHILDREN=${MUTATION_CHILDREN:-2}

# What the results depend on: the module's files, its tests and the compiled core.
source_id() {
  local path
  for path in "${FILES[@]}" "${TESTS[@]}"; do
    case "$path" in -*|"not "*) continue ;; esac
    printf '%s\n' "$path"
  done | sort | xargs sha256sum
  printf '%s\n' "${TESTS[@]}" "${FUNCTIONS[@]}"
  find flows pipelines engines warehouse dashboards -name '*.so' | sort | xargs sha256sum
}
SOURCE=$(source_id | sha256sum | cut -c1-16)

if [ "${MUTATION_RESUME:-0}" = 1 ] && [ -d "$WORK/mutants" ]; then
  # mutmut keeps each mutant's result beside it and runs only those without one
  if [ "$(cat "$WORK/.source" 2>/dev/null)" != "$SOURCE" ]; then
    echo "mutation: $WORK was made from other sources (the module, its tests or the core" \
         "changed); run without MUTATION_RESUME=1 for a fresh copy" >&2
    exit 2
  fi
  echo "mutation: resuming the run in $WORK"
  RESUMING=1
else
  RESUMING=0
  # A fresh copy: the tracked and new files, and the compiled modules (ignored by git).
  rm -rf "$WORK"
  mkdir -p "$WORK"
  { git ls-files -co --exclude-standard; find flows pipelines engines warehouse dashboards -name '*.so'; } \
    | sort -u | while read -r path; do [ -f "$path" ] && printf '%s\0' "$path"; done \
    | tar --null -T - -cf - | tar -xf - -C "$WORK"
  echo "$SOURCE" > "$WORK/.source"
fi
pid_max=$(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 0)
if [ "$pid_max" -lt 4194304 ]; then
  echo "mutation: kernel.pid_max is $pid_max: mutmut's stale SIGXCPU can hit a reused id;" \
       "run nothing else meanwhile (or: sysctl kernel.pid_max=4194304)" >&2
fi

# mutmut reads [mutmut] from setup.cfg (pyproject.toml has no [tool.mutmut]): every package
# is copied into mutants/ (tests import the copy, never the checkout), the module's files are
# mutated.
entry() { local key=$1; shift; echo "$key="; printf '    %s\n' "$@"; }
{
  echo "[mutmut]"
  entry source_paths flows pipelines engines warehouse dashboards
  entry only_mutate "${FILES[@]}"
  entry also_copy data benchmarks setup.py
  entry pytest_add_cli_args_test_selection "${TESTS[@]}"
  entry pytest_add_cli_args -p no:cacheprovider
  # No test may run in a process a mutant's process is forked from: the default ("fork")
  # runs the clean tests in mutmut's own process and forks each mutant from it, and there
  # deltalake panics ("Forked process detected": its tokio runtime was made by the parent)
  # and Dask waits forever on its offload thread (a thread the child does not have). A test
  # that touched the lake then failed in every mutant, killing it whatever the mutation.
  # The fork server runs the clean tests in a child of its own and forks each mutant from a
  # process that has imported pytest and the tests but run none.
  echo "process_isolation = forkserver"
} > "$WORK/setup.cfg"

cd "$WORK"
# Subprocesses the tests start (the CLI) import the mutated copy too. The folder must exist
# before Python starts: a missing path entry is cached as such, and imports would then fall
# through to the installed (editable) chesslab, unmutated.
mkdir -p mutants
export PYTHONPATH=$WORK/mutants
# Each mutant's tests run in a child forked from the fork server: a child forked after torch
# (OpenMP) or MKL started worker threads hangs, so they get none.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
MUTMUT=$(dirname "$PY")/mutmut
echo "mutation: ${FILES[*]} against ${TESTS[*]} in $WORK"
RUN=("${FUNCTIONS[@]}")
if [ "$RESUMING" = 1 ] && [ ${#FUNCTIONS[@]} -gt 0 ]; then
  # mutmut runs every mutant named on its command line again, finished or not (it skips
  # finished ones only when none is named): name those without a result.
  mapfile -t RUN < <("$PY" - "${FUNCTIONS[@]}" <<'EOF'
import fnmatch
import json
import pathlib
import sys

for meta in sorted(pathlib.Path("mutants").rglob("*.meta")):
    for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
        if code is None and any(fnmatch.fnmatch(name, p) for p in sys.argv[1:]):
            print(name)
EOF
  )
  echo "mutation: ${#RUN[@]} mutants without a result"
fi
status=0
if [ ${#FUNCTIONS[@]} -eq 0 ] || [ ${#RUN[@]} -gt 0 ]; then   # none named: mutmut skips finished
  nice -n 19 "$MUTMUT" run --max-children "$CHILDREN" "${RUN[@]}" > run.log 2>&1 || status=$?
fi
if [ "$status" -ne 0 ]; then
  tail -30 run.log
  echo "mutation: mutmut run failed (exit $status); the log is $WORK/run.log" >&2
  exit "$status"
fi
"$MUTMUT" results --all true > results.txt
"$PY" - "${FUNCTIONS[@]}" <<'EOF'
import fnmatch
import sys
from collections import Counter

patterns = sys.argv[1:]
rows = []
for line in open("results.txt", encoding="utf-8"):
    name, _, status = line.strip().rpartition(": ")
    if name and (not patterns or any(fnmatch.fnmatch(name, p) for p in patterns)):
        rows.append((name, status))
counts = Counter(status for _, status in rows)
# a mutant whose tests crashed the interpreter (mutmut: "segfault") was noticed too
killed = (counts["killed"] + counts["timeout"] + counts["segfault"]
          + counts["caught by type check"])
survivors = sorted(name for name, status in rows if status in ("survived", "no tests"))
with open("survivors.txt", "w", encoding="utf-8") as out:
    out.writelines(f"{name}\n" for name in survivors)
print(", ".join(f"{status} {n}" for status, n in sorted(counts.items())))
for name, status in rows:
    if status in ("survived", "no tests", "suspicious", "skipped", "not checked"):
        print(f"  {status}: {name}")
total = len(rows)
print(f"score: {killed}/{total} killed ({100 * killed / total:.1f}%)" if total else "no mutants")
EOF
