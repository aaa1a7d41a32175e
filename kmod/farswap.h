/* SPDX-License-Identifier: GPL-2.0 */
/*
 * farswap: a swap block device whose pages live in other machines' memory,
 * moved by one-sided RDMA.  Internal structures shared by the module's
 * files.
 *
 * Words, one per thing:
 *  - chunk: 2 MiB of the device's space, the unit of placement.
 *  - replica (or copy): one copy of a chunk on one donor; its placement
 *    (struct farswap_placement) says where it lives.  It serves when it
 *    is live and up to date (replica.h).
 *  - slot: a chunk's place in a remote slab (struct farswap_rslab), and
 *    nothing else.
 *  - leg: the part of a request that goes to one replica: a write has one
 *    per serving replica, a read one (cmd->leg[], struct farswap_leg).
 *  - ctldev: the misc device /dev/farswap-ctl (ctldev.c), where commands
 *    are written; ctrl: the control channel of a donor session, on its
 *    queue pair 0 (ctrl.c), whose requests in flight are calls.
 *
 * Objects and their lifetimes:
 *  - struct farswap_dev: one /dev/farswapN, from attach to detach.  Owns
 *    the blk-mq disk, the chunk map and its donors.
 *  - struct farswap_donor: one donor machine, for the device's lifetime.
 *    Its RDMA session (PD, queues) comes and goes with the connection; the
 *    session generation @gen tells placements of an old session apart.
 *  - struct farswap_queue: one RC queue pair of a donor session.  qid 0
 *    carries control messages, qid 1..n carry page data, one per blk-mq
 *    hardware queue.
 *  - struct farswap_chunk: one 2 MiB chunk of the device's space and
 *    where its pages live (its placements: a slot in a remote slab).
 *  - struct farswap_rslab: a donor slab the device holds, carved into
 *    chunk slots; acquired by the power of two choices when no held slab
 *    has a free slot, given back when its last chunk is discarded.  A
 *    chunk's placement points at it, so the record outlives its donor's
 *    session until the last chunk placed in it lets go (slots.h).
 *  - struct farswap_cmd: the per-request context, preallocated by blk-mq.
 *
 * Locking:
 *  - farswap_devs_mutex: the device list and its index IDA, attach and
 *    detach.
 *  - farswap_teardown_rwsem: held for reading by a device's teardown from
 *    the moment it leaves the device list, so that an RDMA device's
 *    removal, which walks that list, can wait for the teardowns it did
 *    not see.  Taken inside farswap_devs_mutex.  A teardown holding it
 *    waits in del_gendisk for the disk's open_mutex, so nothing under
 *    open_mutex (open, release) may take farswap_devs_mutex.
 *  - dev->open_lock (spinlock): open_count and detaching; a leaf, the one
 *    lock open and release take.
 *  - dev->map_mutex: serialises the work items that change placements
 *    and may sleep on the control channel (bind, slab release, migration,
 *    loss).  Taken before any chunk lock.
 *  - chunk->lock (irqsave spinlock): a chunk's state, placements, page
 *    bitmaps and held requests; taken by the I/O path.
 *  - dev->rslab_lock (irqsave spinlock): the held remote slabs and their
 *    slot bitmaps; taken inside a chunk lock (a first write takes a free
 *    slot without leaving the I/O path).
 *  - stage->lock (irqsave spinlock): a write queue's staging slots and
 *    staged writes waiting to be posted; taken alone, never with a chunk
 *    lock (a staged write's chunk list is the chunk lock's).
 *  - donor->lock (mutex): connect and teardown of a donor session.
 *  - donor->state_lock (spinlock): donor state, read under RCU by the I/O
 *    path: teardown moves the state away from LIVE, then waits an RCU grace
 *    period, so no work request is posted to a queue being destroyed.
 *
 * Files (kmod/README.md says more; prototypes below go by file):
 *  - main.c: module load, parameters, /sys/kernel/farswap/, ib_client;
 *    ctldev.c: /dev/farswap-ctl; dev.c: the blk-mq disk, attach, detach;
 *    sysfs.c: every sysfs attribute; debugfs.c.
 *  - io.c: the data path, a request to RDMA READs or WRITEs; stage.c:
 *    writes done once copied into staging, written from there; check.c:
 *    the check of every page written and read back (tags or seals).
 *  - conn.c: a donor's session (rdma_cm, queue pairs, handshake,
 *    keepalive, failure, reconnect); ctrl.c: its control messages.
 *  - chunk.c: the chunk table (bind, release, loss, revoke); rslab.c: the
 *    remote slabs and their slots, donor choice, room ahead; move.c: the
 *    copy engine (migrate, repair, spread, heal, the reclaim queue).
 *  - log.h: kernel log messages about a device or one of its donors.
 *  - Free of RDMA, KUnit-tested: chunkmap, stagemap, slots, pick, replica,
 *    donor_state, latency, admit, args, tag, seal, auth.
 * The layers call downwards (main.c, ctldev.c, dev.c, sysfs.c, then the
 * rest), but for one knot: io.c, stage.c, conn.c, ctrl.c, chunk.c, rslab.c
 * and move.c call each other, as a donor's failure reaches the chunks and
 * held requests, and a chunk's move needs sessions and the data path.
 */
#ifndef FARSWAP_H
#define FARSWAP_H

#undef pr_fmt
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/completion.h>
#include <linux/kfifo.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/semaphore.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "farswap_proto.h"
#include "admit.h"
#include "args.h"
#include "auth.h"
#include "pick.h"
#include "replica.h"
#include "chunkmap.h"
#include "slots.h"
#include "donor_state.h"
#include "latency.h"
#include "stagemap.h"

