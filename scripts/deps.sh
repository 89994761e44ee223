# Sourced by the scripts: make sure the Debian packages mpitopo needs are
# installed. As root, installs what is missing with apt-get; otherwise prints
# the exact apt-get line and stops.
mpitopo_require_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "mpitopo: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "mpitopo: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# What building and testing needs, for both MPIs. python3: the build of the
# MPI layer generates the shim's and the tracer's bindings
# (scripts/gen_bindings.py); the tests run Python scripts too.
MPITOPO_BUILD_PACKAGES=(cmake make gcc pkg-config python3 libhwloc-dev hwloc libcmocka-dev
  libopenmpi-dev openmpi-bin libmpich-dev mpich libscotch-dev libmetis-dev libjson-c-dev)
MPITOPO_TEST_PACKAGES=(clang libclang-rt-14-dev gfortran doxygen help2man ibsim-utils opensm infiniband-diags
  libsimgrid-dev)
