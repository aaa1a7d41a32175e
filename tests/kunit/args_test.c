// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite farswap_args: parsing of the control commands that
 * farswapctl writes to /dev/farswap-ctl: kmod/args.c.
 *
 * The parser sits on root-only files, but whatever it accepts
 * becomes a device: a wrong size, a donor listed twice or a name that is
 * not the device's name cause trouble far from the command that asked.
 */
#include <kunit/test.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "farswap_proto.h"
#include "args.h"

/*
 * Donor addresses
 */

struct addr_case {
	const char *in;
	int ret;
	unsigned short family;
	u8 addr[16];		/* 4 bytes for AF_INET */
	u16 port;
	u32 scope_id;
};

#define V4(a, b, c, d)	{ a, b, c, d }
#define DEFPORT		FARSWAP_DEFAULT_PORT

static const struct addr_case addr_cases[] = {
	{ "10.0.0.1", 0, AF_INET, V4(10, 0, 0, 1), DEFPORT },
	{ "10.0.0.1:7000", 0, AF_INET, V4(10, 0, 0, 1), 7000 },
	{ "192.168.255.254:65535", 0, AF_INET, V4(192, 168, 255, 254),
	  65535 },
	{ "0.0.0.0:1", 0, AF_INET, V4(0, 0, 0, 0), 1 },
	/* Ports are decimal: no C base prefix, no sign. */
	{ "10.0.0.1:07000", 0, AF_INET, V4(10, 0, 0, 1), 7000 },
	{ "10.0.0.1:0x1b2f", -EINVAL },
	{ "10.0.0.1:+7000", -EINVAL },
	{ "10.0.0.1:0", -EINVAL },
	{ "10.0.0.1:65536", -EINVAL },
	{ "10.0.0.1:", -EINVAL },
	{ "10.0.0.1:x", -EINVAL },
	{ "10.0.0.1:70a", -EINVAL },
	{ "10.0.0", -EINVAL },
	{ "10.0.0.256", -EINVAL },
	{ "10.0.0.1.5", -EINVAL },
	{ " 10.0.0.1", -EINVAL },
	{ "10.0.0.1 ", -EINVAL },
	{ "", -EINVAL },
	{ "donor", -EINVAL },
	{ "::1", 0, AF_INET6, { [15] = 1 }, DEFPORT },
	{ "fe80::1", 0, AF_INET6, { 0xfe, 0x80, [15] = 1 }, DEFPORT },
	/* Bare IPv6 never has a port: the last group is address. */
	{ "2001:db8::1:8080", 0, AF_INET6,
	  { 0x20, 0x01, 0x0d, 0xb8, [13] = 1, 0x80, 0x80 }, DEFPORT },
	{ "1:2:3:4:5:6:7:8", 0, AF_INET6,
	  { 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8 }, DEFPORT },
	{ "[fe80::1]:7000", 0, AF_INET6, { 0xfe, 0x80, [15] = 1 }, 7000 },
	{ "[::1]", 0, AF_INET6, { [15] = 1 }, DEFPORT },
	{ "[::ffff:10.0.0.1]:7471", 0, AF_INET6,
	  { [10] = 0xff, 0xff, 10, 0, 0, 1 }, 7471 },
	{ "[fe80::1", -EINVAL },
	{ "[]:7000", -EINVAL },
	{ "[fe80::1]x", -EINVAL },
	{ "[fe80::1]:", -EINVAL },
	{ "[fe80::1]:0", -EINVAL },
	{ "[fe80::1]:65536", -EINVAL },
	{ "[10.0.0.1]:7000", -EINVAL },
	{ "fe80::1]", -EINVAL },
	{ "1:2:3:4:5:6:7:8:9", -EINVAL },
	/* A link-local address may name its interface, by index here. */
	{ "fe80::1%2", 0, AF_INET6, { 0xfe, 0x80, [15] = 1 }, DEFPORT, 2 },
	{ "[fe80::1%3]:7000", 0, AF_INET6, { 0xfe, 0x80, [15] = 1 }, 7000,
	  3 },
	/* UML has no network device: no name resolves. */
	{ "fe80::1%eth0", -EINVAL },
	{ "fe80::1%0", -EINVAL },
	{ "fe80::1%", -EINVAL },
	/* A scope the address cannot use is refused, not dropped. */
	{ "2001:db8::1%2", -EINVAL },
	{ "[2001:db8::1%2]:7000", -EINVAL },
	{ "10.0.0.1%2", -EINVAL },
	{ "10.0.0.1:7000:1", -EINVAL },
	{ ":::", -EINVAL },
};

static void addr_desc(const struct addr_case *c, char *desc)
{
	/* Escaped: a newline in a name would cut the KTAP result line. */
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "'%*pE'", (int)strlen(c->in),
		 c->in);
}

KUNIT_ARRAY_PARAM(addr, addr_cases, addr_desc);

static void parse_addr_test(struct kunit *test)
{
	const struct addr_case *c = test->param_value;
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0xa5, sizeof(ss));
	KUNIT_ASSERT_EQ(test, farswap_parse_addr(c->in, &ss), c->ret);
	if (c->ret)
		return;
	KUNIT_ASSERT_EQ(test, ss.ss_family, c->family);
	if (c->family == AF_INET) {
		KUNIT_EXPECT_MEMEQ(test, &sin->sin_addr.s_addr, c->addr, 4);
		KUNIT_EXPECT_EQ(test, ntohs(sin->sin_port), c->port);
		/* rdma_resolve_addr() takes the whole sockaddr_in. */
		KUNIT_EXPECT_TRUE(test, mem_is_zero(sin->sin_zero,
						    sizeof(sin->sin_zero)));
	} else {
		KUNIT_EXPECT_MEMEQ(test, sin6->sin6_addr.s6_addr, c->addr, 16);
		KUNIT_EXPECT_EQ(test, ntohs(sin6->sin6_port), c->port);
		KUNIT_EXPECT_EQ(test, sin6->sin6_flowinfo, 0);
		KUNIT_EXPECT_EQ(test, sin6->sin6_scope_id, c->scope_id);
	}
}

