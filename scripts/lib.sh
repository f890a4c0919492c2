# Shared by scripts/run.sh and scripts/test.sh: package installation and the native build.
# Sourced, not executed.

NXVK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NXVK_JOBS="${NXVK_JOBS:-$(nproc 2>/dev/null || echo 2)}"

# Debian 12 packages for the native core, its tests and the NIF.
NXVK_PACKAGES=(
  cmake ninja-build g++ libvulkan-dev mesa-vulkan-drivers glslc glslang-dev spirv-tools
  libshaderc-dev vulkan-validationlayers vulkan-tools libgtest-dev libbenchmark-dev
  erlang-dev erlang-nox librapidcheck-dev
)

log() { printf '==> %s\n' "$*"; }

# Installs the packages that are missing (checked with dpkg -s); does nothing when all are there.
install_packages() {
  local missing=()
  local pkg
  for pkg in "${NXVK_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    log "packages: all ${#NXVK_PACKAGES[@]} present"
    return 0
  fi
  log "packages: installing ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "need root (or sudo) to apt-get install: ${missing[*]}" >&2; return 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update </dev/null
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" </dev/null
}

# Configures and builds the native core (library, nxvk tool, tests) in $1 with extra CMake args.
build_native() {
  local dir="$1"
  shift
  log "configure native/$dir"
  cmake -S "$NXVK_ROOT/native" -B "$NXVK_ROOT/native/$dir" -G Ninja -DNXVK_WERROR=ON "$@" >/dev/null
  log "build native/$dir (-j$NXVK_JOBS)"
  ninja -C "$NXVK_ROOT/native/$dir" -j "$NXVK_JOBS"
}