/* dkms.conf's PACKAGE_VERSION (tests/dkms checks the two agree). */
#define FARSWAP_MODULE_VERSION	"0.3.0"

/* Segments of one request; THP swap-out is one contiguous segment. */
#define FARSWAP_MAX_SEGS	64
/* Bytes of one request: a 2 MiB THP swap-out. */
#define FARSWAP_MAX_IO_BYTES	(2u << 20)
/* Largest RDMA transfer of a chunk copy between donors (repair, reclaim). */
#define FARSWAP_COPY_PIECE_BYTES	(64u << 10)
/* Pieces a device page can come in: direct I/O aligns them to sectors. */
#define FARSWAP_PAGE_PIECES	(FARSWAP_PAGE_BYTES >> SECTOR_SHIFT)
/* Work requests reserved on each I/O queue for chunk migration copies. */
#define FARSWAP_SQ_RESERVE	4
/* Reclaim requests a donor may have outstanding (a kfifo: a power of 2). */
#define FARSWAP_RECLAIM_DEPTH	(FARSWAP_CTRL_DEPTH / 2)
/* Control messages in flight from the host. */
#define FARSWAP_CTRL_CALLS	(FARSWAP_CTRL_DEPTH / 2)
/*
 * A staging slot (stage.c) holds one write, in a request's bounce pages:
 * a staging device's writes are at most this large (max_hw_sectors).
 */
#define FARSWAP_STAGE_SLOT_BYTES	FARSWAP_SEAL_IO_BYTES

struct farswap_dev;
struct farswap_donor;

/* Module parameters: defaults copied into each device at attach. */
struct farswap_params {
	unsigned int nr_queues;		/* per direction: reads, and writes */
	unsigned int write_inflight_kb;
	unsigned int queue_depth;
	unsigned int io_timeout_ms;
	unsigned int connect_timeout_ms;
	unsigned int ctrl_timeout_ms;
	unsigned int reconnect_delay_ms;
	unsigned int keepalive_ms;
	unsigned int replicas;		/* 0 at load: 2 with two donors, else 1 */
	unsigned int repair_kbps;	/* re-replication rate; 0 = no limit */
	unsigned int resume_grace_ms;	/* resume.c; 0 = never wait */
	unsigned int stage_kb;		/* stage.c: per write queue; 0 = off */
	enum farswap_tag_alg integrity;
	bool encrypt;			/* seal.h */
	bool insecure_no_auth;		/* attach without key= allowed */
	enum farswap_read_policy read_policy;	/* sysfs changes a device's */
	unsigned int ack_timeout;
	bool sync_io;
};

extern struct farswap_params farswap_defaults;
/* The module's identity: devices attached without host_id= use it. */
extern u8 farswap_host_id[FARSWAP_ID_LEN];
extern enum farswap_host_id_source farswap_host_id_source;

/* One RC queue pair to a donor. */
struct farswap_queue {
	struct farswap_donor *donor;
	u16 qid;			/* 0: control; 1..n: I/O */
	struct rdma_cm_id *cm_id;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 sq_depth;
	bool established;
	/* jiffies of the last completion: a slow queue is not a dead one */
	unsigned long last_progress;

	/* Connection handshake, completed by the rdma_cm handler. */
	struct completion cm_done;
	int cm_error;
};

/* A control call in flight: its request's send buffer, maybe its reply. */
struct farswap_ctrl_inflight {
	struct farswap_donor *donor;
	struct ib_cqe send_cqe;
	union farswap_msg *buf;		/* DMA-mapped send buffer */
	u64 dma;
	u64 cookie;			/* 0 when no reply is awaited */
	struct completion send_done;
	struct completion reply_done;
	int send_status;
	/*
	 * Under call_lock.  A caller that gave up waiting for its SEND's
	 * completion abandons the call (the buffer is the HCA's until the
	 * SEND completes or is flushed); the completion then frees it.
	 */
	bool send_pending;
	bool abandoned;
	union farswap_msg reply;
};

/* A posted control receive. */
struct farswap_ctrl_recv {
	struct farswap_donor *donor;
	struct ib_cqe cqe;
	union farswap_msg *buf;
	u64 dma;
};

/* A reclaim request from a donor, queued for the reclaim work. */
struct farswap_reclaim_item {
	u32 remote_id;
	u32 deadline_ms;
	u64 cookie;
	u32 gen;			/* session that asked */
};

struct farswap_donor_stats {
	atomic64_t reads;
	atomic64_t writes;
	atomic64_t read_bytes;
	atomic64_t write_bytes;
	atomic64_t errors;		/* failed RDMA operations */
	atomic64_t reconnects;
	atomic64_t migrated_out;	/* slabs moved away on reclaim */
	atomic64_t revoked;		/* slabs the donor took back by force */
	atomic64_t resumed;		/* slabs taken back after its restart */
	atomic64_t resume_refused;	/* slabs it did not keep */
	atomic_t slabs;			/* slabs of the device bound here */
	struct farswap_lat_hist read_lat;
	struct farswap_lat_hist write_lat;
};

struct farswap_donor {
	struct farswap_dev *dev;
	unsigned int index;
	struct sockaddr_storage addr;
	char name[64];			/* "10.0.0.2:7471", for logs */

	struct mutex lock;		/* connect and teardown */
	spinlock_t state_lock;
	enum farswap_donor_state state;
	/* Under state_lock: an error hit the connect attempt under way. */
	bool attempt_failed;
	/*
	 * Being removed from a live device (members.c): placement takes no
	 * new slab on it (READ_ONCE), and once set it stays, the donor
	 * stopped, until detach frees it.
	 */
	bool removing;
	u32 gen;			/* bumped by every successful connect */

