/* SPDX-License-Identifier: GPL-2.0 */
/*
 * farswap's tracepoints: the data path of a request (queue_rq, the work
 * requests posted for it, their completions, its end), reads moving to
 * another replica, and donor session state changes.
 *
 *   echo 1 > /sys/kernel/tracing/events/farswap/enable
 *
 * A request is named by its device, hardware queue and tag.  A request
 * sent back to blk-mq after queue_rq took it (no DMA mapping now) shows a
 * farswap_queue_rq again when it is retried, and its farswap_end reports
 * the time from that last queue_rq, as the latency histograms do.  A
 * write refused for want of write budget was not taken: no event.  A
 * staged write (stage.c) has no request: its tag is -1 - its staging
 * slot, and its events are its posts, their completions and its end
 * (written, or given up), after its request's farswap_queue_rq and
 * farswap_end.
 *
 * Disabled, each tracepoint is a static branch: every value an event
 * records is computed in its TP_fast_assign, not at the call site.
 * CREATE_TRACE_POINTS is defined in trace.c only.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM farswap

#if !defined(_FARSWAP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _FARSWAP_TRACE_H

#include <linux/blk-mq.h>
#include <linux/ktime.h>
#include <linux/tracepoint.h>

#include "farswap.h"

#ifndef TRACE_HEADER_MULTI_READ
/* A request's operation as the events record it (enum req_op is bitwise). */
enum farswap_trace_op {
	FARSWAP_TRACE_READ,
	FARSWAP_TRACE_WRITE,
	FARSWAP_TRACE_DISCARD,
	FARSWAP_TRACE_FLUSH,
	FARSWAP_TRACE_OTHER,
};

/* A staged write (stage.c) is a write with no request. */
static inline u8 farswap_trace_op(const struct farswap_cmd *cmd)
{
	if (!cmd->rq)
		return FARSWAP_TRACE_WRITE;
	switch (req_op(cmd->rq)) {
	case REQ_OP_READ:
		return FARSWAP_TRACE_READ;
	case REQ_OP_WRITE:
		return FARSWAP_TRACE_WRITE;
	case REQ_OP_DISCARD:
		return FARSWAP_TRACE_DISCARD;
	case REQ_OP_FLUSH:
		return FARSWAP_TRACE_FLUSH;
	default:
		return FARSWAP_TRACE_OTHER;
	}
}
#endif /* TRACE_HEADER_MULTI_READ */

/* Symbols for userspace readers of the binary format (perf, trace-cmd). */
TRACE_DEFINE_ENUM(FARSWAP_TRACE_READ);
TRACE_DEFINE_ENUM(FARSWAP_TRACE_WRITE);
TRACE_DEFINE_ENUM(FARSWAP_TRACE_DISCARD);
TRACE_DEFINE_ENUM(FARSWAP_TRACE_FLUSH);
TRACE_DEFINE_ENUM(FARSWAP_TRACE_OTHER);

#define show_farswap_op(op)						\
	__print_symbolic(op,						\
			 { FARSWAP_TRACE_READ,		"read" },	\
			 { FARSWAP_TRACE_WRITE,		"write" },	\
			 { FARSWAP_TRACE_DISCARD,	"discard" },	\
			 { FARSWAP_TRACE_FLUSH,		"flush" },	\
			 { FARSWAP_TRACE_OTHER,		"other" })

TRACE_DEFINE_ENUM(FARSWAP_FAILOVER_TRANSPORT);
TRACE_DEFINE_ENUM(FARSWAP_FAILOVER_TIMEOUT);
TRACE_DEFINE_ENUM(FARSWAP_FAILOVER_INTEGRITY);

#define show_farswap_failover(why)					\
	__print_symbolic(why,						\
			 { FARSWAP_FAILOVER_TRANSPORT,	"transport" },	\
			 { FARSWAP_FAILOVER_TIMEOUT,	"timeout" },	\
			 { FARSWAP_FAILOVER_INTEGRITY,	"integrity" })

TRACE_DEFINE_ENUM(FARSWAP_DONOR_NEW);
TRACE_DEFINE_ENUM(FARSWAP_DONOR_CONNECTING);
TRACE_DEFINE_ENUM(FARSWAP_DONOR_LIVE);
TRACE_DEFINE_ENUM(FARSWAP_DONOR_FAILED);
TRACE_DEFINE_ENUM(FARSWAP_DONOR_WAITING);
TRACE_DEFINE_ENUM(FARSWAP_DONOR_DELETING);

