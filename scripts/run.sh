#!/usr/bin/env bash
# The main job: installs what it needs (Debian 12, apt-get), builds the native core, lists the
# Vulkan devices and runs the selftest (fill, copy, add and a reduction, checked on the host).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install_packages
build_native build-run
NXVK="$NXVK_ROOT/native/build-run/nxvk"

log "nxvk info"
"$NXVK" info
log "nxvk selftest"
"$NXVK" selftest
