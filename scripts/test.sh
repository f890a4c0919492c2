#!/usr/bin/env bash
# The test command: installs what it needs (Debian 12, apt-get), builds the native core with
# -Werror, runs the C++ suite under ctest (lavapipe, validation layer on), then the Elixir suite
# when an Elixir >= 1.17 with Nx is present. The last line is the summary: "N passed, N failed".
#
#   NXVK_SANITIZE=1 bash scripts/test.sh   also builds and runs the suite with ASan + UBSan
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PASSED=0
FAILED=0
STATUS=0

summary() {
  echo
  echo "$PASSED passed, $FAILED failed"
}

# Runs ctest in native/$1 and adds its counts to PASSED/FAILED.
run_ctest() {
  local dir="$NXVK_ROOT/native/$1"
  local log_file="$dir/ctest.log"
  log "ctest in native/$1"
  (cd "$dir" && ctest --output-on-failure -j "$NXVK_JOBS" --timeout 600) 2>&1 | tee "$log_file"
  local rc=${PIPESTATUS[0]}
  # "100% tests passed, 0 tests failed out of 117"
  local line total failed
  line="$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log_file" | tail -1)"
  if [ -n "$line" ]; then
    failed="$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$line")"
    total="$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")"
    PASSED=$((PASSED + total - failed))
    FAILED=$((FAILED + failed))
  else
    FAILED=$((FAILED + 1))  # ctest did not run to its summary
  fi
  [ "$rc" -eq 0 ] || STATUS=1
}

# ---------------------------------------------------------------------------------------------
# run_elixir_suite: the Elixir part. Finds an Elixir >= 1.17 (on PATH, or in /opt/elixir/bin)
# and, when mix.exs exists at the repository root, runs `mix test` there and adds its counts.
# Otherwise it says plainly that it skipped. (The Elixir package fills in the details: deps,
# NIF build, MIX_ENV.)
# ---------------------------------------------------------------------------------------------
find_elixir() {
  local candidate
  for candidate in "$(command -v elixir 2>/dev/null || true)" /opt/elixir/bin/elixir; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    local version
    version="$("$candidate" -e 'IO.puts(System.version())' 2>/dev/null | tail -1)" || continue
    local major minor
    major="${version%%.*}"
    minor="${version#*.}"
    minor="${minor%%.*}"
    if [[ "$major" =~ ^[0-9]+$ && "$minor" =~ ^[0-9]+$ ]] && { [ "$major" -gt 1 ] || [ "$minor" -ge 17 ]; }; then
      echo "$(dirname "$candidate")"
      return 0
    fi
  done
  return 1
}

# Finds Nx 0.13 sources with complex and telemetry beside them: NX_VULKAN_NX_PATH (and
# NX_VULKAN_COMPLEX_PATH / NX_VULKAN_TELEMETRY_PATH), else /opt/nx-src/nx/nx. Exports the
# variables mix.exs reads (path dependencies, off unless set).
find_nx_sources() {
  local nx="${NX_VULKAN_NX_PATH:-/opt/nx-src/nx/nx}"
  [ -f "$nx/mix.exs" ] || return 1
  local base
  base="$(cd "$nx/../.." 2>/dev/null && pwd)"
  local complex="${NX_VULKAN_COMPLEX_PATH:-$base/complex}"
  local telemetry="${NX_VULKAN_TELEMETRY_PATH:-$base/telemetry}"
  [ -f "$complex/mix.exs" ] && [ -f "$telemetry/mix.exs" ] || return 1
  export NX_VULKAN_NX_PATH="$nx" NX_VULKAN_COMPLEX_PATH="$complex" NX_VULKAN_TELEMETRY_PATH="$telemetry"
}

run_elixir_suite() {
  local bin
  if ! bin="$(find_elixir)"; then
    echo "Elixir suite: SKIPPED (no Elixir >= 1.17 found on PATH or in /opt/elixir/bin)"
    return 0
  fi
  if [ ! -f "$NXVK_ROOT/mix.exs" ]; then
    echo "Elixir suite: SKIPPED (no mix.exs at the repository root yet; Elixir found in $bin)"
    return 0
  fi
  if ! find_nx_sources; then
    echo "Elixir suite: SKIPPED (Elixir in $bin, but no Nx sources: set NX_VULKAN_NX_PATH, or /opt/nx-src/nx/nx with complex/ and telemetry/ beside nx/)"
    return 0
  fi
  log "mix test (Elixir from $bin, Nx from $NX_VULKAN_NX_PATH)"
  mkdir -p "$NXVK_ROOT/native/build-tests"
  local log_file="$NXVK_ROOT/native/build-tests/mix-test.log"
  # The NIF is built by `mix compile` (CMake + Ninja in _build/native); the suite runs under the
  # Vulkan validation layer (config/config.exs turns it on for MIX_ENV=test), and a validation
  # message fails it.
  (cd "$NXVK_ROOT" && export PATH="$bin:$PATH" MIX_ENV=test \
     NX_VULKAN_JOBS="$NXVK_JOBS" && mix deps.get && mix test) 2>&1 </dev/null | tee "$log_file"
  local rc=${PIPESTATUS[0]}
  # ExUnit: "12 tests, 0 failures" (also "978 doctests, 12 tests, 1 failure, 2 excluded")
  local line tests failures excluded
  line="$(grep -E '[0-9]+ (tests?|doctests?|propert(y|ies)).*[0-9]+ failures?' "$log_file" | tail -1)"
  if [ -n "$line" ]; then
    tests=0
    for n in $(grep -oE '[0-9]+ (tests?|doctests?|propert(y|ies))' <<<"$line" | grep -oE '^[0-9]+'); do
      tests=$((tests + n))
    done
    failures="$(grep -oE '[0-9]+ failures?' <<<"$line" | grep -oE '^[0-9]+')"
    excluded="$(grep -oE '[0-9]+ excluded' <<<"$line" | grep -oE '^[0-9]+' || echo 0)"
    # ExUnit counts excluded tests among the tests: they neither passed nor failed.
    PASSED=$((PASSED + tests - failures - ${excluded:-0}))
    FAILED=$((FAILED + failures))
    echo "Elixir suite: $((tests - failures - ${excluded:-0})) passed, $failures failed, ${excluded:-0} excluded"
  else
    FAILED=$((FAILED + 1))  # mix test did not get as far as ExUnit's summary
    echo "Elixir suite: FAILED before ExUnit's summary (see $log_file)"
  fi
  [ "$rc" -eq 0 ] || STATUS=1
}

main() {
  install_packages || { STATUS=1; FAILED=$((FAILED + 1)); summary; exit 1; }
  if ! build_native build-tests -DNXVK_TESTS=ON; then
    echo "native build FAILED"
    FAILED=$((FAILED + 1))
    summary
    exit 1
  fi
  run_ctest build-tests

  if [ "${NXVK_SANITIZE:-0}" = "1" ]; then
    if build_native build-asan -DNXVK_TESTS=ON -DNXVK_SANITIZE=ON; then
      run_ctest build-asan
    else
      echo "ASan build FAILED"
      FAILED=$((FAILED + 1))
      STATUS=1
    fi
  fi

  run_elixir_suite
  summary
  exit "$STATUS"
}

main "$@"
