#!/usr/bin/env bash
# The math runs of docs/BENCHMARKS.md and docs/CAPABILITIES.md on the default Vulkan device, as
# one command each (the device machine's sessions are short: a call should not be typed twice).
#
#   math_suite.sh bench BENCH [ONLY]    every math case (or the --only list ONLY), default mode,
#                                       then fast mode, then peers.py (PyTorch, JAX) where present;
#                                       BENCH_ARGS (say "--elements 1048576") go to both
#   math_suite.sh ab BENCH_A BENCH_B [BENCH_C...] ONLY [ROUNDS]
#                                       two or more builds of the bench (say a change and its
#                                       parent) on the --only list ONLY, one process each, in
#                                       turn, ROUNDS times (default 2): differences between
#                                       builds against the spread between rounds. The mode is the
#                                       caller's NX_VULKAN_F32_MATH (default exact)
#   math_suite.sh every-input EXHAUSTIVE [SECONDS [FIRST]]
#                                       every f32 input of each function's fast path
#                                       (NX_VULKAN_F32_MATH=fast), in the order below from
#                                       function FIRST on, while SECONDS last (default 580);
#                                       prints the ranges it did not reach (all of them take
#                                       about 11 minutes on an H100, 40 s per 2^28 on lavapipe)
#
# BENCH and EXHAUSTIVE are built nxvk_bench_ops and nxvk_exhaustive (-DNXVK_BENCH=ON). The bench
# runs a warm-up process first: an idle GPU's clock takes about a second to rise. Where
# nvidia-smi is present it samples the GPU every 250 ms and each phase ends with what the GPU
# did while busy: its clock, power and how often a power or thermal limit held the clock down
# (the H100's 700 W cap does under the default mode's f64 load: docs/BENCHMARKS.md).
set -u
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }

smi_log=
smi_start() {
  command -v nvidia-smi >/dev/null || return 0
  smi_log=$(mktemp)
  local reasons
  for reasons in clocks_event_reasons.active clocks_throttle_reasons.active; do
    nvidia-smi --query-gpu=$reasons --format=csv,noheader >/dev/null 2>&1 && break
  done
  nvidia-smi --query-gpu=clocks.sm,power.draw,$reasons,utilization.gpu --format=csv,noheader,nounits \
    -lms 250 >"$smi_log" 2>/dev/null &
  smi_pid=$!
}
smi_mark() { [ -n "$smi_log" ] && wc -l <"$smi_log" || echo 0; }
# The samples since mark $1 with the GPU over half busy: clock (MHz), power (W), and the share held
# by a limit (reason bits 0x4 software power cap, 0x8 hardware slowdown, 0x20/0x40 thermal, 0x80
# power brake; 0x1, idle, is not a limit).
smi_summary() {
  [ -n "$smi_log" ] || return 0
  tail -n +$(($1 + 1)) "$smi_log" | awk -F', *' '
    function hex(s,  i, v) { v = 0; s = tolower(s); sub(/^0x/, "", s)
      for (i = length(s) - 1; i <= length(s); ++i) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return v }
    $4 + 0 > 50 { n++; c = $1 + 0; sum += c; if (min == 0 || c < min) min = c; if ($2 + 0 > pmax) pmax = $2 + 0
      r = hex($3); if (int(r / 4) % 2 || int(r / 8) % 2 || int(r / 32) % 2 || int(r / 64) % 2 || int(r / 128) % 2) lim++ }
    END { if (n) printf "   GPU while busy (nvidia-smi, %d samples): clock %.0f MHz mean, %d min; power %.0f W max; held by a power or thermal limit in %d\n", n, sum / n, min, pmax, lim
          else print "   GPU while busy (nvidia-smi): no sample over half busy" }'
}
smi_stop() { [ -n "$smi_log" ] && { kill "$smi_pid" 2>/dev/null; rm -f "$smi_log"; }; return 0; }

