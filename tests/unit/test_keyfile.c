// SPDX-License-Identifier: GPL-2.0
/*
 * Key files (common/keyfile.c): the format against known answers worked
 * out apart from this code (Python's base64 and zlib.crc32), the round
 * trip format -> parse and write -> read, every refusal with its reason
 * (never a byte of the secret in it), and the writer: mode 0600, never
 * over an existing file, or to standard output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "keyfile.h"

/*
 * python3 -c 'import base64, zlib; s = bytes(range(32));
 *   print(base64.b64encode(s + zlib.crc32(s).to_bytes(4, "little")))'
 */
#define B64_0_31	"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR"
#define KEY_0_31	"FARSWAP-1:00:" B64_0_31 ":"
/* The same for the 32 bytes "0123456789abcdef0123456789abcdef". */
#define KEY_DIGITS	"FARSWAP-1:00:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWYOtVl3:"

static void secret_0_31(uint8_t secret[FARSWAP_AUTH_KEY_LEN])
{
	int i;

	for (i = 0; i < FARSWAP_AUTH_KEY_LEN; i++)
		secret[i] = (uint8_t)i;
}

/* fs_key_parse of the NUL-terminated @text: 0, or -EINVAL and @why. */
static int parse(const char *text, uint8_t secret[FARSWAP_AUTH_KEY_LEN],
		 char *why, size_t whylen)
{
	return fs_key_parse(text, strlen(text), secret, why, whylen);
}

/* A fresh file name in /tmp, not yet there. */
static void tmp_name(char *path, size_t len)
{
	static unsigned int n;

	snprintf(path, len, "/tmp/farswap-keyfile-%d-%u", (int)getpid(), n++);
	unlink(path);
}

static int write_text(const char *path, const char *text, size_t len,
		      mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	fchmod(fd, mode);
	return close(fd);
}

static void test_format_known_answer(void **state)
{
	uint8_t secret[FARSWAP_AUTH_KEY_LEN];
	char text[FS_KEY_TEXT_SIZE];

	(void)state;
	assert_int_equal(FS_KEY_TEXT_LEN, strlen(KEY_0_31));
	secret_0_31(secret);
	assert_int_equal(fs_key_format(secret, text), FS_KEY_TEXT_LEN + 1);
	assert_string_equal(text, KEY_0_31 "\n");
	fs_key_format((const uint8_t *)"0123456789abcdef0123456789abcdef",
		      text);
	assert_string_equal(text, KEY_DIGITS "\n");
}

static void test_parse_known_answer(void **state)
{
	uint8_t secret[FARSWAP_AUTH_KEY_LEN], want[FARSWAP_AUTH_KEY_LEN];
	char why[256];

	(void)state;
	secret_0_31(want);
	/* With its newline or without. */
	assert_int_equal(parse(KEY_0_31 "\n", secret, why, sizeof(why)), 0);
	assert_memory_equal(secret, want, sizeof(want));
	memset(secret, 0, sizeof(secret));
	assert_int_equal(parse(KEY_0_31, secret, why, sizeof(why)), 0);
	assert_memory_equal(secret, want, sizeof(want));
	assert_int_equal(parse(KEY_DIGITS, secret, why, sizeof(why)), 0);
	assert_memory_equal(secret, "0123456789abcdef0123456789abcdef", 32);
}

/* Random secrets: formatted, parsed back to the same bytes. */
static void test_round_trip(void **state)
{
	uint8_t secret[FARSWAP_AUTH_KEY_LEN], back[FARSWAP_AUTH_KEY_LEN];
	char text[FS_KEY_TEXT_SIZE], err[256];
	int i;

	(void)state;
	for (i = 0; i < 64; i++) {
		assert_int_equal(fs_key_generate(secret, err, sizeof(err)), 0);
		assert_int_equal(fs_key_format(secret, text), FS_KEY_TEXT_LEN + 1);
		assert_int_equal(strncmp(text, "FARSWAP-1:00:", 13), 0);
		assert_int_equal(text[FS_KEY_TEXT_LEN - 1], ':');
		memset(back, 0, sizeof(back));
		assert_int_equal(parse(text, back, err, sizeof(err)), 0);
		assert_memory_equal(back, secret, sizeof(secret));
	}
}

