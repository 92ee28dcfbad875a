#!/bin/bash
# The JAX backend and the sampler on a borrowed GPU, as docs/sampler.md
# ("On a GPU") reports them: one command, each step under its own time
# limit so that one slow sampler cannot take the others' time.
#
#   bash tools/device_run.sh OUTDIR      # wheels for what the GPU image lacks in .whl/
#
# .whl/ holds arviz, blackjax, gast, black and their missing needs
# (docs/sampler.md lists them); they go to /tmp/site, ahead of the image's.
set -u
out=${1:?usage: tools/device_run.sh OUTDIR}
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 60 python3 tools/device_check.py --sizes 4096 --repeats 3 --selections sweep masked
bench() {  # SECONDS SAMPLER TARGET
    timeout "$1" python3 tools/bench_mcmc.py --samplers "$2" --targets "$3" --chains 1024 \
        --warmup 200 --draws 200 --out "$out/gpu.json" --append 2>&1 | grep -v -i "arviz\|warn"
    echo "exit ${PIPESTATUS[0]} ($2 on $3)"
}
# Limits from the H200's times (docs/sampler.md): first call plus second,
# with room.  numpyro (about blackjax's time) does not fit beside them in
# one 10-minute command.
bench 80 ours-jax gaussian100
bench 90 blackjax gaussian100
bench 80 ours-jax funnel
bench 130 blackjax funnel
bench 40 ours-jax eight_schools
bench 40 blackjax eight_schools
