#!/usr/bin/env bash
# Provisions the Python the build and the tests run: a virtual environment made from Debian's
# /usr/bin/python3 (python3-venv, installed by scripts/install-deps.sh) with the pinned packages of
# scripts/python-requirements.txt. No python3 from PATH and no user or system site-packages are
# used, so a package installed by hand cannot make a test pass.
#   scripts/setup-python.sh VENV_DIR
# Idempotent: when VENV_DIR was made from the same requirements it returns at once. CMake runs it
# when a build with tests is configured (RETARGET_PYTHON).
set -euo pipefail

if [[ $# -ne 1 || "$1" == "--help" || "$1" == "-h" ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -eq 1 ]] && exit 0 || exit 2
fi
venv="$1"
here="$(cd "$(dirname "$0")" && pwd)"
requirements="$here/python-requirements.txt"
stamp="$venv/.retarget-requirements"

if [[ -x "$venv/bin/python3" && -f "$stamp" ]] && cmp -s "$requirements" "$stamp"; then
  exit 0
fi
if [[ ! -x /usr/bin/python3 ]] || ! /usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "setup-python: /usr/bin/python3 with its venv module is missing: run scripts/install-deps.sh" >&2
  exit 1
fi

echo "setup-python: creating $venv from $requirements" >&2
rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
PYTHONNOUSERSITE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$venv/bin/python3" -m pip install --quiet --no-input --require-virtualenv -r "$requirements" >&2
cp "$requirements" "$stamp"
