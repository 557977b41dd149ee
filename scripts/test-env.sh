#!/usr/bin/env bash
# Runs a command (the test suite) in the environment a fresh machine gives it, so a package or a
# tool installed by hand cannot make a test pass here and fail on CI's next machine:
#   - PATH is the build's own virtual environment, the CUDA toolkit (part of every machine this
#     project builds on) and the system directories: no pyenv, no ~/.local, no /usr/local/bin;
#   - Python ignores user site-packages and the caller's PYTHONPATH, PYTHONHOME and virtualenv;
#   - the CPU backend keeps no compiled kernels between runs (RETARGET_CACHE_DIR=off unless the
#     caller set it): each test compiles what it tests (the cache's own tests give it a directory).
# Everything else of the caller's environment is kept (OPENBLAS_* among it).
#   scripts/test-env.sh BUILD_DIR COMMAND [ARG...]
set -euo pipefail

if [[ $# -lt 2 || "$1" == "--help" || "$1" == "-h" ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -ge 1 && ( "$1" == "--help" || "$1" == "-h" ) ]] && exit 0 || exit 2
fi
build="$(cd "$1" && pwd)"
shift
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP VIRTUAL_ENV PYENV_ROOT PYENV_VERSION CONDA_PREFIX
export PYTHONNOUSERSITE=1
export RETARGET_CACHE_DIR="${RETARGET_CACHE_DIR-off}"
export PATH="$build/venv/bin:/usr/local/cuda/bin:/usr/sbin:/usr/bin:/sbin:/bin"
exec "$@"