/* The names farswap_donor_state_name() gives, as sysfs shows them. */
#define show_farswap_donor_state(s)					\
	__print_symbolic(s,						\
			 { FARSWAP_DONOR_NEW,		"new" },	\
			 { FARSWAP_DONOR_CONNECTING,	"connecting" },	\
			 { FARSWAP_DONOR_LIVE,		"live" },	\
			 { FARSWAP_DONOR_FAILED,	"failed" },	\
			 { FARSWAP_DONOR_WAITING,	"reconnecting" }, \
			 { FARSWAP_DONOR_DELETING,	"deleting" })

/* The work completion statuses seen in practice; others print as numbers. */
TRACE_DEFINE_ENUM(IB_WC_SUCCESS);
TRACE_DEFINE_ENUM(IB_WC_LOC_LEN_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_PROT_ERR);
TRACE_DEFINE_ENUM(IB_WC_WR_FLUSH_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_RNR_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_FATAL_ERR);
TRACE_DEFINE_ENUM(IB_WC_GENERAL_ERR);

#define show_farswap_wc_status(st)					\
	__print_symbolic(st,						\
			 { IB_WC_SUCCESS,		"ok" },		\
			 { IB_WC_LOC_LEN_ERR,		"local_length" }, \
			 { IB_WC_LOC_PROT_ERR,		"local_protection" }, \
			 { IB_WC_WR_FLUSH_ERR,		"flushed" },	\
			 { IB_WC_REM_ACCESS_ERR,	"remote_access" }, \
			 { IB_WC_REM_OP_ERR,		"remote_operation" }, \
			 { IB_WC_RETRY_EXC_ERR,		"retry_exceeded" }, \
			 { IB_WC_RNR_RETRY_EXC_ERR,	"rnr_retry_exceeded" }, \
			 { IB_WC_FATAL_ERR,		"fatal" },	\
			 { IB_WC_GENERAL_ERR,		"general" })

/* A request as every data path event names it: dev, hwq, tag. */
#define farswap_trace_assign_rq(cmd)					\
	do {								\
		memcpy(__entry->dev, (cmd)->dev->name, FARSWAP_NAME_LEN); \
		__entry->hwq = (cmd)->hctx_idx;				\
		__entry->tag = farswap_cmd_tag(cmd);			\
	} while (0)

TRACE_EVENT(farswap_queue_rq,
	TP_PROTO(struct farswap_cmd *cmd),
	TP_ARGS(cmd),
	TP_STRUCT__entry(
		__array(char, dev, FARSWAP_NAME_LEN)
		__field(u16, hwq)
		__field(int, tag)
		__field(u8, op)
		__field(u64, sector)
		__field(u32, bytes)
	),
	TP_fast_assign(
		farswap_trace_assign_rq(cmd);
		__entry->op = farswap_trace_op(cmd);
		__entry->sector = farswap_cmd_pos(cmd) >> SECTOR_SHIFT;
		__entry->bytes = farswap_cmd_bytes(cmd);
	),
	TP_printk("dev=%s hwq=%u tag=%d op=%s sector=%llu bytes=%u",
		  __entry->dev, __entry->hwq, __entry->tag,
		  show_farswap_op(__entry->op), __entry->sector,
		  __entry->bytes)
);

TRACE_EVENT(farswap_post,
	TP_PROTO(struct farswap_cmd *cmd, struct farswap_leg *c,
		 unsigned int nwr),
	TP_ARGS(cmd, c, nwr),
	TP_STRUCT__entry(
		__array(char, dev, FARSWAP_NAME_LEN)
		__field(u16, hwq)
		__field(int, tag)
		__field(u8, op)
		__field(u8, leg)
		__field(u8, donor)
		__field(u8, retry)
		__field(u32, nwr)
	),
	TP_fast_assign(
		farswap_trace_assign_rq(cmd);
		__entry->op = farswap_trace_op(cmd);
		__entry->leg = c - cmd->leg;
		__entry->donor = c->place.donor->index;
		__entry->retry = cmd->tried != 0;
		__entry->nwr = nwr;
	),
	TP_printk("dev=%s hwq=%u tag=%d op=%s leg=%u donor=%u nwr=%u retry=%u",
		  __entry->dev, __entry->hwq, __entry->tag,
		  show_farswap_op(__entry->op), __entry->leg, __entry->donor,
		  __entry->nwr, __entry->retry)
);