/*
 * @text is refused, its reason holding @reason and nothing of the
 * secret's base64 or bytes (@leak, a piece of the base64, if not NULL).
 */
static void refused(const char *text, size_t len, const char *reason,
		    const char *leak)
{
	uint8_t secret[FARSWAP_AUTH_KEY_LEN];
	char why[256];

	memset(secret, 0xa5, sizeof(secret));
	memset(why, 0, sizeof(why));
	if (fs_key_parse(text, len, secret, why, sizeof(why)) != -EINVAL)
		fail_msg("'%.*s' taken as a key", (int)len, text);
	if (!strstr(why, reason))
		fail_msg("'%.*s': reason '%s' does not say '%s'", (int)len,
			 text, why, reason);
	if (leak)
		assert_null(strstr(why, leak));
	/* The caller's buffer is not written on a refusal. */
	for (len = 0; len < sizeof(secret); len++)
		assert_int_equal(secret[len], 0xa5);
}

#define REFUSED(text, reason) refused(text, sizeof(text) - 1, reason, "AAECAwQF")

static void test_not_a_key(void **state)
{
	(void)state;
	REFUSED("", "not a farswap key");
	REFUSED("\n", "not a farswap key");
	/* The old style: the bytes of any text, base64 here. */
	REFUSED("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n",
		"not a farswap key");
	REFUSED("0123456789abcdef0123456789abcdef", "no longer read");
	/* NVMe's format is not farswap's. */
	REFUSED("DHHC-1:00:" B64_0_31 ":\n", "not a farswap key");
	REFUSED("farswap-1:00:" B64_0_31 ":\n", "not a farswap key");
	REFUSED(" " KEY_0_31 "\n", "not a farswap key");
	REFUSED("FARSWAP", "not a farswap key");
}

static void test_unknown_version(void **state)
{
	(void)state;
	REFUSED("FARSWAP-2:00:" B64_0_31 ":\n", "unknown key version 2 ");
	REFUSED("FARSWAP-10:00:" B64_0_31 ":\n", "unknown key version 10 ");
	REFUSED("FARSWAP-1.0:00:" B64_0_31 ":\n", "unknown key version (");
	REFUSED("FARSWAP-:00:" B64_0_31 ":\n", "unknown key version (");
	REFUSED("FARSWAP-", "unknown key version");
	REFUSED("FARSWAP-1", "unknown key version");
	/* What does not look like a version is not shown. */
	REFUSED("FARSWAP-" B64_0_31 ":\n", "unknown key version (");
}

static void test_unknown_transform(void **state)
{
	(void)state;
	REFUSED("FARSWAP-1:01:" B64_0_31 ":\n", "unknown key transform 01 ");
	REFUSED("FARSWAP-1:03:" B64_0_31 ":\n", "unknown key transform 03 ");
	REFUSED("FARSWAP-1:0:" B64_0_31 ":\n", "unknown key transform 0 ");
	REFUSED("FARSWAP-1::" B64_0_31 ":\n", "unknown key transform (");
	REFUSED("FARSWAP-1:" B64_0_31 ":\n", "unknown key transform (");
	REFUSED("FARSWAP-1:00", "unknown key transform");
}

static void test_bad_base64(void **state)
{
	(void)state;
	/* A character outside the alphabet. */
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh*KfiaR:\n",
		"bad base64");
	/* URL-safe base64 is another alphabet. */
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh_KfiaR:\n",
		"bad base64");
	/* Blanks, which EVP_DecodeBlock() would skip at either end. */
	REFUSED("FARSWAP-1:00: AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:\n",
		"bad base64");
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR :\n",
		"bad base64");
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAR\nEhMUFRYXGBkaGxwdHh+KfiaR:\n",
		"bad base64");
	/* Not a whole number of quads. */
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaRA:\n",
		"bad base64");
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+Kfia:\n",
		"these 47 are not base64");
	/* Padding inside the text, which EVP_DecodeBlock() takes. */
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+Kf=aR:\n",
		"bad base64");
	/* Bits past the end set: not the canonical text of any bytes. */
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaRAB==:\n",
		"bad base64");
	REFUSED("FARSWAP-1:00::\n", "these 0 are not base64");
	REFUSED("FARSWAP-1:00:" B64_0_31, "no ':' ends it");
	REFUSED("FARSWAP-1:00:" B64_0_31 "\n", "no ':' ends it");
}