	/* Session facts from the donor's accept. */
	u64 session;
	/* it proved the device's key, or none is needed (READ_ONCE) */
	bool proven;
	/*
	 * Which of the device's pinned donor keys (pair_keys) this session
	 * proved, -1: none pinned.  Under donor->lock, shown in stat.
	 */
	int pinned_key;
	/*
	 * Session keys (FARSWAP_FEAT_KX, auth.h).  kx_tfm is this donor's
	 * HMAC-SHA256 transform, made with it when the device has a key,
	 * keyed with each session's key by its handshake.  The features of
	 * the control QP's conn_req and conn_rep, as sent (the transcript
	 * binds them).  Once the handshake is done every control message
	 * is tagged: tx_tagged and tx_seq under tag_lock, which keeps the
	 * tags' order the posts' order; rx_tagged and rx_seq in receive
	 * completions alone.  All reset by each connect.
	 */
	struct crypto_shash *kx_tfm;
	u32 req_features;
	u32 rep_features;
	bool kx;
	bool tx_tagged;
	bool rx_tagged;
	u64 tx_seq;
	u64 rx_seq;
	spinlock_t tag_lock;
	u8 version;
	u32 features;			/* FARSWAP_FEAT_* both sides support */
	u64 slab_size;
	u32 slabs_total;
	u32 slabs_free;			/* as last heard (READ_ONCE) */
	u8 donor_id[FARSWAP_ID_LEN];
	/* Failure domain (INFO_REP, or "donor:<id>"); under dev->dom_lock. */
	char domain[FARSWAP_DOMAIN_LEN + 1];
	char last_error[FARSWAP_ERR_LEN];

	/* RDMA resources of the current session. */
	struct ib_device *ibdev;
	struct ib_pd *pd;
	u32 max_sge;			/* SGEs per RDMA WRITE */
	u32 max_read_sge;		/* SGEs per RDMA READ */
	atomic_t sync_inflight;		/* farswap_rdma_sync() calls posted */
	struct farswap_queue ctrl;
	/*
	 * I/O queues: one per blk-mq hardware queue, writes first (hctx
	 * 0..n-1), then reads (hctx n..2n-1), so that swap-ins never wait
	 * behind a backlog of swap-outs.
	 */
	struct farswap_queue *ioq;
	unsigned int nr_ioq;

	/* Control channel: buffers live as long as the donor. */
	union farswap_msg *ctrl_bufs;
	struct farswap_ctrl_recv recv[FARSWAP_CTRL_DEPTH];
	struct farswap_ctrl_inflight call[FARSWAP_CTRL_CALLS];
	struct semaphore call_sem;
	spinlock_t call_lock;
	unsigned long call_busy;	/* bitmap over call[] */
	u32 cookie_seq;
	bool bufs_mapped;

	/*
	 * Reclaim requests, and slabs granted after their request timed out
	 * (to be given back), waiting for the reclaim work.
	 */
	spinlock_t reclaim_lock;
	DECLARE_KFIFO(reclaim, struct farswap_reclaim_item,
		      FARSWAP_RECLAIM_DEPTH);
	u32 late_grant[FARSWAP_CTRL_CALLS];
	u32 late_gen;			/* session of the late grants */
	unsigned int nr_late_grants;
	bool stopping;			/* no more reclaim work: detaching */
	struct work_struct reclaim_work;

	struct work_struct err_work;
	struct delayed_work reconnect_work;
	struct delayed_work keepalive_work;
	unsigned int reconnect_backoff_ms;
	u32 lost_gen;			/* session whose slabs the loss work frees */

	/*
	 * Resume (resume.c): after a session of a donor that keeps its
	 * slabs across a restart (FARSWAP_FEAT_RESUME) failed, its slabs of
	 * sessions resume_first..resume_last wait until resume_until
	 * (jiffies) for it to come back, instead of being given up at once.
	 * A range: a session that fails while it resumes leaves slabs of
	 * two.  Written under state_lock, read locklessly (READ_ONCE).
	 */
	bool resume_open;
	u32 resume_first;
	u32 resume_last;
	unsigned long resume_until;
	struct work_struct resume_work;
	struct delayed_work resume_expire_work;

	struct farswap_donor_stats stats;
	u64 read_ewma_ns;		/* recent read latency, picks replicas */
	struct kobject *dir;		/* /sys/block/farswapN/donors/<index> */
};

/* A donor slab this device holds, carved into chunk slots. */
enum farswap_rslab_state {
	FARSWAP_RSLAB_LIVE,		/* slots may be taken */
	FARSWAP_RSLAB_RECLAIMING,	/* the donor wants it back: chunks move */
	FARSWAP_RSLAB_FREEING,		/* empty, being given back */
	FARSWAP_RSLAB_REVOKED,		/* the donor took it back (SLAB_REVOKE) */
};

struct farswap_rslab {
	struct list_head node;		/* on dev->rslabs */
	struct farswap_donor *donor;
	u32 gen;			/* donor session that granted it */
	u32 remote_id;			/* donor's slab id */
	u64 addr;
	u32 rkey;
	u64 resume;			/* token to resume it; 0: none */
	u8 state;			/* enum farswap_rslab_state */
	struct farswap_slots slots;	/* and the record's lifetime */
	unsigned long map[];		/* slots.map: one bit per slot */
};