/* Equal means the same donor: family, address and port. */
static void addr_equal_test(struct kunit *test)
{
	static const struct {
		const char *a, *b;
		bool equal;
	} pairs[] = {
		{ "10.0.0.1", "10.0.0.1:7471", true },
		{ "10.0.0.1", "10.0.0.1:7000", false },
		{ "10.0.0.1", "10.0.0.2", false },
		{ "fe80::1", "[fe80::1]:7471", true },
		{ "fe80::1", "[fe80::1]:7000", false },
		{ "fe80::1", "fe80::2", false },
		{ "[::ffff:10.0.0.1]:7471", "10.0.0.1", false },
		{ "fe80::1%2", "[fe80::1%2]:7471", true },
		{ "fe80::1%2", "fe80::1%3", false },
	};
	struct sockaddr_storage a, b;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pairs); i++) {
		KUNIT_ASSERT_EQ(test, farswap_parse_addr(pairs[i].a, &a), 0);
		KUNIT_ASSERT_EQ(test, farswap_parse_addr(pairs[i].b, &b), 0);
		KUNIT_EXPECT_EQ_MSG(test, farswap_addr_equal(&a, &b),
				    pairs[i].equal, "%s vs %s", pairs[i].a,
				    pairs[i].b);
		KUNIT_EXPECT_EQ_MSG(test, farswap_addr_equal(&b, &a),
				    pairs[i].equal, "%s vs %s", pairs[i].b,
				    pairs[i].a);
	}
	/* Two addresses of no known family are not the same donor. */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	KUNIT_EXPECT_FALSE(test, farswap_addr_equal(&a, &b));
}

/*
 * Sizes
 */

struct size_case {
	const char *in;
	int ret;
	u64 bytes;
};

static const struct size_case size_cases[] = {
	{ "4096", 0, 4096 },
	{ "4096B", 0, 4096 },
	{ "4K", 0, SZ_4K },
	{ "4k", 0, SZ_4K },
	{ "2M", 0, SZ_2M },
	{ "4G", 0, SZ_4G },
	{ "4GiB", 0, SZ_4G },
	{ "4GB", 0, SZ_4G },
	{ "1T", 0, SZ_1T },
	{ "1P", 0, SZ_1T * 1024 },
	{ "1023P", 0, SZ_1T * 1024 * 1023 },
	/* A leading zero is not octal: 010G is ten gigabytes. */
	{ "010G", 0, 10ull * SZ_1G },
	{ "1152921504606846975", 0, (1ull << 60) - 1 },
	{ "1152921504606846976", -EINVAL },
	{ "1024P", -EINVAL },
	{ "1E", -EINVAL },
	/* These wrap around 2^64 to small sizes if unchecked. */
	{ "16777216T", -EINVAL },
	{ "16777217T", -EINVAL },
	{ "18446744073709551617", -EINVAL },
	{ "0", -EINVAL },
	{ "0G", -EINVAL },
	{ "", -EINVAL },
	{ "G", -EINVAL },
	{ "-1", -EINVAL },
	{ "+4G", -EINVAL },
	{ " 4G", -EINVAL },
	{ "4G ", -EINVAL },
	{ "4X", -EINVAL },
	{ "4Gi", -EINVAL },
	{ "4GiBs", -EINVAL },
	{ "4iB", -EINVAL },
	{ "0x1000", -EINVAL },
	{ "4.5G", -EINVAL },
};

static void size_desc(const struct size_case *c, char *desc)
{
	/* Escaped: a newline in a name would cut the KTAP result line. */
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "'%*pE'", (int)strlen(c->in),
		 c->in);
}

KUNIT_ARRAY_PARAM(size, size_cases, size_desc);

static void parse_size_test(struct kunit *test)
{
	const struct size_case *c = test->param_value;
	u64 out = 0x1234;

	KUNIT_ASSERT_EQ(test, farswap_parse_size(c->in, &out), c->ret);
	/* On failure the output is left alone. */
	KUNIT_EXPECT_EQ(test, out, c->ret ? 0x1234 : c->bytes);
}

/*
 * Device names
 */

struct name_case {
	const char *in;
	int index;
};

static const struct name_case name_cases[] = {
	{ "farswap0", 0 },
	{ "farswap7", 7 },
	{ "farswap9999", 9999 },
	{ "farswap10000", -EINVAL },
	{ "farswap", -EINVAL },
	{ "farswap00", -EINVAL },
	{ "farswap01", -EINVAL },
	{ "farswap-1", -EINVAL },
	/* Would name the device farswap5 while looking up "farswap+5". */
	{ "farswap+5", -EINVAL },
	{ "farswap5\n", -EINVAL },
	{ "farswap 5", -EINVAL },
	{ "farswap5x", -EINVAL },
	{ "xfarswap5", -EINVAL },
	{ "Farswap5", -EINVAL },
	{ "farswap4294967296", -EINVAL },
};

static void name_desc(const struct name_case *c, char *desc)
{
	/* Escaped: a newline in a name would cut the KTAP result line. */
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "'%*pE'", (int)strlen(c->in),
		 c->in);
}

