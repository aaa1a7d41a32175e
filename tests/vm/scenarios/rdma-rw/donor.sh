#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Server side of rdma-rw (and rdma-rw-3): serve one rping, one
# ib_read_lat and one ib_write_lat client from the host, in that order.
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
. "$FARSWAP_SRC/tests/vm/scenarios/rdma-rw/rdma-lib.sh"

dev=$FARSWAP_DEV_host

rdma_serve rping 7174 rping -s -a "$FARSWAP_ADDR" -C 20 -S 4096 -V
rdma_serve read 18515 $RDMA_POLLER ib_read_lat -R -F -d "$dev" -s "$LAT_SIZE" -n "$LAT_ITERS"
rdma_serve write 18525 $RDMA_POLLER ib_write_lat -R -F -d "$dev" -s "$LAT_SIZE" -n "$LAT_ITERS"

bed_wait host "done-$FARSWAP_ROLE" 120
check_kernel_log
