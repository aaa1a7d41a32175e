// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_slots: chunk slots of a donor slab and the lifetime
 * of its record (kmod/slots.c).
 *
 * The loss-scan cases replay what the loss work (kmod/chunk.c) does with
 * the records when donors die while it scans: chunks of a dead session let
 * go of their slots, dead slabs are retired, and a record is freed exactly
 * once, by whoever drops its last slot, never while a chunk points at it.
 * A slot is never owned by two chunks.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/prandom.h>
#include <linux/slab.h>

#include "slots.h"

#define NR_SLOTS	8

struct slab_rec {
	struct farswap_slots slots;
	unsigned long map[BITS_TO_LONGS(NR_SLOTS)];
	int donor;
	bool listed;		/* on the device's list */
	int frees;		/* times its record was freed */
};

static void slab_init(struct slab_rec *r, int donor)
{
	farswap_slots_init(&r->slots, NR_SLOTS, r->map);
	r->donor = donor;
	r->listed = true;
	r->frees = 0;
}

static void take_lowest_first_test(struct kunit *test)
{
	struct slab_rec r;
	int i;

	slab_init(&r, 0);
	for (i = 0; i < NR_SLOTS; i++)
		KUNIT_EXPECT_EQ(test, farswap_slots_take(&r.slots), i);
	KUNIT_EXPECT_EQ(test, farswap_slots_take(&r.slots), -1);
	KUNIT_EXPECT_EQ(test, farswap_slots_free(&r.slots), 0);
	KUNIT_EXPECT_EQ(test, farswap_slots_put(&r.slots, 3),
			FARSWAP_SLOTS_KEEP);
	KUNIT_EXPECT_EQ(test, farswap_slots_free(&r.slots), 1);
	KUNIT_EXPECT_EQ(test, farswap_slots_take(&r.slots), 3);
}

static void bad_put_test(struct kunit *test)
{
	struct slab_rec r;

	slab_init(&r, 0);
	KUNIT_EXPECT_EQ(test, farswap_slots_put(&r.slots, 0),
			FARSWAP_SLOTS_BAD);
	KUNIT_EXPECT_EQ(test, farswap_slots_take(&r.slots), 0);
	KUNIT_EXPECT_EQ(test, farswap_slots_take(&r.slots), 1);
	KUNIT_EXPECT_EQ(test, farswap_slots_put(&r.slots, 1),
			FARSWAP_SLOTS_KEEP);
	/* A second put of the same slot changes nothing. */
	KUNIT_EXPECT_EQ(test, farswap_slots_put(&r.slots, 1),
			FARSWAP_SLOTS_BAD);
	KUNIT_EXPECT_EQ(test, r.slots.used, 1);
	KUNIT_EXPECT_EQ(test, farswap_slots_put(&r.slots, NR_SLOTS),
			FARSWAP_SLOTS_BAD);
	KUNIT_EXPECT_EQ(test, farswap_slots_put(&r.slots, U32_MAX),
			FARSWAP_SLOTS_BAD);
	KUNIT_EXPECT_EQ(test, r.slots.used, 1);
}

static void empty_live_slab_test(struct kunit *test)
{
	struct slab_rec r;

	slab_init(&r, 0);
	farswap_slots_take(&r.slots);
	KUNIT_EXPECT_EQ(test, farswap_slots_put(&r.slots, 0),
			FARSWAP_SLOTS_EMPTY);
	/* Empty when it dies: the sweep frees it at once, and only once. */
	KUNIT_EXPECT_TRUE(test, farswap_slots_retire(&r.slots));
	KUNIT_EXPECT_FALSE(test, farswap_slots_retire(&r.slots));
	KUNIT_EXPECT_EQ(test, farswap_slots_take(&r.slots), -1);
}