KUNIT_ARRAY_PARAM(name, name_cases, name_desc);

static void name_index_test(struct kunit *test)
{
	const struct name_case *c = test->param_value;
	char name[FARSWAP_NAME_LEN];
	int index = farswap_name_index(c->in);

	KUNIT_EXPECT_EQ(test, index, c->index);
	if (index < 0)
		return;
	/* kmod/dev.c names the device from the index: same name back. */
	snprintf(name, sizeof(name), "farswap%d", index);
	KUNIT_EXPECT_STREQ(test, name, c->in);
}

/*
 * Whole attach commands
 */

/* The defaults kmod/main.c fills in before parsing. */
static void default_args(struct farswap_attach_args *a)
{
	memset(a, 0, sizeof(*a));
	a->nr_queues = 4;
	a->queue_depth = 128;
	a->io_timeout_ms = 30000;
	a->sync_io = false;
}

struct attach_ok_case {
	const char *desc;
	const char *cmd;
	unsigned int nr_donors;
	u64 size;
	u64 slab_size;
	const char *name;
	unsigned int nr_queues;
	unsigned int queue_depth;
	unsigned int io_timeout_ms;
	bool sync_io;
	enum farswap_read_policy read_policy;	/* not given: FASTEST */
	bool encrypt;
};

#define DONORS16 \
	"donor=10.0.0.1 donor=10.0.0.2 donor=10.0.0.3 donor=10.0.0.4 " \
	"donor=10.0.0.5 donor=10.0.0.6 donor=10.0.0.7 donor=10.0.0.8 " \
	"donor=10.0.0.9 donor=10.0.0.10 donor=10.0.0.11 donor=10.0.0.12 " \
	"donor=10.0.0.13 donor=10.0.0.14 donor=10.0.0.15 donor=10.0.0.16"

/* Options not given keep default_args()' 4, 128, 30000 and false. */
static const struct attach_ok_case attach_ok_cases[] = {
	{ "minimal", "donor=10.0.0.1 size=4G",
	  1, SZ_4G, 0, "", 4, 128, 30000, false },
	{ "every option",
	  "donor=10.0.0.1:7000 donor=[fe80::2]:7001 size=8G slab_size=1G name=farswap3 queues=2 queue_depth=64 io_timeout_ms=5000 sync_io=1",
	  2, SZ_8G, SZ_1G, "farswap3", 2, 64, 5000, true },
	{ "as echo writes it, newline", "donor=10.0.0.1 size=4G\n",
	  1, SZ_4G, 0, "", 4, 128, 30000, false },
	{ "commas, tabs, extra spaces",
	  "  donor=10.0.0.1,size=4G\t donor=10.0.0.2 ",
	  2, SZ_4G, 0, "", 4, 128, 30000, false },
	{ "16 donors", DONORS16 " size=4G",
	  16, SZ_4G, 0, "", 4, 128, 30000, false },
	{ "high limits",
	  "donor=10.0.0.1 size=4G queues=16 queue_depth=1024 io_timeout_ms=3600000 sync_io=y",
	  1, SZ_4G, 0, "", 16, 1024, 3600000, true },
	{ "lowest limits",
	  "donor=10.0.0.1 size=2M slab_size=2M queues=1 queue_depth=1 io_timeout_ms=100 sync_io=0",
	  1, SZ_2M, SZ_2M, "", 1, 1, 100, false },
	/* Decimal, as sizes are: match_u64() alone reads 010 as eight. */
	{ "numbers with a leading zero",
	  "donor=10.0.0.1 size=4G queues=010 queue_depth=0064 io_timeout_ms=0100",
	  1, SZ_4G, 0, "", 10, 64, 100, false },
	{ "more leading zeros than match_u64() can hold",
	  "donor=10.0.0.1 size=4G queue_depth=000000000000000000000000000000064",
	  1, SZ_4G, 0, "", 4, 64, 30000, false },
	{ "read_policy round-robin",
	  "donor=10.0.0.1 donor=10.0.0.2 size=4G read_policy=round-robin",
	  2, SZ_4G, 0, "", 4, 128, 30000, false, FARSWAP_READ_ROUND_ROBIN },
	{ "read_policy fastest", "donor=10.0.0.1 size=4G read_policy=fastest",
	  1, SZ_4G, 0, "", 4, 128, 30000, false, FARSWAP_READ_FASTEST },
	{ "encrypt", "donor=10.0.0.1 size=4G encrypt=1",
	  1, SZ_4G, 0, "", 4, 128, 30000, false, FARSWAP_READ_FASTEST, true },
	/* Only encryption brings its own check: integrity= goes with 0. */
	{ "encrypt off, integrity given",
	  "donor=10.0.0.1 size=4G encrypt=0 integrity=crc32c",
	  1, SZ_4G, 0, "", 4, 128, 30000, false, FARSWAP_READ_FASTEST, false },
};

KUNIT_ARRAY_PARAM_DESC(attach_ok, attach_ok_cases, desc);

