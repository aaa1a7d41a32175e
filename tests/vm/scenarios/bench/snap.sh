#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench: snap.sh PATH start|end -- bench_snap from a child process of the
# host's script: fio runs it as exec_prerun / exec_postrun of each job, so
# that the counters bracket the job's I/O and not fio's start-up.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$BED_SCENARIO_DIR/bench-lib.sh"
bench_snap "$@"