TRACE_EVENT(farswap_complete,
	TP_PROTO(struct farswap_leg *c, const struct ib_wc *wc),
	TP_ARGS(c, wc),
	TP_STRUCT__entry(
		__array(char, dev, FARSWAP_NAME_LEN)
		__field(u16, hwq)
		__field(int, tag)
		__field(u8, donor)
		__field(u32, status)
	),
	TP_fast_assign(
		farswap_trace_assign_rq(c->cmd);
		__entry->donor = c->place.donor->index;
		__entry->status = wc->status;
	),
	TP_printk("dev=%s hwq=%u tag=%d donor=%u status=%s",
		  __entry->dev, __entry->hwq, __entry->tag, __entry->donor,
		  show_farswap_wc_status(__entry->status))
);

TRACE_EVENT(farswap_end,
	TP_PROTO(struct farswap_cmd *cmd, blk_status_t status),
	TP_ARGS(cmd, status),
	TP_STRUCT__entry(
		__array(char, dev, FARSWAP_NAME_LEN)
		__field(u16, hwq)
		__field(int, tag)
		__field(u8, op)
		__field(int, error)
		__field(u64, ns)
	),
	TP_fast_assign(
		farswap_trace_assign_rq(cmd);
		__entry->op = farswap_trace_op(cmd);
		__entry->error = blk_status_to_errno(status);
		/* start_ns: queue_rq's, the latency histograms' start */
		__entry->ns = ktime_get_ns() - cmd->start_ns;
	),
	TP_printk("dev=%s hwq=%u tag=%d op=%s error=%d ns=%llu",
		  __entry->dev, __entry->hwq, __entry->tag,
		  show_farswap_op(__entry->op), __entry->error, __entry->ns)
);

TRACE_EVENT(farswap_failover,
	TP_PROTO(struct farswap_cmd *cmd, struct farswap_donor *from,
		 struct farswap_donor *to),
	TP_ARGS(cmd, from, to),
	TP_STRUCT__entry(
		__array(char, dev, FARSWAP_NAME_LEN)
		__field(u16, hwq)
		__field(int, tag)
		__field(u64, sector)
		__field(u8, from)
		__field(u8, to)
		__field(u8, reason)
	),
	TP_fast_assign(
		farswap_trace_assign_rq(cmd);
		__entry->sector = farswap_cmd_pos(cmd) >> SECTOR_SHIFT;
		__entry->from = from->index;
		__entry->to = to->index;
		__entry->reason = cmd->failover_why;
	),
	TP_printk("dev=%s hwq=%u tag=%d sector=%llu from=%u to=%u reason=%s",
		  __entry->dev, __entry->hwq, __entry->tag, __entry->sector,
		  __entry->from, __entry->to,
		  show_farswap_failover(__entry->reason))
);

TRACE_EVENT(farswap_donor_state,
	TP_PROTO(struct farswap_donor *donor, enum farswap_donor_state old,
		 enum farswap_donor_state new),
	TP_ARGS(donor, old, new),
	TP_STRUCT__entry(
		__array(char, dev, FARSWAP_NAME_LEN)
		__array(char, name, sizeof(((struct farswap_donor *)0)->name))
		__field(u8, donor)
		__field(u8, old)
		__field(u8, new)
		__field(u32, gen)
	),
	TP_fast_assign(
		memcpy(__entry->dev, donor->dev->name, FARSWAP_NAME_LEN);
		memcpy(__entry->name, donor->name, sizeof(__entry->name));
		__entry->donor = donor->index;
		__entry->old = old;
		__entry->new = new;
		__entry->gen = READ_ONCE(donor->gen);
	),
	TP_printk("dev=%s donor=%u addr=%s gen=%u old=%s new=%s",
		  __entry->dev, __entry->donor, __entry->name, __entry->gen,
		  show_farswap_donor_state(__entry->old),
		  show_farswap_donor_state(__entry->new))
);

#endif /* _FARSWAP_TRACE_H */

/* Out of the kernel tree: define_trace.h finds this file by -I$(src). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