static void parse_attach_ok_test(struct kunit *test)
{
	const struct attach_ok_case *c = test->param_value;
	struct farswap_attach_args *a;
	char err[FARSWAP_ERR_LEN] = "";
	char *cmd;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	cmd = kunit_kstrdup(test, c->cmd, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, cmd);
	default_args(a);

	KUNIT_ASSERT_EQ_MSG(test, farswap_parse_attach(cmd, a, err,
						       sizeof(err)),
			    0, "refused: %s", err);
	KUNIT_EXPECT_EQ(test, a->nr_donors, c->nr_donors);
	KUNIT_EXPECT_EQ(test, a->size, c->size);
	KUNIT_EXPECT_EQ(test, a->slab_size, c->slab_size);
	KUNIT_EXPECT_STREQ(test, a->name, c->name);
	KUNIT_EXPECT_EQ(test, a->nr_queues, c->nr_queues);
	KUNIT_EXPECT_EQ(test, a->queue_depth, c->queue_depth);
	KUNIT_EXPECT_EQ(test, a->io_timeout_ms, c->io_timeout_ms);
	KUNIT_EXPECT_EQ(test, a->sync_io, c->sync_io);
	KUNIT_EXPECT_EQ(test, a->read_policy, c->read_policy);
	KUNIT_EXPECT_EQ(test, a->encrypt, c->encrypt);
}

struct attach_bad_case {
	const char *desc;
	const char *cmd;
	const char *err_has;	/* a word the reason must hold */
};

static const struct attach_bad_case attach_bad_cases[] = {
	{ "empty command", "", "no donor" },
	{ "no donor", "size=4G", "no donor" },
	{ "no size", "donor=10.0.0.1", "no size" },
	{ "17 donors", DONORS16 " donor=10.0.0.17 size=4G", "too many" },
	{ "donor twice, once with the default port",
	  "donor=10.0.0.1 donor=10.0.0.1:7471 size=4G", "twice" },
	{ "bad donor address", "donor=10.0.0.300 size=4G", "donor" },
	{ "size not a multiple of slab_size",
	  "donor=10.0.0.1 size=5G slab_size=2G", "multiple" },
	{ "size 0", "donor=10.0.0.1 size=0", "size" },
	{ "size wrapping to 1T", "donor=10.0.0.1 size=16777217T", "size" },
	{ "slab_size below 2M", "donor=10.0.0.1 size=4G slab_size=1M",
	  "slab_size" },
	{ "slab_size not a power of two",
	  "donor=10.0.0.1 size=6M slab_size=3M", "slab_size" },
	{ "unknown option", "donor=10.0.0.1 size=4G bogus=1",
	  "unknown option 'bogus'" },
	{ "option that only starts like one",
	  "donor=10.0.0.1 size=4G sizes=4G", "unknown option 'sizes'" },
	{ "option names are lower case", "donor=10.0.0.1 SIZE=4G",
	  "unknown option 'SIZE'" },
	{ "size given twice", "donor=10.0.0.1 size=4G size=8G",
	  "option 'size' given twice" },
	{ "queues given twice", "donor=10.0.0.1 size=4G queues=2 queues=2",
	  "option 'queues' given twice" },
	{ "read_policy unknown", "donor=10.0.0.1 size=4G read_policy=random",
	  "bad read_policy 'random' (fastest or round-robin)" },
	{ "read_policy given twice",
	  "donor=10.0.0.1 size=4G read_policy=fastest read_policy=fastest",
	  "option 'read_policy' given twice" },
	{ "name given twice",
	  "donor=10.0.0.1 size=4G name=farswap1 name=farswap2",
	  "option 'name' given twice" },
	{ "sync_io given twice", "donor=10.0.0.1 size=4G sync_io=0 sync_io=1",
	  "option 'sync_io' given twice" },
	{ "encrypt given twice", "donor=10.0.0.1 size=4G encrypt=1 encrypt=1",
	  "option 'encrypt' given twice" },
	{ "encrypt 2", "donor=10.0.0.1 size=4G encrypt=2", "bad encrypt '2'" },
	{ "encrypt with integrity",
	  "donor=10.0.0.1 size=4G integrity=siphash encrypt=1",
	  "integrity= with encrypt=1" },
	{ "encrypt with integrity off",
	  "donor=10.0.0.1 size=4G encrypt=1 integrity=off",
	  "integrity= with encrypt=1" },

	{ "key without value", "donor=10.0.0.1 size", "key=value" },
	{ "empty value", "donor=10.0.0.1 size=", "key=value" },
	{ "value without key", "donor=10.0.0.1 =4G", "key=value" },
	{ "queues 0", "donor=10.0.0.1 size=4G queues=0", "queues" },
	{ "queues 65", "donor=10.0.0.1 size=4G queues=65", "queues" },
	{ "queues negative", "donor=10.0.0.1 size=4G queues=-1", "queues" },
	{ "queues hexadecimal", "donor=10.0.0.1 size=4G queues=0x4",
	  "queues" },
	{ "queues with a sign", "donor=10.0.0.1 size=4G queues=+4",
	  "queues" },
	{ "queues past 2^64",
	  "donor=10.0.0.1 size=4G queues=18446744073709551620", "queues" },

	{ "queue_depth 0", "donor=10.0.0.1 size=4G queue_depth=0",
	  "queue_depth" },
	{ "queue_depth 1025", "donor=10.0.0.1 size=4G queue_depth=1025",
	  "queue_depth" },
	{ "io_timeout_ms 99", "donor=10.0.0.1 size=4G io_timeout_ms=99",
	  "io_timeout_ms" },
	{ "io_timeout_ms with an exponent",
	  "donor=10.0.0.1 size=4G io_timeout_ms=1e4", "io_timeout_ms" },
	{ "io_timeout_ms 3600001",
	  "donor=10.0.0.1 size=4G io_timeout_ms=3600001", "io_timeout_ms" },
	{ "sync_io 2", "donor=10.0.0.1 size=4G sync_io=2", "sync_io" },
	{ "stage_kb past its cap",
	  "donor=10.0.0.1 size=4G stage_kb=262145", "stage_kb" },
	{ "stage_kb hexadecimal", "donor=10.0.0.1 size=4G stage_kb=0x100",
	  "stage_kb" },
	{ "stage_kb twice", "donor=10.0.0.1 size=4G stage_kb=64 stage_kb=0",
	  "twice" },
	{ "name not farswapN", "donor=10.0.0.1 size=4G name=sda", "name" },
	{ "name farswap+5", "donor=10.0.0.1 size=4G name=farswap+5", "name" },
	{ "name longer than the buffer",
	  "donor=10.0.0.1 size=4G name=farswap000000000000000000000000001",
	  "name" },
	{ "host_id not a UUID", "donor=10.0.0.1 size=4G host_id=host7",
	  "bad host_id 'host7'" },
	{ "host_id without dashes",
	  "donor=10.0.0.1 size=4G host_id=0f1e2d3c4b5a69788796a5b4c3d2e1f0",
	  "bad host_id" },
	/* uuid_parse() alone reads the first 36 characters only. */
	{ "host_id with more after the UUID",
	  "donor=10.0.0.1 size=4G host_id=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0x",
	  "bad host_id" },
	{ "host_id one digit short",
	  "donor=10.0.0.1 size=4G host_id=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f",
	  "bad host_id" },
	{ "host_id not hexadecimal",
	  "donor=10.0.0.1 size=4G host_id=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg",
	  "bad host_id" },
	{ "host_id the nil UUID",
	  "donor=10.0.0.1 size=4G host_id=00000000-0000-0000-0000-000000000000",
	  "bad host_id" },
	{ "host_id twice",
	  "donor=10.0.0.1 size=4G host_id=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 host_id=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
	  "'host_id' given twice" },
};

