#!/usr/bin/env bash
# `rankjit trec_eval` on an empty Numba cache: this tree against git revision REV, interleaved (not a test).
#
#   bash benchmarks/ab_trec_eval_cold.sh REV [ROUNDS] [QRELS RUN]
#
# Each run is a fresh process with its own empty NUMBA_CACHE_DIR (whole-command wall time);
# the order of the pair alternates per round.  Default data: the TREC 2012 Web run of the
# shared data folder next to the repository.  Prints one line per run, then the medians and
# the median per-round ratio (this tree / REV).  Nothing else should load the CPU meanwhile.
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
REV="${1:?usage: ab_trec_eval_cold.sh REV [ROUNDS] [QRELS RUN]}"
ROUNDS="${2:-8}"
DATA="$HERE/../shared/data/web2012"
QRELS="${3:-$DATA/qrels.adhoc.txt}"
RUN="${4:-$DATA/run.ql.cata.txt}"
BASE="$(mktemp -d)"
trap 'rm -rf "$BASE"' EXIT
git -C "$HERE" archive "$REV" src | tar -x -C "$BASE"
unset PYTHONDONTWRITEBYTECODE
OUT="$(mktemp)"
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then order="base new"; else order="new base"; fi
  for tree in $order; do
    if [ "$tree" = base ]; then src="$BASE/src"; else src="$HERE/src"; fi
    cache="$(mktemp -d)"
    start=$(date +%s.%N)
    NUMBA_CACHE_DIR="$cache" PYTHONPATH="$src" python -m rankjit trec_eval "$QRELS" "$RUN" > /dev/null 2>&1
    end=$(date +%s.%N)
    rm -rf "$cache"
    echo "$round $tree $(echo "$end - $start" | bc)" | tee -a "$OUT"
  done
done
python - "$OUT" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
times = {t: [float(r[2]) for r in rows if r[1] == t] for t in ("base", "new")}
pairs = {}
for r in rows:
    pairs.setdefault(r[0], {})[r[1]] = float(r[2])
ratios = [p["new"] / p["base"] for p in pairs.values()]
print(f"medians: this tree {statistics.median(times['new']):.2f} s, REV {statistics.median(times['base']):.2f} s; "
      f"per-round ratio (this tree / REV) median {statistics.median(ratios):.2f} "
      f"({min(ratios):.2f}-{max(ratios):.2f})")
PY
rm -f "$OUT"
