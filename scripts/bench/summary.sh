#!/usr/bin/env bash
# The one table of `make bench` (issue 23): rows the bench scripts add, printed at the end with the load average at start and end.
#
#   bash scripts/bench/summary.sh start     starts a table (records the load average)
#   bash scripts/bench/summary.sh print     prints it, with the load average now
#
# A bench script adds its rows with
#
#   source scripts/bench/summary.sh
#   summary_row "B1 mix32" "0.19 s" "numpy 0.81 s" 4.26 26.0 60.1
#
# (item, ours, fastest peer, ratio = peer / ours so above 1 means ours is faster, our peak RSS
# MiB, the peer's; empty fields print as "-"). Rows go to $BENCH_SUMMARY (default
# .build/bench/summary.tsv) only while a table is started, so a script run alone prints as before.
summary_file=${BENCH_SUMMARY:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.build/bench/summary.tsv}

summary_row() {
  [ -f "$summary_file" ] || return 0
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "${2:--}" "${3:--}" "${4:--}" "${5:--}" "${6:--}" >> "$summary_file"
}

summary_load() { cut -d' ' -f1-3 /proc/loadavg; }

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case ${1:-} in
    start)
      mkdir -p "$(dirname "$summary_file")"
      printf '# load %s\n' "$(summary_load)" > "$summary_file"
      ;;
    print)
      [ -f "$summary_file" ] || { echo "bench summary: no table started ($summary_file)" >&2; exit 1; }
      start_load=$(sed -n 's/^# load //p' "$summary_file" | head -1)
      echo
      echo "bench: issue 23 in one table (ratio = fastest peer's time / ours: above 1, ours is faster; peak RSS in MiB)"
      echo "bench: load average at start $start_load, at end $(summary_load), on $(nproc) core(s)"
      { printf 'item\tours\tfastest peer\tratio\tours RSS\tpeer RSS\n'; grep -v '^#' "$summary_file"; } | column -t -s $'\t'
      ;;
    *) echo "usage: $0 start|print" >&2; exit 2 ;;
  esac
fi
