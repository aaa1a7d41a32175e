/* SPDX-License-Identifier: GPL-2.0 */
/* As the uapi header: glibc's <errno.h> includes <linux/errno.h> too. */
#include <asm/errno.h>
