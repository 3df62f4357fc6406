#!/usr/bin/env bash
# Fetch, on a machine with a package registry, the wheels benchmarks/gpu/run.sh installs on the GPU
# machine (which reaches none): numba-cuda as tested here, for the GPU machine's Python (3.12 by
# default), into .whl/ (ignored by git; the device tool carries it: carry [".whl", ...]).  That
# machine's image has numba, the CUDA toolkit, cuda-bindings and numpy already; llvmlite (60 MB)
# would not fit the 64 MiB that travels, so Numba itself is the image's.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYVER=${PYVER:-3.12}
NUMBA_CUDA=${NUMBA_CUDA:-0.30.4}
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
rm -rf .whl && mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PYVER" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl "numba-cuda==$NUMBA_CUDA"
ls -la .whl