static void test_wrong_length(void **state)
{
	(void)state;
	/* 44 characters, 33 bytes. */
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+K:\n",
		"wrong length: the base64 decodes to 33 bytes, not 36");
	/* Padding counts no byte: 34 and 35 bytes. */
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+Kfg==:\n",
		"decodes to 34 bytes");
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiY=:\n",
		"decodes to 35 bytes");
	/* 39 bytes. */
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaRAAAA:\n",
		"decodes to 39 bytes");
	/* The 32 bytes alone, without their CRC. */
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=:\n",
		"decodes to 32 bytes");
	REFUSED("FARSWAP-1:00:AAAA:\n", "decodes to 3 bytes");
}

static void test_checksum_mismatch(void **state)
{
	(void)state;
	/* A secret byte changed (0x00 -> 0x04), the CRC not. */
	REFUSED("FARSWAP-1:00:BAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:\n",
		"checksum mismatch");
	/* The CRC changed. */
	REFUSED("FARSWAP-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaS:\n",
		"checksum mismatch");
	/* All zero: no CRC-32 of 32 zero bytes is 0. */
	REFUSED("FARSWAP-1:00:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:\n",
		"checksum mismatch");
}

static void test_data_after_the_key(void **state)
{
	(void)state;
	REFUSED(KEY_0_31 "\n\n", "data after the key (1 bytes");
	REFUSED(KEY_0_31 "\r\n", "data after the key (2 bytes");
	REFUSED(KEY_0_31 " ", "data after the key");
	REFUSED(KEY_0_31 "\nFARSWAP-1:00:" B64_0_31 ":\n",
		"data after the key");
	REFUSED(KEY_0_31 ":\n", "data after the key");
	/* A NUL is data too. */
	refused(KEY_0_31 "\n", sizeof(KEY_0_31 "\n"), "data after the key",
		"AAECAwQF");
}

/* The reader: a message names the file and how to make a key. */
static void test_read_refusal_names_file(void **state)
{
	uint8_t secret[FARSWAP_AUTH_KEY_LEN];
	char path[64], err[512];
	static const char old[] = "0123456789abcdef0123456789abcdef\n";

	(void)state;
	tmp_name(path, sizeof(path));
	assert_int_equal(write_text(path, old, sizeof(old) - 1, 0600), 0);
	assert_int_equal(fs_keyfile_read(path, secret, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "not a farswap key"));
	assert_non_null(strstr(err, "farswapctl gen-key"));
	assert_non_null(strstr(err, "farswapd --gen-key"));
	assert_null(strstr(err, "0123456789"));
	/* A file much longer than a key: refused, not read past its buffer. */
	{
		char big[8192];

		memset(big, 'A', sizeof(big));
		memcpy(big, KEY_0_31 "\n", sizeof(KEY_0_31));
		assert_int_equal(write_text(path, big, sizeof(big), 0600), 0);
		assert_int_equal(fs_keyfile_read(path, secret, err,
						 sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "data after the key"));
		memset(big, 'A', sizeof(big));
		memcpy(big, "FARSWAP-1:00:", 13);
		assert_int_equal(write_text(path, big, sizeof(big), 0600), 0);
		assert_int_equal(fs_keyfile_read(path, secret, err,
						 sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "bad base64"));
	}
	/* The file checks come first: mode, as before the format. */
	assert_int_equal(write_text(path, KEY_0_31 "\n", FS_KEY_TEXT_LEN + 1,
				    0644), 0);
	assert_int_equal(fs_keyfile_read(path, secret, err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "0644"));
	unlink(path);
}