KUNIT_ARRAY_PARAM_DESC(attach_bad, attach_bad_cases, desc);

static void parse_attach_bad_test(struct kunit *test)
{
	const struct attach_bad_case *c = test->param_value;
	struct farswap_attach_args *a;
	char err[FARSWAP_ERR_LEN] = "";
	char *cmd;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	cmd = kunit_kstrdup(test, c->cmd, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, cmd);
	default_args(a);

	KUNIT_ASSERT_EQ(test, farswap_parse_attach(cmd, a, err, sizeof(err)),
			-EINVAL);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(err, c->err_has),
				  "reason '%s' lacks '%s'", err, c->err_has);
}

/*
 * A refused number's reason states the allowed range, and the parser
 * enforces exactly that range: the limits may move, what the user is
 * told must stay true.
 */
static int parse_one_number(struct kunit *test, const char *key,
			    unsigned long val, unsigned int *out, char *err)
{
	struct farswap_attach_args *a;
	char *cmd;
	int ret;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	cmd = kunit_kzalloc(test, 96, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, cmd);
	default_args(a);
	snprintf(cmd, 96, "donor=10.0.0.1 size=4G %s=%lu", key, val);
	ret = farswap_parse_attach(cmd, a, err, FARSWAP_ERR_LEN);
	if (!strcmp(key, "queues"))
		*out = a->nr_queues;
	else if (!strcmp(key, "queue_depth"))
		*out = a->queue_depth;
	else
		*out = a->io_timeout_ms;
	return ret;
}

static void stated_range_test(struct kunit *test)
{
	static const char * const keys[] = {
		"queues", "queue_depth", "io_timeout_ms",
	};
	char err[FARSWAP_ERR_LEN];
	unsigned int i, lo, hi, got;
	const char *range;
	int n;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		const char *key = keys[i];

		KUNIT_ASSERT_EQ(test, parse_one_number(test, key, 0, &got, err),
				-EINVAL);
		range = strchr(err, '(');
		KUNIT_ASSERT_NOT_NULL_MSG(test, range, "%s: '%s'", key, err);
		n = sscanf(range, "(%u to %u)", &lo, &hi);
		KUNIT_ASSERT_EQ_MSG(test, n, 2, "%s: '%s'", key, err);
		KUNIT_ASSERT_LE(test, lo, hi);

		KUNIT_EXPECT_EQ_MSG(test, parse_one_number(test, key, lo, &got,
							   err), 0,
				    "%s=%u: %s", key, lo, err);
		KUNIT_EXPECT_EQ(test, got, lo);
		KUNIT_EXPECT_EQ_MSG(test, parse_one_number(test, key, hi, &got,
							   err), 0,
				    "%s=%u: %s", key, hi, err);
		KUNIT_EXPECT_EQ(test, got, hi);
		if (lo)
			KUNIT_EXPECT_EQ_MSG(test,
					    parse_one_number(test, key, lo - 1,
							     &got, err),
					    -EINVAL, "%s=%u", key, lo - 1);
		KUNIT_EXPECT_EQ_MSG(test,
				    parse_one_number(test, key, hi + 1ul, &got,
						     err),
				    -EINVAL, "%s=%lu", key, hi + 1ul);
		/* Never more queues than a session may open. */
		if (!strcmp(key, "queues"))
			KUNIT_EXPECT_LE(test, hi, FARSWAP_MAX_IO_QUEUES);
	}
}