/* Where one copy of a chunk lives. */
struct farswap_placement {
	struct farswap_donor *donor;
	u32 gen;			/* donor session that granted it */
	struct farswap_rslab *rslab;
	u32 slot;			/* chunk slot within the remote slab */
	u64 addr;			/* remote address of the chunk */
	u32 rkey;
	struct farswap_damage damage;	/* pages another copy holds intact */
};

struct farswap_chunk {
	spinlock_t lock;
	u8 state;			/* enum farswap_chunk_state */
	u8 nr_places;
	u8 uptodate;		/* bit r: place[r] holds every written page */
	struct farswap_placement place[FARSWAP_MAX_REPLICAS];
	struct farswap_pages pages;
	unsigned long written[BITS_TO_LONGS(FARSWAP_CHUNK_PAGES)];
	unsigned long lost[BITS_TO_LONGS(FARSWAP_CHUNK_PAGES)];
	atomic_t inflight_reads;
	atomic_t inflight_writes;
	struct list_head held;		/* requests waiting on this chunk */
	/*
	 * Its staged writes not yet written (struct farswap_staged in their
	 * commands), oldest first, and the requests that wait for one of
	 * them to be written (stagemap.h).
	 */
	struct list_head staged;
	struct list_head stage_wait;
	struct list_head bind_node;	/* on dev->bind_list */
};

/* Requests and their bytes: the block layer counts them (its stat file). */
struct farswap_dev_stats {
	atomic64_t zero_reads;		/* reads served without the network */
	atomic64_t errors;		/* requests failed with an error */
	atomic64_t binds;		/* chunks bound */
	atomic64_t bind_failures;
	atomic64_t slab_allocs;		/* donor slabs acquired */
	atomic64_t releases;		/* donor slabs given back */
	atomic64_t migrations;		/* chunks moved on reclaim */
	atomic64_t spread;		/* replicas moved out of a shared domain */
	atomic64_t lost_pages;
	atomic64_t write_throttled;	/* writes made to wait for budget */
	atomic64_t held;		/* requests parked on a chunk */
	atomic64_t checked;		/* pages read back and checked */
	atomic64_t mismatches;		/* pages that failed their check */
	atomic64_t failovers;		/* reads retried on another replica */
	atomic64_t heals;		/* damaged pages or replicas found */
	atomic64_t healed_pages;	/* damaged pages rewritten from a good copy */
	atomic64_t repaired;		/* chunks copied to a new replica */
	atomic64_t repair_bytes;
	atomic64_t repair_failures;
	atomic64_t staged;		/* writes completed from staging */
	atomic64_t stage_reads;		/* reads served from staging */
	atomic64_t stage_full;		/* writes that found staging full */
	atomic64_t stage_retries;	/* staged writes sent again */
	atomic64_t stage_lost;		/* staged writes no donor took */
	struct farswap_lat_hist read_lat;
	struct farswap_lat_hist write_lat;
};

struct farswap_dev {
	struct list_head node;		/* on farswap_devs */
	int id;			/* the N of farswapN: dev.c's farswap_dev_ida */
	char name[FARSWAP_NAME_LEN];
	struct farswap_params params;
	/*
	 * The identity every session of the device shows its donors (the
	 * conn_req, the authentication MAC), fixed at attach: host_id=, or
	 * the module's (args.h).
	 */
	u8 host_id[FARSWAP_ID_LEN];
	enum farswap_host_id_source host_id_source;

	struct farswap_geometry geo;
	struct farswap_chunk *chunks;
	/*
	 * Set once geo and chunks exist (farswap_dev_map_ready()).  Attach
	 * connects the donors before it can size the map: the slab size is
	 * theirs.
	 */
	bool map_ready;

	/* Donor slabs held, and the one new chunks go to first. */
	spinlock_t rslab_lock;
	struct list_head rslabs;
	struct farswap_rslab *cur_rslab;
	unsigned int nr_rslabs;
	/* Slabs asked for: the number a request sends as host_slab. */
	atomic_t rslab_serial;

	struct farswap_donor *donors[FARSWAP_MAX_DONORS];
	unsigned int nr_donors;
	/*
	 * Each donor's failure domain as a number (farswap_pick_domain_ids()),
	 * read locklessly by placement; the names and the numbers change
	 * under dom_lock when a donor tells its domain.
	 */
	spinlock_t dom_lock;
	u8 dom_id[FARSWAP_MAX_DONORS];

	struct blk_mq_tag_set tag_set;
	struct gendisk *disk;
	/*
	 * open_count and detaching, for open and release, which run under
	 * the disk's open_mutex: a leaf lock, so that open never waits for
	 * farswap_devs_mutex while a teardown (holding farswap_teardown_rwsem)
	 * waits for open_mutex in del_gendisk.  Written under both
	 * farswap_devs_mutex and open_lock; either one is enough to read.
	 */
	spinlock_t open_lock;
	unsigned int open_count;
	struct kobject *donors_kobj;	/* /sys/block/farswapN/donors/ */
	struct dentry *debugfs;		/* /sys/kernel/debug/farswap/farswapN/ */
	/*
	 * debugfs copy_pause_ms, for tests: a pause before each piece of a
	 * migration or repair copy and before a migration's switch, so that
	 * a revoke or a donor's failure can be made to land in the middle
	 * of one (under emulation a move is too quick to aim at).  0 in use.
	 */
	u32 copy_pause_ms;

	/*
	 * Write bytes in flight per write hardware queue, capped so that
	 * queued swap-outs cannot delay swap-ins sharing the link for long.
	 */
	atomic64_t *write_inflight;
	unsigned long write_throttled;	/* bitmap over write hctx */
	bool detaching;
	/* A donor is being added or removed (members.c): detach waits. */
	bool changing;