/* fs_keyfile_write and _read: the same secret back, from a 0600 file. */
static void test_write_read(void **state)
{
	uint8_t secret[FARSWAP_AUTH_KEY_LEN], back[FARSWAP_AUTH_KEY_LEN];
	char path[64], err[512], text[FS_KEY_TEXT_SIZE + 8];
	struct stat st;
	ssize_t n;
	int fd;

	(void)state;
	tmp_name(path, sizeof(path));
	secret_0_31(secret);
	assert_int_equal(fs_keyfile_write(path, secret, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	assert_int_equal(n, FS_KEY_TEXT_LEN + 1);
	text[n] = '\0';
	assert_string_equal(text, KEY_0_31 "\n");
	assert_int_equal(fs_keyfile_read(path, back, err, sizeof(err)), 0);
	assert_memory_equal(back, secret, sizeof(secret));
	/* Never over an existing file, the key in it left as it was. */
	memset(secret, 0x55, sizeof(secret));
	assert_int_equal(fs_keyfile_write(path, secret, err, sizeof(err)),
			 -EEXIST);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "exists"));
	assert_int_equal(fs_keyfile_read(path, back, err, sizeof(err)), 0);
	secret_0_31(secret);
	assert_memory_equal(back, secret, sizeof(secret));
	unlink(path);
}

/* farswapctl gen-key FILE: fresh, 0600, refuses an existing FILE. */
static void test_generate_file(void **state)
{
	uint8_t a[FARSWAP_AUTH_KEY_LEN], b[FARSWAP_AUTH_KEY_LEN];
	char path[64], path2[64], link[80], err[512];
	struct stat st;
	mode_t old_umask;

	(void)state;
	tmp_name(path, sizeof(path));
	tmp_name(path2, sizeof(path2));
	/* A lax umask still makes a file only its owner reads. */
	old_umask = umask(0);
	assert_int_equal(fs_keyfile_generate(path, err, sizeof(err)), 0);
	umask(old_umask);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(fs_keyfile_generate(path2, err, sizeof(err)), 0);
	assert_int_equal(fs_keyfile_read(path, a, err, sizeof(err)), 0);
	assert_int_equal(fs_keyfile_read(path2, b, err, sizeof(err)), 0);
	assert_memory_not_equal(a, b, sizeof(a));
	assert_int_equal(fs_keyfile_generate(path, err, sizeof(err)),
			 -EEXIST);
	/* Nor through a symbolic link, dangling or not. */
	snprintf(link, sizeof(link), "%s.link", path);
	unlink(path2);
	assert_int_equal(symlink(path2, link), 0);
	assert_int_not_equal(fs_keyfile_generate(link, err, sizeof(err)), 0);
	assert_int_equal(access(path2, F_OK), -1);
	unlink(link);
	/* A directory that is not there: said, nothing made. */
	assert_int_equal(fs_keyfile_generate("/nonexistent-dir/key", err,
					     sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent-dir/key"));
	unlink(path);
}

/* farswapctl gen-key: to standard output, one key and its newline. */
static void test_generate_stdout(void **state)
{
	uint8_t secret[FARSWAP_AUTH_KEY_LEN];
	char text[256], err[256];
	FILE *out = tmpfile();
	int saved;
	size_t n;

	(void)state;
	assert_non_null(out);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fileno(out), STDOUT_FILENO), STDOUT_FILENO);
	assert_int_equal(fs_keyfile_generate(NULL, err, sizeof(err)), 0);
	assert_int_equal(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);
	rewind(out);
	n = fread(text, 1, sizeof(text), out);
	fclose(out);
	assert_int_equal(n, FS_KEY_TEXT_LEN + 1);
	assert_int_equal(fs_key_parse(text, n, secret, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_known_answer),
		cmocka_unit_test(test_parse_known_answer),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_not_a_key),
		cmocka_unit_test(test_unknown_version),
		cmocka_unit_test(test_unknown_transform),
		cmocka_unit_test(test_bad_base64),
		cmocka_unit_test(test_wrong_length),
		cmocka_unit_test(test_checksum_mismatch),
		cmocka_unit_test(test_data_after_the_key),
		cmocka_unit_test(test_read_refusal_names_file),
		cmocka_unit_test(test_write_read),
		cmocka_unit_test(test_generate_file),
		cmocka_unit_test(test_generate_stdout),
	};

	return cmocka_run_group_tests_name("keyfile", tests, NULL, NULL);
}