/* Donors are listed in command order, each as parsed on its own. */
static void attach_donor_order_test(struct kunit *test)
{
	static const char * const donor[] = {
		"10.0.0.9:7000", "[fe80::1]", "10.0.0.1",
	};
	struct farswap_attach_args *a;
	struct sockaddr_storage want;
	char err[FARSWAP_ERR_LEN];
	unsigned int i;
	char *cmd;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	cmd = kunit_kzalloc(test, 128, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, cmd);
	snprintf(cmd, 128, "size=4G donor=%s donor=%s donor=%s", donor[0],
		 donor[1], donor[2]);
	default_args(a);
	KUNIT_ASSERT_EQ(test, farswap_parse_attach(cmd, a, err, sizeof(err)),
			0);
	KUNIT_ASSERT_EQ(test, a->nr_donors, ARRAY_SIZE(donor));
	for (i = 0; i < ARRAY_SIZE(donor); i++) {
		KUNIT_ASSERT_EQ(test, farswap_parse_addr(donor[i], &want), 0);
		KUNIT_EXPECT_TRUE_MSG(test,
				      farswap_addr_equal(&a->donor[i], &want),
				      "donor %u is not %s", i, donor[i]);
	}

	/* Parsing again with the same args starts the donor list afresh. */
	cmd = kunit_kstrdup(test, "donor=10.0.0.5 size=4G", GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cmd);
	KUNIT_ASSERT_EQ(test, farswap_parse_attach(cmd, a, err, sizeof(err)),
			0);
	KUNIT_EXPECT_EQ(test, a->nr_donors, 1);
}

/* A reason longer than the caller's buffer is cut, not overrun. */
static void attach_small_err_buffer_test(struct kunit *test)
{
	struct farswap_attach_args *a;
	char err[8 + 1];
	char *cmd;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	cmd = kunit_kstrdup(test, "donor=10.0.0.1 size=4G bogus_option=1",
			    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, cmd);
	default_args(a);
	err[8] = 'X';
	KUNIT_EXPECT_EQ(test, farswap_parse_attach(cmd, a, err, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, strnlen(err, 8), 7);
	KUNIT_EXPECT_EQ(test, err[8], 'X');
}

/*
 * host_id=: the device's identity, in place of the module's.  Without it
 * the defaults' (the module's id and where that came from) stay.
 */
static void attach_host_id_test(struct kunit *test)
{
	static const u8 want[FARSWAP_ID_LEN] = {
		0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78,
		0x87, 0x96, 0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0,
	};
	static const u8 module_id[FARSWAP_ID_LEN] = { 0x42, [15] = 0x24 };
	struct farswap_attach_args *a;
	char err[FARSWAP_ERR_LEN] = "";
	char *cmd;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);

	/* Not given: the module's, as default_args() left it. */
	default_args(a);
	memcpy(a->host_id, module_id, FARSWAP_ID_LEN);
	a->host_id_source = FARSWAP_HOST_ID_RANDOM;
	cmd = kunit_kstrdup(test, "donor=10.0.0.1 size=4G", GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cmd);
	KUNIT_ASSERT_EQ_MSG(test, farswap_parse_attach(cmd, a, err,
						       sizeof(err)),
			    0, "refused: %s", err);
	KUNIT_EXPECT_MEMEQ(test, a->host_id, module_id, FARSWAP_ID_LEN);
	KUNIT_EXPECT_EQ(test, a->host_id_source, FARSWAP_HOST_ID_RANDOM);

	/* Given, in either case: the bytes in the UUID's order. */
	cmd = kunit_kstrdup(test,
			    "donor=10.0.0.1 host_id=0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0 size=4G",
			    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cmd);
	KUNIT_ASSERT_EQ_MSG(test, farswap_parse_attach(cmd, a, err,
						       sizeof(err)),
			    0, "refused: %s", err);
	KUNIT_EXPECT_MEMEQ(test, a->host_id, want, FARSWAP_ID_LEN);
	KUNIT_EXPECT_EQ(test, a->host_id_source, FARSWAP_HOST_ID_ATTACH);

	/* A refused one leaves the module's in place. */
	default_args(a);
	memcpy(a->host_id, module_id, FARSWAP_ID_LEN);
	a->host_id_source = FARSWAP_HOST_ID_MODULE;
	cmd = kunit_kstrdup(test,
			    "donor=10.0.0.1 size=4G host_id=0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-",
			    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cmd);
	KUNIT_EXPECT_EQ(test, farswap_parse_attach(cmd, a, err, sizeof(err)),
			-EINVAL);
	KUNIT_EXPECT_MEMEQ(test, a->host_id, module_id, FARSWAP_ID_LEN);
	KUNIT_EXPECT_EQ(test, a->host_id_source, FARSWAP_HOST_ID_MODULE);

	KUNIT_EXPECT_STREQ(test,
			   farswap_host_id_source_name(FARSWAP_HOST_ID_ATTACH),
			   "attach");
	KUNIT_EXPECT_STREQ(test,
			   farswap_host_id_source_name(FARSWAP_HOST_ID_MODULE),
			   "module");
	KUNIT_EXPECT_STREQ(test,
			   farswap_host_id_source_name(FARSWAP_HOST_ID_RANDOM),
			   "random");
}

/*
 * The command word of a /dev/farswap-ctl write
 */

struct cmd_op_case {
	const char *desc;
	const char *cmd;
	enum farswap_cmd_op op;
	const char *rest;	/* where the options start */
};

