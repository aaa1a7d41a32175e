#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The rdma-rw host script loops over every donor in FARSWAP_ROLES.
exec bash "$FARSWAP_SRC/tests/vm/scenarios/rdma-rw/host.sh"
