/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel log messages about one device or one of its donors, each naming
 * its subject the one way: "farswapN: " before a device's message,
 * "farswapN: donor ADDR" before a donor's (and pr_fmt, in farswap.h,
 * "farswap: " before both).  Operators and the tests grep these lines by
 * their prefix, so it is spelt here only.
 *
 * A donor's format starts with its own separator, as its sentence needs:
 * a space when the donor is the subject ("donor 10.0.0.2:7000 failed:
 * ..."), ": " when what follows happened to it or on its session ("donor
 * 10.0.0.2:7000: reconnect failed: ...").
 *
 * The _ratelimited forms are for what a donor's messages or the I/O path
 * can repeat as fast as they come.
 */
#ifndef FARSWAP_LOG_H
#define FARSWAP_LOG_H

#include <linux/printk.h>

/* @print is a pr_*() macro; @dev a struct farswap_dev *. */
#define farswap_dev_log(print, dev, fmt, ...)				\
	print("%s: " fmt, (dev)->name, ##__VA_ARGS__)

/* @print is a pr_*() macro; @donor a struct farswap_donor *, read twice. */
#define farswap_donor_log(print, donor, fmt, ...)			\
	print("%s: donor %s" fmt, (donor)->dev->name, (donor)->name,	\
	      ##__VA_ARGS__)

#define farswap_dev_pr_err(dev, fmt, ...)				\
	farswap_dev_log(pr_err, dev, fmt, ##__VA_ARGS__)
#define farswap_dev_pr_warn(dev, fmt, ...)				\
	farswap_dev_log(pr_warn, dev, fmt, ##__VA_ARGS__)
#define farswap_dev_pr_info(dev, fmt, ...)				\
	farswap_dev_log(pr_info, dev, fmt, ##__VA_ARGS__)
#define farswap_dev_pr_debug(dev, fmt, ...)				\
	farswap_dev_log(pr_debug, dev, fmt, ##__VA_ARGS__)
#define farswap_dev_pr_err_ratelimited(dev, fmt, ...)			\
	farswap_dev_log(pr_err_ratelimited, dev, fmt, ##__VA_ARGS__)
#define farswap_dev_pr_warn_ratelimited(dev, fmt, ...)			\
	farswap_dev_log(pr_warn_ratelimited, dev, fmt, ##__VA_ARGS__)
#define farswap_dev_pr_info_ratelimited(dev, fmt, ...)			\
	farswap_dev_log(pr_info_ratelimited, dev, fmt, ##__VA_ARGS__)

#define farswap_donor_pr_err(donor, fmt, ...)				\
	farswap_donor_log(pr_err, donor, fmt, ##__VA_ARGS__)
#define farswap_donor_pr_warn(donor, fmt, ...)				\
	farswap_donor_log(pr_warn, donor, fmt, ##__VA_ARGS__)
#define farswap_donor_pr_info(donor, fmt, ...)				\
	farswap_donor_log(pr_info, donor, fmt, ##__VA_ARGS__)
#define farswap_donor_pr_debug(donor, fmt, ...)				\
	farswap_donor_log(pr_debug, donor, fmt, ##__VA_ARGS__)
#define farswap_donor_pr_err_ratelimited(donor, fmt, ...)		\
	farswap_donor_log(pr_err_ratelimited, donor, fmt, ##__VA_ARGS__)
#define farswap_donor_pr_warn_ratelimited(donor, fmt, ...)		\
	farswap_donor_log(pr_warn_ratelimited, donor, fmt, ##__VA_ARGS__)
#define farswap_donor_pr_info_ratelimited(donor, fmt, ...)		\
	farswap_donor_log(pr_info_ratelimited, donor, fmt, ##__VA_ARGS__)

#endif /* FARSWAP_LOG_H */