static const struct cmd_op_case cmd_op_cases[] = {
	{ "bare options attach", "donor=10.0.0.1 size=4G", FARSWAP_CMD_ATTACH,
	  "donor=10.0.0.1 size=4G" },
	{ "attach", "attach donor=10.0.0.1", FARSWAP_CMD_ATTACH,
	  " donor=10.0.0.1" },
	{ "detach", "detach name=farswap0", FARSWAP_CMD_DETACH,
	  " name=farswap0" },
	{ "detach after blanks", " \tdetach,name=farswap0", FARSWAP_CMD_DETACH,
	  ",name=farswap0" },
	{ "detach alone, as echo writes it", "detach\n", FARSWAP_CMD_DETACH,
	  "\n" },
	{ "donor_add", "donor_add name=farswap0 donor=10.0.0.3",
	  FARSWAP_CMD_DONOR_ADD, " name=farswap0 donor=10.0.0.3" },
	{ "donor_remove", "donor_remove name=farswap0 donor=10.0.0.3",
	  FARSWAP_CMD_DONOR_REMOVE, " name=farswap0 donor=10.0.0.3" },
	/* Not the word: left for the option parser to refuse. */
	{ "donor alone", "donor name=farswap0", FARSWAP_CMD_ATTACH,
	  "donor name=farswap0" },
	/* Not the word: left for the option parser to refuse. */
	{ "detached", "detached name=farswap0", FARSWAP_CMD_ATTACH,
	  "detached name=farswap0" },
	{ "Detach", "Detach name=farswap0", FARSWAP_CMD_ATTACH,
	  "Detach name=farswap0" },
	{ "empty", "", FARSWAP_CMD_ATTACH, "" },
};

KUNIT_ARRAY_PARAM_DESC(cmd_op, cmd_op_cases, desc);

static void cmd_op_test(struct kunit *test)
{
	const struct cmd_op_case *c = test->param_value;
	char *cmd = kunit_kstrdup(test, c->cmd, GFP_KERNEL);
	char *rest = cmd;

	KUNIT_ASSERT_NOT_NULL(test, cmd);
	KUNIT_EXPECT_EQ(test, farswap_cmd_op(&rest), c->op);
	KUNIT_EXPECT_STREQ(test, rest, c->rest);
}

/*
 * Detach commands: the options after the word "detach"
 */

struct detach_case {
	const char *desc;
	const char *opts;
	int ret;
	const char *want;	/* the name, or a word the reason must hold */
};

static const struct detach_case detach_cases[] = {
	{ "name", " name=farswap0", 0, "farswap0" },
	{ "name and newline", " name=farswap12\n", 0, "farswap12" },
	{ "no name", "", -EINVAL, "no device" },
	{ "blanks only", " \n", -EINVAL, "no device" },
	{ "bare device name", " farswap0", -EINVAL, "key=value" },
	{ "empty name", " name=", -EINVAL, "key=value" },
	{ "not farswapN", " name=sda", -EINVAL, "bad name 'sda'" },
	{ "name too long", " name=farswap0000000000000000000000000000001",
	  -EINVAL, "bad name" },
	{ "name twice", " name=farswap0 name=farswap1", -EINVAL,
	  "given twice" },
	{ "attach option", " name=farswap0 size=4G", -EINVAL,
	  "unknown detach option 'size'" },
};

KUNIT_ARRAY_PARAM_DESC(detach, detach_cases, desc);

static void parse_detach_test(struct kunit *test)
{
	const struct detach_case *c = test->param_value;
	char *opts = kunit_kstrdup(test, c->opts, GFP_KERNEL);
	char name[FARSWAP_NAME_LEN];
	char err[FARSWAP_ERR_LEN] = "";
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, opts);
	ret = farswap_parse_detach(opts, name, err, sizeof(err));
	KUNIT_ASSERT_EQ_MSG(test, ret, c->ret, "reason: %s", err);
	if (!ret)
		KUNIT_EXPECT_STREQ(test, name, c->want);
	else
		KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(err, c->want),
					  "reason '%s' lacks '%s'", err,
					  c->want);
}

struct donor_cmd_case {
	const char *name;
	const char *opts;
	int ret;
	const char *want;	/* the device, or a part of the reason */
	const char *addr;	/* the address parsed, for ret 0 */
};

static const struct donor_cmd_case donor_cmd_cases[] = {
	{ "name and donor", " name=farswap0 donor=10.0.0.3", 0, "farswap0",
	  "10.0.0.3:7471" },
	{ "donor first, port, newline", " donor=10.0.0.3:7500 name=farswap2\n",
	  0, "farswap2", "10.0.0.3:7500" },
	{ "IPv6", " name=farswap1 donor=[2001:db8::1]:7471", 0, "farswap1",
	  "[2001:db8::1]:7471" },
	{ "no donor", " name=farswap0", -EINVAL, "no donor given", NULL },
	{ "no name", " donor=10.0.0.3", -EINVAL, "no device given", NULL },
	{ "two donors", " name=farswap0 donor=10.0.0.3 donor=10.0.0.4",
	  -EINVAL, "'donor' given twice", NULL },
	{ "two names", " name=farswap0 name=farswap1 donor=10.0.0.3", -EINVAL,
	  "'name' given twice", NULL },
	{ "bad address", " name=farswap0 donor=10.0.0", -EINVAL,
	  "bad donor address '10.0.0'", NULL },
	{ "bad name", " name=sda donor=10.0.0.3", -EINVAL, "bad name 'sda'",
	  NULL },
	{ "attach option", " name=farswap0 donor=10.0.0.3 size=4G", -EINVAL,
	  "unknown option 'size'", NULL },
	{ "bare word", " name=farswap0 10.0.0.3", -EINVAL, "key=value", NULL },
};

KUNIT_ARRAY_PARAM_DESC(donor_cmd, donor_cmd_cases, name);