	/*
	 * WQ_MEM_RECLAIM, we are the swap; three so that nothing waits for
	 * work queued behind it on the same rescuer (as nvme's nvme_wq,
	 * nvme_reset_wq and nvme_delete_wq):
	 *  - wq: work on the chunk map under map_mutex (bind, grow, release,
	 *    reclaim, loss); it may wait on the network, bounded, and a donor
	 *    past the bound is failed, which only reset_wq carries out;
	 *  - reset_wq: a failed donor's teardown, which flushes every wait on
	 *    its queues and waits for nothing on the other two;
	 *  - connect_wq: reconnects, bounded by the connect timeouts.
	 */
	struct workqueue_struct *wq;
	struct workqueue_struct *reset_wq;
	struct workqueue_struct *connect_wq;
	struct mutex map_mutex;
	spinlock_t work_lock;		/* bind_list */
	struct list_head bind_list;
	struct work_struct bind_work;
	struct work_struct release_work;	/* gives empty slabs back */
	struct work_struct grow_work;	/* takes a slab before one is needed */
	struct work_struct loss_work;
	struct work_struct repair_work;	/* re-replicates degraded chunks */

	/*
	 * Integrity: per device page, the tag of its last write and that
	 * write's version (tag.h); NULL when integrity is off.  Allocated at
	 * attach: the swap-out path never allocates.
	 */
	struct farswap_tag_key tag_key;
	/*
	 * The secret of key= (auth.h), copied from the keyring at attach,
	 * wiped at detach; len 0: donors are not authenticated.
	 */
	struct farswap_auth_key auth_key;
	/*
	 * donor_key=: one pair key (auth.h) per donor key the device pins;
	 * a donor must prove one of them (FARSWAP_FEAT_PINNED).  NULL, 0:
	 * donors prove auth_key itself.
	 */
	struct farswap_auth_key *pair_keys;
	unsigned int nr_pair_keys;
	u64 *tags;
	u32 *versions;
	/*
	 * encrypt=1: the key pages are sealed with and, per device page, the
	 * tag of its last seal (seal.h); tags is then NULL and versions
	 * counts the seals.  Allocated at attach, as tags.
	 */
	struct farswap_seal_key seal_key;
	struct farswap_seal_tag *seal_tags;
	/* Pair each page's version with its tag (tag.h). */
	struct farswap_page_locks page_locks;

	/*
	 * Staging (stage.c): one area per write queue, preallocated at
	 * attach; NULL when stage_kb is 0.  stage_stopping: detach has
	 * drained it, and a staged write that fails from now on is dropped.
	 */
	struct farswap_stage_queue *stage;
	bool stage_stopping;
	/* debugfs stage_pause, for tests: staged writes are not posted. */
	bool stage_paused;
	unsigned int stage_at_detach;	/* staged writes when detach began */
	wait_queue_head_t stage_idle;	/* woken as staging slots free */
	struct delayed_work stage_scan_work;

	/* Bounce buffer for copying a chunk between donors. */
	void *bounce;
	size_t bounce_len;

	struct farswap_dev_stats stats;
};

/* Why a read left a replica for the next (the farswap_failover event). */
enum farswap_failover_reason {
	FARSWAP_FAILOVER_TRANSPORT,	/* its work request failed */
	FARSWAP_FAILOVER_TIMEOUT,	/* failed after io_timeout_ms stalled */
	FARSWAP_FAILOVER_INTEGRITY,	/* a page failed its check */
};

/* One leg of a request: the work requests to one placement. */
struct farswap_leg {
	struct farswap_cmd *cmd;
	struct ib_cqe cqe;
	struct farswap_placement place;
	struct ib_device *mapped_dev;	/* non-NULL while sg is DMA-mapped */
	int nents;
	bool failed;
	bool timed_out;			/* the timeout handler failed its donor */
	/* Work requests posted and not completed: the timeout's to judge. */
	atomic_t outstanding;

	/* Sized by FARSWAP_MAX_SEGS and the donors' SGE limits. */
	struct scatterlist *sg;
	struct ib_sge *sge;
	struct ib_rdma_wr *wr;
};

/*
 * A write queue's staging area (stage.c): its slots, each a command of
 * its own with the bounce pages the copy lives in, and the staged
 * writes waiting for the queue's write budget.
 */
struct farswap_stage_queue {
	struct farswap_dev *dev;
	unsigned int hctx;
	spinlock_t lock;		/* slots, ready, kicking, again */
	struct farswap_stage_slots slots;
	struct farswap_cmd **cmd;	/* one per slot */
	struct list_head ready;		/* staged, waiting for write budget */
	struct list_head retry;		/* found no DMA mapping: retried soon */
	bool kicking;			/* a kick is posting from ready */
	bool again;			/* budget came back during the kick */
	struct delayed_work retry_work;
};

/*
 * Per-request context, allocated by blk-mq with room for the arrays.  A
 * write has a leg per replica; a read uses leg[0], and moves it to the
 * next replica when one fails.  A staged write (stage.c) is a context of
 * the same kind that belongs to no request: @rq is NULL, and its data is
 * in its bounce pages.
 */
struct farswap_cmd {
	struct farswap_dev *dev;
	struct request *rq;		/* NULL: a staged write */
	atomic_t pending;		/* work requests not yet completed */
	blk_status_t status;
	u64 start_ns;
	unsigned long start_jiffies;
	unsigned int hctx_idx;
	u32 write_budget;		/* bytes of write_inflight held */
	struct farswap_nomap nomap;	/* DMA mappings failed in a row */
	struct list_head held_node;	/* on chunk->held */

