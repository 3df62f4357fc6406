#!/usr/bin/env bash
# The GPU check, one prepared run on a machine with an NVIDIA GPU (and no package registry):
#   1. installs the wheels brought along in .whl/ (benchmarks/gpu/wheels.sh fetches them), if any;
#      contactlab itself runs from src/ (PYTHONPATH), so nothing is built there;
#   2. runs tests/test_gpu.py on the real device (CONTACTLAB_TEST_DEVICE=cuda: no simulator), the
#      same comparisons with the CPU engine as in CI;
#   3. runs benchmarks/gpu/bench.py: GPU against the machine's CPU cores on scale.py's scenes.
# Everything it writes goes to $OUT (the device tool brings it back), default benchmarks/out/gpu.
# Budget (issue 45): under 8 minutes in all; TEST_SECONDS and BENCH_SECONDS bound the two parts,
# TESTS selects tests (-k), SIZES and SCENES the benchmark.
#
#   device run: carry [".whl", "benchmarks/out/settled-positions-10000.npz"],
#               command "bash benchmarks/gpu/run.sh"
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-benchmarks/out/gpu}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
if compgen -G ".whl/*.whl" > /dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        || { echo "run.sh: installing .whl/ failed" >&2; exit 2; }
    export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD/src:$PWD/examples${PYTHONPATH:+:$PYTHONPATH}"
export CONTACTLAB_TEST_DEVICE=cuda PYTHONUNBUFFERED=1 CONTACTLAB_CACHE_DIR=/tmp/contactlab-cache
unset NUMBA_ENABLE_CUDASIM
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
    "$PY" -c "import sys, numba, numpy, numba_cuda; from contactlab.gpu import available; \
print('python', sys.version.split()[0], 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__, \
'numpy', numpy.__version__, 'cpus', __import__('os').cpu_count()); print('GPU:', available() or 'available')"
} 2>&1 | tee "$OUT/machine.txt"
if ! "$PY" -c "import sys; from contactlab.gpu import available; r = available(); print(r or ''); sys.exit(1 if r else 0)"; then
    echo "run.sh: no GPU run is possible here (above); nothing measured" >&2
    exit 3
fi
status=0
TESTS=${TESTS:-"hertz_mindlin or user_law or periodic or bonds or cylinder or checkpoint or sensors or refuses or switched or blow or prefix or wrap or stored or stays or watchdog"}
timeout "${TEST_SECONDS:-210}" "$PY" -m pytest -q -n 4 -p no:cacheprovider tests/test_gpu.py -k "$TESTS" 2>&1 \
    | tee "$OUT/tests.log" || status=1
# shellcheck disable=SC2086
timeout "${BENCH_SECONDS:-240}" "$PY" benchmarks/gpu/bench.py --scenes ${SCENES:-lattice packing falling} \
    --n ${SIZES:-100000 1000000 10000000} --cpu-max-n "${CPU_MAX_N:-1000000}" --timeout 200 \
    --json "$OUT/gpu.json" --plot "$OUT/gpu.png" --cpu2 benchmarks/gpu/cpu2-scale.json 2>&1 \
    | tee "$OUT/bench.log" || status=1
exit $status