static void parse_donor_cmd_test(struct kunit *test)
{
	const struct donor_cmd_case *c = test->param_value;
	char *opts = kunit_kstrdup(test, c->opts, GFP_KERNEL);
	struct sockaddr_storage addr, want;
	char name[FARSWAP_NAME_LEN];
	char err[FARSWAP_ERR_LEN] = "";
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, opts);
	ret = farswap_parse_donor_cmd(opts, name, &addr, err, sizeof(err));
	KUNIT_ASSERT_EQ_MSG(test, ret, c->ret, "reason: %s", err);
	if (ret) {
		KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(err, c->want),
					  "reason '%s' lacks '%s'", err,
					  c->want);
		return;
	}
	KUNIT_EXPECT_STREQ(test, name, c->want);
	KUNIT_ASSERT_EQ(test, farswap_parse_addr(c->addr, &want), 0);
	KUNIT_EXPECT_TRUE(test, farswap_addr_equal(&addr, &want));
}

/*
 * An attach without key= goes only with insecure_no_auth=1: a host never
 * trusts whoever answers at its donors' addresses by default.
 */
static void attach_auth_check_test(struct kunit *test)
{
	struct farswap_attach_args *a = kunit_kzalloc(test, sizeof(*a),
						      GFP_KERNEL);
	char err[FARSWAP_ERR_LEN] = "";
	char *opts;

	KUNIT_ASSERT_NOT_NULL(test, a);
	opts = kunit_kstrdup(test, "donor=10.0.0.1 size=64M", GFP_KERNEL);
	KUNIT_ASSERT_EQ(test, farswap_parse_attach(opts, a, err, sizeof(err)), 0);
	KUNIT_EXPECT_EQ(test, farswap_attach_auth_check(a, err, sizeof(err)),
			-ENOKEY);
	KUNIT_EXPECT_NOT_NULL(test, strstr(err, "insecure_no_auth=1"));
	KUNIT_EXPECT_NOT_NULL(test, strstr(err, "unauthenticated"));

	memset(a, 0, sizeof(*a));
	opts = kunit_kstrdup(test, "donor=10.0.0.1 size=64M insecure_no_auth=1",
			     GFP_KERNEL);
	KUNIT_ASSERT_EQ(test, farswap_parse_attach(opts, a, err, sizeof(err)), 0);
	KUNIT_EXPECT_TRUE(test, a->insecure_no_auth);
	KUNIT_EXPECT_EQ(test, farswap_attach_auth_check(a, err, sizeof(err)), 0);

	memset(a, 0, sizeof(*a));
	opts = kunit_kstrdup(test, "donor=10.0.0.1 size=64M key=farswap:pool",
			     GFP_KERNEL);
	KUNIT_ASSERT_EQ(test, farswap_parse_attach(opts, a, err, sizeof(err)), 0);
	KUNIT_EXPECT_EQ(test, farswap_attach_auth_check(a, err, sizeof(err)), 0);

	memset(a, 0, sizeof(*a));
	opts = kunit_kstrdup(test, "donor=10.0.0.1 size=64M insecure_no_auth=maybe",
			     GFP_KERNEL);
	KUNIT_EXPECT_EQ(test, farswap_parse_attach(opts, a, err, sizeof(err)),
			-EINVAL);
	KUNIT_EXPECT_NOT_NULL(test, strstr(err, "bad insecure_no_auth 'maybe'"));
}

/* stage_kb=: 0 (off) to its cap, kept as given; not given, the default. */
static void attach_stage_kb_test(struct kunit *test)
{
	static const struct {
		const char *cmd;
		unsigned int kb;
	} cases[] = {
		{ "donor=10.0.0.1 size=4G", 4096 },
		{ "donor=10.0.0.1 size=4G stage_kb=0", 0 },
		{ "donor=10.0.0.1 size=4G stage_kb=100", 100 },
		{ "donor=10.0.0.1 size=4G stage_kb=262144", 262144 },
	};
	struct farswap_attach_args *a;
	char err[FARSWAP_ERR_LEN];
	unsigned int i;

	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *cmd = kunit_kstrdup(test, cases[i].cmd, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, cmd);
		default_args(a);
		a->stage_kb = 4096;
		KUNIT_ASSERT_EQ_MSG(test, farswap_parse_attach(cmd, a, err,
							       sizeof(err)),
				    0, "'%s' refused: %s", cases[i].cmd, err);
		KUNIT_EXPECT_EQ(test, a->stage_kb, cases[i].kb);
	}
}

static struct kunit_case farswap_args_cases[] = {
	KUNIT_CASE_PARAM(parse_addr_test, addr_gen_params),
	KUNIT_CASE(addr_equal_test),
	KUNIT_CASE_PARAM(parse_size_test, size_gen_params),
	KUNIT_CASE_PARAM(name_index_test, name_gen_params),
	KUNIT_CASE_PARAM(parse_attach_ok_test, attach_ok_gen_params),
	KUNIT_CASE_PARAM(parse_attach_bad_test, attach_bad_gen_params),
	KUNIT_CASE(stated_range_test),
	KUNIT_CASE(attach_donor_order_test),
	KUNIT_CASE(attach_small_err_buffer_test),
	KUNIT_CASE(attach_host_id_test),
	KUNIT_CASE(attach_stage_kb_test),
	KUNIT_CASE_PARAM(cmd_op_test, cmd_op_gen_params),
	KUNIT_CASE_PARAM(parse_detach_test, detach_gen_params),
	KUNIT_CASE_PARAM(parse_donor_cmd_test, donor_cmd_gen_params),
	KUNIT_CASE(attach_auth_check_test),
	{}
};

static struct kunit_suite farswap_args_suite = {
	.name = "farswap_args",
	.test_cases = farswap_args_cases,
};

kunit_test_suite(farswap_args_suite);