	/* The request's single chunk extent, set at submission. */
	struct farswap_extent ext;
	unsigned int nr_legs;		/* posted now */
	unsigned long tried;		/* read: donors (by index) that failed it */
	u8 failover_why;		/* read: enum farswap_failover_reason */
	u32 bad_page;			/* read: the chunk's page that failed its check */
	struct farswap_leg leg[FARSWAP_MAX_REPLICAS];

	/* A read's pages never written: zeroed once the READ lands. */
	bool any_unwritten;
	unsigned long unwritten[BITS_TO_LONGS(FARSWAP_CHUNK_PAGES)];

	/* A device page split over two segments, made whole to be tagged. */
	void *page_buf;

	/*
	 * encrypt=1: a write's pages sealed (the request's own pages stay
	 * plaintext); allocated with the request, for write queues only.
	 */
	struct page *bounce[FARSWAP_SEAL_IO_BYTES >> FARSWAP_PAGE_SHIFT];
	/* The pieces of the device page being sealed or opened, then its tag. */
	struct scatterlist seal_sg[FARSWAP_PAGE_PIECES + 1];
	struct farswap_seal_tag seal_tag;

	/* A staged write: its pages on the chunk's list, its slot, its I/O. */
	struct farswap_staged staged;
	struct farswap_stage_queue *stage;
	u16 stage_slot;
	u8 stage_retries;
	u64 stage_pos;			/* bytes */
	u32 stage_bytes;
};

/* The request's direction, place and size; a staged write's too. */
static inline bool farswap_cmd_write(const struct farswap_cmd *cmd)
{
	return !cmd->rq || op_is_write(req_op(cmd->rq));
}

static inline u64 farswap_cmd_pos(const struct farswap_cmd *cmd)
{
	return cmd->rq ? blk_rq_pos(cmd->rq) << SECTOR_SHIFT : cmd->stage_pos;
}

static inline u32 farswap_cmd_bytes(const struct farswap_cmd *cmd)
{
	return cmd->rq ? blk_rq_bytes(cmd->rq) : cmd->stage_bytes;
}

/* The traces' name for it: the request's tag, or -1 - a staged slot. */
static inline int farswap_cmd_tag(const struct farswap_cmd *cmd)
{
	return cmd->rq ? cmd->rq->tag : -1 - (int)cmd->stage_slot;
}

/*
 * Why a control command failed, kept for the one caller that sent it (an
 * open file of /dev/farswap-ctl, a sysfs write, the load-time attach).
 */
struct farswap_reason {
	char msg[FARSWAP_ERR_LEN + 64];
};

/* main.c */
extern struct mutex farswap_devs_mutex;
extern struct rw_semaphore farswap_teardown_rwsem;
extern struct list_head farswap_devs;

/* ctldev.c */
int farswap_ctl_attach(char *opts, char *name_out,
		       struct farswap_reason *why);
int farswap_ctl_run(char *cmd, char *name_out, struct farswap_reason *why);
int farswap_ctl_register(void);
void farswap_ctl_unregister(void);

/* dev.c */
void farswap_reason_set(struct farswap_reason *why, const char *fmt, ...)
	__printf(2, 3);
int farswap_dev_attach(struct farswap_attach_args *args, char *name_out,
		       struct farswap_reason *why);
int farswap_dev_detach(const char *name, struct farswap_reason *why);
struct farswap_dev *farswap_dev_find(const char *name);
int farswap_dev_donor_add(const char *name,
			  const struct sockaddr_storage *addr,
			  struct farswap_reason *why);
int farswap_dev_donor_remove(const char *name,
			     const struct sockaddr_storage *addr,
			     struct farswap_reason *why);
void farswap_dev_destroy_all(void);

/* sysfs.c */
extern const struct attribute_group farswap_kernel_group;
extern const struct attribute_group *farswap_disk_groups[];
int farswap_donor_dirs_add(struct farswap_dev *dev);
void farswap_donor_dirs_remove(struct farswap_dev *dev);
int farswap_donor_dir_add(struct farswap_dev *dev, struct farswap_donor *dn);
void farswap_donor_dir_remove(struct farswap_donor *dn);

/* debugfs.c */
extern u32 farswap_attach_pause_ms;
void farswap_debugfs_init(void);
void farswap_debugfs_exit(void);
void farswap_debugfs_add(struct farswap_dev *dev);
void farswap_debugfs_remove(struct farswap_dev *dev);

/* io.c */
size_t farswap_cmd_size(unsigned int replicas);
int farswap_cmd_init(struct farswap_cmd *cmd, struct farswap_dev *dev,
		     struct request *rq, bool bounce, int numa_node);
void farswap_cmd_exit(struct farswap_cmd *cmd);
blk_status_t farswap_submit(struct farswap_cmd *cmd);
void farswap_discard(struct farswap_cmd *cmd, struct request *rq);
void farswap_cmd_fail(struct farswap_cmd *cmd, blk_status_t status);
void farswap_resubmit_held(struct list_head *held);
bool farswap_write_budget_get(struct farswap_dev *dev, unsigned int hctx,
			      u32 bytes);
void farswap_write_budget_put(struct farswap_dev *dev, unsigned int hctx,
			      u32 bytes);
void farswap_fail_held(struct list_head *held, blk_status_t status);
void farswap_cmd_stall_check(struct farswap_cmd *cmd);

/* stage.c */
int farswap_stage_alloc(struct farswap_dev *dev);
void farswap_stage_free(struct farswap_dev *dev);
bool farswap_stage_take(struct farswap_cmd *rcmd, struct request *rq);
enum farswap_stage_verdict farswap_stage_meet_locked(struct farswap_cmd *cmd,
						     struct farswap_chunk *chunk,
						     bool write);
