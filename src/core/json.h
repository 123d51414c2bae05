/*
 * json.h — the JSON rules jobd applies to payloads and results, on jansson.
 *
 * Payloads are stored as canonical text (compact, keys sorted, UTF-8), so an
 * idempotent replay compares byte for byte on both backends. Pure (no I/O);
 * thread-safe.
 *
 * The strict rules, for every JSON text jobd accepts: any value at the top
 * level; duplicate object keys refused; nesting at most JSON_DEPTH_MAX
 * (checked by a flat scan BEFORE the recursive parser runs, so a 100,000-deep
 * text is refused cleanly); a byte limit; valid UTF-8 only; no "\u0000" in
 * strings (PostgreSQL's jsonb refuses it too); integers must fit int64.
 *
 * The canonical form: no whitespace, object keys sorted by bytes, strings as
 * UTF-8 with only '"', '\\' and control characters escaped, integers in
 * decimal, reals with the fewest digits that read back to the same double,
 * laid out as JavaScript prints numbers and always with a '.' or an exponent
 * ("1.0", "0.1", "100.0" for 1e2, "0.0000015", "1e21", "1e-7"). Use only these
 * functions to make canonical text (json_dumps prints reals differently),
 * and json_print, not json_dumps, for any other JSON text jobd writes.
 */
#ifndef JOBD_CORE_JSON_H
#define JOBD_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "jobd.h"

/* Maximum nesting depth accepted in any JSON jobd parses (arrays+objects). */
#define JSON_DEPTH_MAX 64

/*
 * Parses text (of length len) as any JSON value, enforcing max_bytes and
 * JSON_DEPTH_MAX, and returns its canonical form in *out (malloc'd, NUL-
 * terminated, caller frees). JOBD_E_INVALID (err names field, says
 * line/column), JOBD_E_TOOBIG (input or canonical form over max_bytes) or
 * JOBD_E_NOMEM; *out is NULL on error. field may be NULL ("json").
 */
JOBD_MUST_USE int json_canonical(const char *text, size_t len, size_t max_bytes, char **out,
                                 const char *field, struct jobd_error *err);

/*
 * The path of the value at byte offset pos of text (a JSON text, possibly
 * invalid past pos) into buf: member names joined by '.', array indexes in
 * brackets ("jobs[2].payload.amount"); "" for the top level. Names are
 * copied as written (escapes not decoded) and the path is cut at buflen.
 * For error messages that say where a problem is.
 */
void json_path_at(const char *text, size_t len, size_t pos, char *buf, size_t buflen);

/*
 * Parses text with the strict rules above and returns a new jansson
 * reference in *out (caller json_decref's), for code that needs the parsed
 * tree (the API reading a request body). Errors as json_canonical.
 */
JOBD_MUST_USE int json_parse_strict(const char *text, size_t len, size_t max_bytes, json_t **out,
                                    const char *field, struct jobd_error *err);

/*
 * The canonical text of an already parsed value (borrowed) into *out
 * (malloc'd, caller frees). JOBD_E_TOOBIG over max_bytes, JOBD_E_INVALID if
 * v nests deeper than JSON_DEPTH_MAX or holds a non-finite real,
 * JOBD_E_NOMEM.
 */
JOBD_MUST_USE int json_value_canonical(const json_t *v, size_t max_bytes, char **out,
                                       const char *field, struct jobd_error *err);

/*
 * Whether a handler's output (text of length len, e.g. an exec handler's
 * stdout) is a JSON value of at most JOB_RESULT_MAX (64 KiB) bytes under the
 * strict rules, and so may become the job's result. Surrounding whitespace
 * (a trailing newline) is allowed. Never fails otherwise.
 */
bool json_result_ok(const char *text, size_t len);

/*
 * Like json_result_ok, and returns the canonical form in *out (malloc'd,
 * caller frees) when it is. Returns 0 with *out set, or an error as
 * json_canonical (field "result") with *out NULL.
 */
JOBD_MUST_USE int json_result_canonical(const char *text, size_t len, char **out,
                                        struct jobd_error *err);

/* How deeply json_print lets arrays and objects nest (what jansson parses). */
#define JSON_PRINT_DEPTH_MAX 2048

/*
 * json_dumps as jobd prints every JSON text it writes (HTTP answers, the
 * CLI, request bodies, a worker's outputs), with reals in their shortest
 * round-trip form: each real is laid out as in the canonical form above
 * (0.1, 1e300, 5e-324, -0.0, 1.0; never json_dumps' 0.10000000000000001),
 * so it reads back as the same double and stays a real; integers print
 * exactly. Always compact, any value at the top (JSON_COMPACT |
 * JSON_ENCODE_ANY); strings escaped as json_dumps does by default (only '"',
 * '\\' and control characters, "\u001F", UTF-8 kept). Object members keep
 * their order in v (insertion order, what JSON_PRESERVE_ORDER means since
 * jansson 2.8) unless flags has JSON_SORT_KEYS, which sorts them by bytes;
 * other jansson flags are ignored. v is borrowed.
 *
 * Returns a new malloc'd NUL-terminated string (caller frees), or NULL when
 * v is NULL, out of memory, or v nests deeper than JSON_PRINT_DEPTH_MAX:
 * like json_dumps, a NULL must be treated as "could not print".
 */
char *json_print(const json_t *v, size_t flags);

/*
 * Appending to one JSON text without building jansson values first: a
 * writer for the answers printed most often (the job object of POST
 * /v1/jobs, api/jobjson.c), where a tree of a few dozen values made and
 * freed per answer cost more than the rest of the request's JSON work.
 * Every piece comes out byte for byte as json_print lays it out. Start
 * from {0}; the text (NUL-terminated once anything was written) is out->p,
 * malloc'd, the caller's to free. Out of memory (or a value json_print
 * refuses) is remembered in rc (JOBD_OK until then) and later calls do
 * nothing; the caller then frees p and fails.
 */
struct json_out {
    char *p;
    size_t n, cap;
    int rc;
};
/* n bytes as they are (JSON the caller laid out: punctuation, member names). */
void json_out_raw(struct json_out *o, const char *s, size_t n);
/* s as a JSON string, escaped as json_print does; NULL writes null. */
void json_out_str(struct json_out *o, const char *s);
/* An integer, as json_print writes a JSON integer. */
void json_out_int(struct json_out *o, int64_t v);
/* json_print(v) (v borrowed); NULL counts as out of memory. */
void json_out_value(struct json_out *o, const json_t *v);

/*
 * Parses JSON text a store kept (a payload, a result) for printing, into
 * *out, a new reference the caller json_decref's. Text jobd wrote is
 * canonical and parses as is; a job made by PostgreSQL's jobd.enqueue went
 * through jsonb, which writes a real's exact decimal (1e300 as its 301
 * digits): an integer too big for 64 bits is read as the real it stands
 * for, so it prints as 1e300 instead of failing. JOBD_OK, JOBD_E_INVALID
 * (the text does not parse) or JOBD_E_NOMEM; *out is NULL on error.
 */
JOBD_MUST_USE int json_load_stored(const char *text, json_t **out);

#endif
