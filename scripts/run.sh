#!/usr/bin/env bash
# The main job: installs what it needs (Debian 12, apt-get), builds the native core, lists the
# Vulkan devices and runs the selftest (fill, copy, add and a reduction, checked on the host).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install_packages
build_native build-run -DNXVK_TESTS=OFF  # the main job needs the library and nxvk only
NXVK="$NXVK_ROOT/native/build-run/nxvk"

log "nxvk info"
"$NXVK" info
log "nxvk selftest"
"$NXVK" selftest
log "nxvk unary sigmoid 1.0 2.0 3.0 4.0 (README's sigmoid example, through the C++ op library)"
"$NXVK" unary sigmoid 1.0 2.0 3.0 4.0

# The Elixir examples (README's sigmoid, an MLP training step), when Elixir >= 1.17 and Nx
# sources are present; test.sh's find_elixir/find_nx_sources decide, as for the suite.
source <(sed -n '/^find_elixir() {/,/^}/p; /^find_nx_sources() {/,/^}/p' "$NXVK_ROOT/scripts/test.sh")
if ELIXIR_BIN="$(find_elixir)" && [ -f "$NXVK_ROOT/mix.exs" ] && find_nx_sources; then
  for example in sigmoid train_step; do
    log "mix run examples/$example.exs"
    (cd "$NXVK_ROOT" && export PATH="$ELIXIR_BIN:$PATH" NX_VULKAN_JOBS="$NXVK_JOBS" && mix deps.get >/dev/null && mix run "examples/$example.exs" </dev/null)
  done
else
  echo "Elixir examples: SKIPPED (no Elixir >= 1.17 with Nx sources found)"
fi