bool farswap_stage_again(struct farswap_cmd *cmd);
void farswap_stage_end(struct farswap_cmd *cmd, blk_status_t status);
void farswap_stage_requeue(struct farswap_cmd *cmd);
void farswap_stage_kick(struct farswap_dev *dev, unsigned int hctx);
void farswap_stage_pause(struct farswap_dev *dev, bool pause);
void farswap_stage_detach(struct farswap_dev *dev);
void farswap_stage_drain(struct farswap_dev *dev);
void farswap_stage_abort(struct farswap_dev *dev);
u64 farswap_stage_bytes(const struct farswap_dev *dev);
unsigned int farswap_stage_used(struct farswap_dev *dev);

/* check.c */
void farswap_zero_unwritten(struct farswap_cmd *cmd, struct request *rq);
void farswap_tag_write(struct farswap_cmd *cmd, struct request *rq);
bool farswap_seal_write(struct farswap_cmd *cmd, struct request *rq);
blk_status_t farswap_check_read(struct farswap_cmd *cmd, struct request *rq);

/* conn.c */
struct farswap_donor *farswap_donor_create(struct farswap_dev *dev,
					   unsigned int index,
					   const struct sockaddr_storage *addr);
void farswap_donor_stop(struct farswap_donor *donor);
void farswap_donor_cancel_work(struct farswap_donor *donor);
void farswap_donor_destroy(struct farswap_donor *donor);
int farswap_donor_connect_first(struct farswap_donor *donor);
void farswap_donor_connect_later(struct farswap_donor *donor);
void farswap_donor_last_error(struct farswap_donor *donor, char *buf,
			      size_t len);
const char *farswap_donor_error_text(struct farswap_donor *donor, char *buf,
				     size_t len);
void farswap_donor_error(struct farswap_donor *donor, const char *why);
void farswap_donor_set_error(struct farswap_donor *donor,
			     const char *fmt, ...) __printf(2, 3);
bool farswap_donor_attempt_failed(struct farswap_donor *donor);
bool farswap_donor_live(struct farswap_donor *donor, u32 gen);
void farswap_donors_remove_device(struct ib_device *ibdev);

/*
 * Does a chunk's placement serve: its donor's session lives and has not
 * revoked the slab?  Only for a placement in a chunk, under its lock (the
 * slot it holds keeps the slab record alive).
 */
static inline bool farswap_place_live(const struct farswap_placement *p)
{
	return farswap_donor_live(p->donor, p->gen) &&
	       READ_ONCE(p->rslab->state) != FARSWAP_RSLAB_REVOKED;
}

/* resume.c */
bool farswap_rslab_suspended(const struct farswap_rslab *rs);
bool farswap_donor_suspend_locked(struct farswap_donor *donor);
bool farswap_donor_resume_pending(struct farswap_donor *donor);
void farswap_donor_close_resume(struct farswap_donor *donor);
void farswap_donor_resume_work(struct work_struct *work);
void farswap_donor_resume_expire(struct work_struct *work);

/*
 * Is a placement's session dead, but its slab waiting for the donor to
 * come back and resume it?  Same rules as farswap_place_live().
 */
static inline bool farswap_place_suspended(const struct farswap_placement *p)
{
	return !farswap_donor_live(p->donor, p->gen) &&
	       p->gen == p->rslab->gen && farswap_rslab_suspended(p->rslab);
}

/* ctrl.c */
int farswap_status_errno(unsigned int status);
int farswap_ctrl_post_recv(struct farswap_ctrl_recv *recv);
void farswap_ctrl_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void farswap_ctrl_send_done(struct ib_cq *cq, struct ib_wc *wc);
void farswap_ctrl_fail_waiters(struct farswap_donor *donor);
int farswap_ctrl_xfer(struct farswap_donor *donor,
		      union farswap_msg *msg, union farswap_msg *reply,
		      u32 *gen, bool handshake);
int farswap_ctrl_call(struct farswap_donor *donor, union farswap_msg *req,
		      union farswap_msg *reply);
int farswap_ctrl_send(struct farswap_donor *donor, union farswap_msg *msg);
int farswap_donor_alloc_slab(struct farswap_donor *donor, u32 serial,
			     u64 slab_bytes, struct farswap_rslab *rs);
int farswap_donor_free_slab(struct farswap_donor *donor, u32 remote_id);
void farswap_donor_goodbye(struct farswap_donor *donor);
int farswap_donor_resume_slab(struct farswap_donor *donor,
			      const struct farswap_rslab *rs, u64 slab_bytes,
			      struct farswap_rslab *got, u32 *gen);
int farswap_donor_query_info(struct farswap_donor *donor);
int farswap_donor_query_stats(struct farswap_donor *donor);

/* chunk.c */
int farswap_chunks_alloc(struct farswap_dev *dev);
void farswap_chunks_free(struct farswap_dev *dev);
u32 farswap_chunk_index(struct farswap_dev *dev,
			struct farswap_chunk *chunk);
unsigned long farswap_chunk_donors(const struct farswap_chunk *chunk);
unsigned long farswap_chunk_domains(const struct farswap_chunk *chunk,
				    int skip);
bool farswap_chunk_colocated_locked(const struct farswap_chunk *chunk);
void farswap_chunk_fill_locked(struct farswap_dev *dev,
			       struct farswap_chunk *chunk, bool any);
void farswap_chunk_stale_locked(struct farswap_dev *dev,
				struct farswap_chunk *chunk,
				const struct farswap_placement *place);
void farswap_chunk_replicas_locked(const struct farswap_chunk *chunk,
				   struct farswap_replica_set *set);