static void retired_in_use_test(struct kunit *test)
{
	struct slab_rec r;

	slab_init(&r, 0);
	farswap_slots_take(&r.slots);
	farswap_slots_take(&r.slots);
	farswap_slots_take(&r.slots);
	KUNIT_EXPECT_FALSE(test, farswap_slots_retire(&r.slots));
	KUNIT_EXPECT_EQ(test, farswap_slots_free(&r.slots), 0);
	KUNIT_EXPECT_EQ(test, farswap_slots_take(&r.slots), -1);
	KUNIT_EXPECT_EQ(test, farswap_slots_put(&r.slots, 1),
			FARSWAP_SLOTS_KEEP);
	KUNIT_EXPECT_EQ(test, farswap_slots_put(&r.slots, 0),
			FARSWAP_SLOTS_KEEP);
	/* A discard after the sweep: the last slot frees the record. */
	KUNIT_EXPECT_EQ(test, farswap_slots_put(&r.slots, 2),
			FARSWAP_SLOTS_FREE);
	KUNIT_EXPECT_EQ(test, farswap_slots_put(&r.slots, 2),
			FARSWAP_SLOTS_BAD);
}

/*
 * The loss scan, replayed.  Chunks are bound to slots of slabs held on
 * NR_DONORS donors; donors die at chosen points of a scan.
 */
#define NR_DONORS	3
#define NR_SLABS	6
#define NR_CHUNKS	40

struct model {
	struct slab_rec slab[NR_SLABS];
	int chunk_slab[NR_CHUNKS];	/* -1: unbound */
	int chunk_slot[NR_CHUNKS];
	bool dead[NR_DONORS];
	int bound;			/* chunks bound, by the model's count */
};

static void model_drop(struct kunit *test, struct model *m, int c)
{
	struct slab_rec *r = &m->slab[m->chunk_slab[c]];

	switch (farswap_slots_put(&r->slots, m->chunk_slot[c])) {
	case FARSWAP_SLOTS_FREE:
		KUNIT_EXPECT_FALSE(test, r->listed);
		r->frees++;
		break;
	case FARSWAP_SLOTS_BAD:
		KUNIT_FAIL(test, "chunk %d dropped slot %d of slab %d twice",
			   c, m->chunk_slot[c], m->chunk_slab[c]);
		break;
	default:
		break;
	}
	m->chunk_slab[c] = -1;
	m->bound--;
}

/* Bind every chunk it can, round robin over live listed slabs. */
static void model_bind(struct model *m)
{
	int c, s = 0, tries;

	for (c = 0; c < NR_CHUNKS; c++) {
		if (m->chunk_slab[c] >= 0)
			continue;
		for (tries = 0; tries < NR_SLABS; tries++, s = (s + 1) % NR_SLABS) {
			struct slab_rec *r = &m->slab[s];
			int slot;

			if (!r->listed || m->dead[r->donor])
				continue;
			slot = farswap_slots_take(&r->slots);
			if (slot < 0)
				continue;
			m->chunk_slab[c] = s;
			m->chunk_slot[c] = slot;
			m->bound++;
			s = (s + 1) % NR_SLABS;
			break;
		}
	}
}

/* One loss pass; donor @kill dies after chunk @at is scanned (-1: none). */
static void model_loss_pass(struct kunit *test, struct model *m, int kill,
			    int at)
{
	int c, s;

	for (c = 0; c < NR_CHUNKS; c++) {
		if (m->chunk_slab[c] >= 0 &&
		    m->dead[m->slab[m->chunk_slab[c]].donor])
			model_drop(test, m, c);
		if (c == at && kill >= 0)
			m->dead[kill] = true;
	}
	for (s = 0; s < NR_SLABS; s++) {
		struct slab_rec *r = &m->slab[s];

		if (!r->listed || !m->dead[r->donor])
			continue;
		r->listed = false;
		if (farswap_slots_retire(&r->slots))
			r->frees++;
	}
}