case "${1:-}" in
  bench)
    bench=$2
    only=${3:-copy,exp,sigmoid,tanh,expm1,log,sqrt,sin,cos,tan,sinh,cosh,erf,asin,acos,atan,asinh,acosh,atanh,rsqrt,cbrt,pow}
    smi_start
    NX_VULKAN_F32_MATH=fast "$bench" ${BENCH_ARGS:-} --only copy,exp >/dev/null
    for mode in exact fast; do
      echo "== NX_VULKAN_F32_MATH=$mode, t=$(elapsed) s"
      mark=$(smi_mark)
      NX_VULKAN_F32_MATH=$mode "$bench" ${BENCH_ARGS:-} --only "$only"
      smi_summary "$mark"
    done
    if python3 -c 'import torch' 2>/dev/null || python3 -c 'import jax' 2>/dev/null; then
      echo "== peers, t=$(elapsed) s"
      mark=$(smi_mark)
      PYTHONUNBUFFERED=1 python3 "$here/peers.py" ${BENCH_ARGS:-} --only "$only"
      smi_summary "$mark"
    fi
    smi_stop
    echo "== done, t=$(elapsed) s"
    ;;
  ab)
    shift
    builds=()  # the leading arguments that are programs; then ONLY and ROUNDS
    while [ $# -gt 0 ] && [ -x "$1" ] && [ -f "$1" ]; do builds+=("$1"); shift; done
    [ ${#builds[@]} -ge 2 ] && [ $# -ge 1 ] || { sed -n '2,25p' "$0"; exit 2; }
    only=$1
    smi_start
    "${builds[0]}" ${BENCH_ARGS:-} --only copy,exp >/dev/null
    for round in $(seq 1 "${2:-2}"); do
      for build in "${builds[@]}"; do
        echo "== round $round, $build, NX_VULKAN_F32_MATH=${NX_VULKAN_F32_MATH:-exact}, t=$(elapsed) s"
        mark=$(smi_mark)
        "$build" ${BENCH_ARGS:-} --only "$only" | grep --line-buffered -E '^\| [a-z]'
        smi_summary "$mark"
      done
    done
    smi_stop
    echo "== done, t=$(elapsed) s"
    ;;
  every-input)
    exhaustive=$2
    budget=${3:-580}
    first=${4:-}
    # Function, first and last+1 input bits: each function's fast path over both signs (odd and
    # even functions over one; the others' far ranges are the exact path's).
    ranges=(
      "erfc 0 0x41000000" "erfc 0x80000000 0xc0800000" "sigmoid 0x80000000 0xc2b00000" "sigmoid 0 0x7f800001"
      "erf 0 0x7f800001" "tanh 0 0x7f800001" "sinh 0 0x42b00001" "cosh 0 0x42b00001"
      "asinh 0 0x7f800001" "acosh 0x3f800000 0x7f800001" "atanh 0 0x3f800000" "erf_inv 0 0x3f800000"
      "exp 0 0x42b20000" "exp 0x80000000 0xc2b00000" "expm1 0 0x42b20000" "expm1 0x80000000 0xff800001"
      "log 0 0x7f800001" "log1p 0 0x7f800001" "log1p 0x80000000 0xbf800001"
      "asin 0 0x3f800001" "acos 0 0x3f800001" "acos 0x80000000 0xbf800001"
      "sin 0 0x45800001" "cos 0 0x45800001" "tan 0 0x45800001" "atan 0 0x7f800001"
      "rsqrt 0 0x7f800001" "cbrt 0 0x7f800001")
    for r in "${ranges[@]}"; do
      set -- $r
      if [ -n "$first" ]; then
        [ "$1" = "$first" ] || continue
        first=
      fi
      left=$((budget - $(elapsed)))
      if [ $left -lt 15 ]; then
        echo "== $1 [$2, $3): not run (time)"
        continue
      fi
      echo "== $1 [$2, $3), t=$(elapsed) s"
      NX_VULKAN_F32_MATH=fast timeout $left "$exhaustive" --fn "$1" --from "$2" --to "$3" | tail -3
      rc=${PIPESTATUS[0]}
      [ "$rc" = 0 ] || echo "   stopped (rc $rc): the range is not complete"
    done
    ;;
  *)
    sed -n '2,25p' "$0"
    exit 2
    ;;
esac
