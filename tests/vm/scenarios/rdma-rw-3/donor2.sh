#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every donor serves the host exactly as in rdma-rw.
exec bash "$FARSWAP_SRC/tests/vm/scenarios/rdma-rw/donor.sh"