/* No slot has two owners; a freed record has none and is freed once. */
static void model_check(struct kunit *test, struct model *m)
{
	int owners[NR_SLABS][NR_SLOTS] = {};
	int c, s, used;

	for (c = 0; c < NR_CHUNKS; c++) {
		if (m->chunk_slab[c] < 0)
			continue;
		s = m->chunk_slab[c];
		KUNIT_EXPECT_EQ_MSG(test, m->slab[s].frees, 0,
				    "chunk %d points at freed slab %d", c, s);
		KUNIT_EXPECT_EQ_MSG(test,
				    ++owners[s][m->chunk_slot[c]], 1,
				    "slot %d of slab %d has two chunks",
				    m->chunk_slot[c], s);
	}
	for (s = 0; s < NR_SLABS; s++) {
		KUNIT_EXPECT_LE(test, m->slab[s].frees, 1);
		if (m->slab[s].frees)
			continue;
		for (used = 0, c = 0; c < NR_SLOTS; c++)
			used += owners[s][c];
		KUNIT_EXPECT_EQ_MSG(test, m->slab[s].slots.used, used,
				    "slab %d counts %u used slots, %d owned",
				    s, m->slab[s].slots.used, used);
	}
}

static void model_init(struct model *m)
{
	int i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < NR_SLABS; i++)
		slab_init(&m->slab[i], i % NR_DONORS);
	for (i = 0; i < NR_CHUNKS; i++)
		m->chunk_slab[i] = -1;
	model_bind(m);
}

/* The review's case: a second donor dies in the middle of a loss scan. */
static void loss_second_death_mid_scan_test(struct kunit *test)
{
	struct model m;
	int c, s;

	model_init(&m);
	m.dead[0] = true;
	model_loss_pass(test, &m, 1, NR_CHUNKS / 2);
	model_check(test, &m);
	/* Donor 1's slabs are retired, but chunks still point at them. */
	for (s = 0; s < NR_SLABS; s++)
		if (m.slab[s].donor == 1)
			KUNIT_EXPECT_FALSE(test, m.slab[s].listed);
	/* New binds (after donor 0 and 1 come back empty) go elsewhere. */
	model_bind(&m);
	model_check(test, &m);
	/* The pass donor 1's teardown queued lets the rest go. */
	model_loss_pass(test, &m, -1, -1);
	model_check(test, &m);
	for (c = 0; c < NR_CHUNKS; c++)
		if (m.chunk_slab[c] >= 0)
			KUNIT_EXPECT_EQ(test, m.slab[m.chunk_slab[c]].donor, 2);
	for (s = 0; s < NR_SLABS; s++)
		KUNIT_EXPECT_EQ(test, m.slab[s].frees, m.slab[s].donor != 2);
}

/* Random deaths at random points of random passes, with binds between. */
static void loss_random_test(struct kunit *test)
{
	struct rnd_state rnd;
	struct model m;
	int round, pass, s;

	prandom_seed_state(&rnd, 0x6661727377617031ull);
	for (round = 0; round < 200; round++) {
		model_init(&m);
		for (pass = 0; pass < 4; pass++) {
			int kill = prandom_u32_state(&rnd) % (NR_DONORS + 1);
			int at = prandom_u32_state(&rnd) % NR_CHUNKS;

			model_loss_pass(test, &m, kill < NR_DONORS ? kill : -1,
					at);
			model_check(test, &m);
			model_bind(&m);
			model_check(test, &m);
		}
		/* Everyone dead: the last passes free every record once. */
		memset(m.dead, 1, sizeof(m.dead));
		model_loss_pass(test, &m, -1, -1);
		model_loss_pass(test, &m, -1, -1);
		model_check(test, &m);
		KUNIT_EXPECT_EQ(test, m.bound, 0);
		for (s = 0; s < NR_SLABS; s++)
			KUNIT_EXPECT_EQ(test, m.slab[s].frees, 1);
	}
}

static struct kunit_case farswap_slots_cases[] = {
	KUNIT_CASE(take_lowest_first_test),
	KUNIT_CASE(bad_put_test),
	KUNIT_CASE(empty_live_slab_test),
	KUNIT_CASE(retired_in_use_test),
	KUNIT_CASE(loss_second_death_mid_scan_test),
	KUNIT_CASE(loss_random_test),
	{}
};

static struct kunit_suite farswap_slots_suite = {
	.name = "farswap_slots",
	.test_cases = farswap_slots_cases,
};

kunit_test_suite(farswap_slots_suite);
