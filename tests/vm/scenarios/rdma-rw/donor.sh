#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Server side of rdma-rw (and rdma-rw-3): serve one rping and three rdmalat
# clients (READ, WRITE, READ 16 deep) from the host, in that order.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/scenarios/rdma-rw/rdma-lib.sh"

rdma_serve rping 7174 rping -s -a "$FARSWAP_ADDR" -C 20 -S 4096 -V
rdma_serve read 18515 "$FARSWAP_SRC/tests/tools/rdmalat" --serve "$FARSWAP_ADDR" --size "$LAT_SIZE"
rdma_serve write 18525 "$FARSWAP_SRC/tests/tools/rdmalat" --serve "$FARSWAP_ADDR" --size "$LAT_SIZE"
rdma_serve read-16 18535 "$FARSWAP_SRC/tests/tools/rdmalat" --serve "$FARSWAP_ADDR" --size "$LAT_SIZE"

bed_wait host "done-$FARSWAP_ROLE" 120
check_kernel_log