bool farswap_chunk_damaged_locked(const struct farswap_chunk *chunk);
void farswap_chunk_queue_bind(struct farswap_dev *dev,
			      struct farswap_chunk *chunk);
unsigned int farswap_chunk_release_locked(struct farswap_dev *dev,
					  struct farswap_chunk *chunk,
					  struct farswap_placement *place);
void farswap_bind_work(struct work_struct *work);
void farswap_loss_work(struct work_struct *work);
void farswap_slab_revoked(struct farswap_donor *donor, u32 remote_id,
			  u32 grace_ms);

/* rslab.c */
void farswap_rslab_free(struct farswap_dev *dev,
			struct farswap_rslab *rs);
enum farswap_slots_after
farswap_slot_drop(struct farswap_dev *dev,
		  const struct farswap_placement *place);
bool farswap_take_slot(struct farswap_dev *dev, unsigned long exclude,
		       unsigned long avoid, struct farswap_placement *place);
void farswap_put_slot(struct farswap_dev *dev,
		      const struct farswap_placement *place);
int farswap_take_slot_any(struct farswap_dev *dev,
			  unsigned long exclude, unsigned long avoid,
			  struct farswap_placement *to);
int farswap_take_slot_outside(struct farswap_dev *dev,
			      unsigned long exclude, unsigned long avoid,
			      struct farswap_placement *to);
int farswap_acquire_rslab(struct farswap_dev *dev,
			  unsigned long exclude, unsigned long avoid,
			  bool make_current);
bool farswap_room_outside(struct farswap_dev *dev,
			  unsigned long exclude, unsigned long avoid);
void farswap_dev_set_domain(struct farswap_donor *donor, const char *name);
unsigned int farswap_dev_nr_domains(struct farswap_dev *dev);
unsigned int farswap_replicas_possible(struct farswap_dev *dev);
void farswap_release_work(struct work_struct *work);
void farswap_grow_work(struct work_struct *work);
void farswap_chunks_want_room(struct farswap_dev *dev);

/* move.c */
void farswap_repair_work(struct work_struct *work);
void farswap_late_grant(struct farswap_donor *donor, u32 slab_id);
void farswap_reclaim_enqueue(struct farswap_donor *donor,
			     const struct farswap_reclaim_req *req);
void farswap_reclaim_work(struct work_struct *work);
int farswap_rdma_sync(struct farswap_donor *donor, bool write, void *buf,
		      size_t len, u64 remote_addr, u32 rkey, u32 gen);

/* The donor's failure domain number, for placement. */
/*
 * The donors a walk over dev->donors[] may see.  A donor added to a live
 * device (members.c) is stored before the count grows (release), so a
 * walk bounded by this (acquire) never meets an empty slot; entries are
 * never removed before detach.  Read it once per walk.
 */
static inline unsigned int farswap_nr_donors(const struct farswap_dev *dev)
{
	return smp_load_acquire(&dev->nr_donors);
}

static inline unsigned int farswap_donor_dom(const struct farswap_donor *donor)
{
	return READ_ONCE(donor->dev->dom_id[donor->index]);
}

/*
 * May work that walks the chunk map be queued?  Until the map exists no
 * chunk is placed on any donor, so a donor that fails or reconnects
 * during attach leaves the loss, repair and grow work nothing to do, and
 * they must not run over a map that is not there.
 */
static inline bool farswap_dev_map_ready(const struct farswap_dev *dev)
{
	/* acquire: pairs with the release in farswap_dev_attach() */
	return smp_load_acquire(&dev->map_ready);
}

/* Host memory per device page for its check: tag and version. */
static inline size_t
farswap_check_bytes_per_page(const struct farswap_dev *dev)
{
	if (dev->params.encrypt)
		return sizeof(*dev->seal_tags) + sizeof(*dev->versions);
	if (dev->params.integrity == FARSWAP_TAG_OFF)
		return 0;
	return FARSWAP_TAG_BYTES_PER_PAGE;
}

/* The check of every page read back: the cipher's tag when sealing. */
static inline const char *farswap_check_name(const struct farswap_dev *dev)
{
	return dev->params.encrypt ? FARSWAP_SEAL_ALG :
				     farswap_tag_alg_name(dev->params.integrity);
}

static inline struct farswap_chunk *farswap_chunk_of(struct farswap_dev *dev,
						     u32 index)
{
	return &dev->chunks[index];
}

/*
 * The index in chunk->place[] of @place, a copy of one of the chunk's
 * placements taken earlier, or -1 if the chunk holds it no more.  Copies
 * are matched by rslab and slot, not by index (placements move down the
 * array as others are removed) nor by their other fields (the damage
 * noted in the chunk's own copy changes).  A slot belongs to one
 * placement at a time, so at most one matches.
 */
static inline int
farswap_chunk_place_locked(const struct farswap_chunk *chunk,
			   const struct farswap_placement *place)
{
	unsigned int r;

	lockdep_assert_held(&chunk->lock);
	for (r = 0; r < chunk->nr_places; r++)
		if (chunk->place[r].rslab == place->rslab &&
		    chunk->place[r].slot == place->slot)
			return r;
	return -1;
}

/*
 * The donor's state, read locklessly by the I/O path.  Acquire pairs with
 * the release in the state changes, so that a reader that sees LIVE also
 * sees the generation of that session.
 */
static inline enum farswap_donor_state
farswap_donor_state(struct farswap_donor *donor)
{
	/* acquire: pairs with smp_store_release() of the state in conn.c */
	return smp_load_acquire(&donor->state);
}


#endif /* FARSWAP_H */
