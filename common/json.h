/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON emitter for the machine-readable outputs (farswapctl status
 * --json, farswapd --stats --json): builds a document in a growing buffer,
 * places commas and indentation itself, and escapes every string so that
 * the document is valid JSON (and valid UTF-8) whatever bytes it is given.
 *
 * Every call takes a key: inside an object it names the member, inside an
 * array (or at the top level) it must be NULL.  Errors (out of memory, a
 * key where none belongs, unbalanced containers) are remembered and
 * reported once, by fsj_finish().
 */
#ifndef FSJ_JSON_H
#define FSJ_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FSJ_MAX_DEPTH 16

struct fsj {
	char *buf;
	size_t len;
	size_t cap;
	bool failed;
	int depth;
	/* Per open container: is it an object, has it a member yet. */
	bool is_object[FSJ_MAX_DEPTH];
	bool has_items[FSJ_MAX_DEPTH];
	bool done;		/* a top-level value was written */
};

void fsj_init(struct fsj *j);
void fsj_free(struct fsj *j);

void fsj_object_begin(struct fsj *j, const char *key);
void fsj_object_end(struct fsj *j);
void fsj_array_begin(struct fsj *j, const char *key);
void fsj_array_end(struct fsj *j);

void fsj_string(struct fsj *j, const char *key, const char *s);
void fsj_string_len(struct fsj *j, const char *key, const char *s, size_t n);
void fsj_u64(struct fsj *j, const char *key, uint64_t v);
void fsj_i64(struct fsj *j, const char *key, int64_t v);
void fsj_double(struct fsj *j, const char *key, double v);
void fsj_bool(struct fsj *j, const char *key, bool v);
void fsj_null(struct fsj *j, const char *key);

/*
 * The finished document, ending in a newline; NULL if anything went
 * wrong.  The text stays owned by @j (fsj_free).
 */
const char *fsj_finish(struct fsj *j, size_t *len);

#endif /* FSJ_JSON_H */
