#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
set -euo pipefail
. "$FARSWAP_SRC/tests/vm/guest-lib.sh"
# Must fail fast: the host exits without ever signalling.
bed_wait host never 100
