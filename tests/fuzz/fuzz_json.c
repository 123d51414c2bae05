/*
 * fuzz_json.c — libFuzzer target for jobd's strict JSON rules and its
 * canonical form (core/json.c): every payload and result is stored as
 * canonical text, and idempotent replays compare that text byte for byte,
 * so the canonical form must be a fixed point.
 *
 * Properties asserted (abort() is a libFuzzer crash):
 *   - json_canonical accepts nothing json_parse_strict refuses, and a
 *     refusal carries a message;
 *   - canonical(canonical(x)) == canonical(x), byte for byte;
 *   - the canonical text parses to a value equal to the original (jansson's
 *     json_equal: same integers, bit-identical reals, same strings/keys);
 *   - json_value_canonical of the parsed tree gives the same text;
 *   - json_print of the parsed tree (the printer of every answer) gives
 *     text that parses to an equal value, and sorted, the canonical text
 *     but for the case of \u escapes;
 *   - json_result_canonical agrees with json_result_ok.
 *
 * Input: the JSON text itself (any bytes).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "fuzz_main.h"

#define MAX_BYTES (256 * 1024) /* the payload limit, JOB_PAYLOAD_MAX */

static void
fail(const char *what, const char *a, const char *b)
{
    fprintf(stderr, "fuzz_json: %s\n  first:  %.300s\n  second: %.300s\n", what, a ? a : "(null)",
            b ? b : "(null)");
    abort();
}

/* json_print(v) holds v's value; sorted, it is canonical (c) once its
 * \u escapes are lower-cased (json_dumps writes them in upper case). */
static void
check_print(const json_t *v, const char *c)
{
    char *p = json_print(v, 0), *s = json_print(v, JSON_SORT_KEYS);
    if (p == NULL || s == NULL)
        fail("json_print failed", c, "");
    json_t *back = json_loads(p, JSON_DECODE_ANY, NULL);
    if (back == NULL || !json_equal(back, v))
        fail("json_print holds another value", c, p);
    json_decref(back);
    for (char *q = s; *q != '\0'; q++) {
        if (*q != '\\')
            continue;
        if (q[1] == 'u')
            for (int i = 2; i < 6 && q[i] != '\0'; i++)
                if (q[i] >= 'A' && q[i] <= 'F')
                    q[i] = (char)(q[i] - 'A' + 'a');
        q++; /* skip the escaped character: an escaped backslash before u is no \u */
    }
    if (strcmp(s, c) != 0)
        fail("json_print sorted is not the canonical text", c, s);
    free(p);
    free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct jobd_error err = {0};
    char *c1 = NULL, *c2 = NULL, *c3 = NULL;
    json_t *v = NULL, *w = NULL;
    int rc = json_canonical(text, size, MAX_BYTES, &c1, "payload", &err);
    int rp = json_parse_strict(text, size, MAX_BYTES, &v, "payload", &err);
    /* The printer may refuse more (NUL in a string, canonical text over the
     * limit), never less. */
    if (rc == 0 && rp != 0)
        fail("json_canonical accepts what json_parse_strict refuses", c1, err.msg);
    if (rc != 0) {
        if (c1 != NULL || err.msg[0] == '\0' || (rc != JOBD_E_INVALID && rc != JOBD_E_TOOBIG))
            fail("a refusal without a message", err.msg, "");
        goto out;
    }
    if (json_canonical(c1, strlen(c1), MAX_BYTES, &c2, "payload", &err) != 0)
        fail("canonical text is refused", c1, err.msg);
    if (strcmp(c1, c2) != 0)
        fail("canonical form is not a fixed point", c1, c2);
    if (json_parse_strict(c1, strlen(c1), MAX_BYTES, &w, "payload", &err) != 0)
        fail("canonical text does not parse", c1, err.msg);
    if (!json_equal(v, w))
        fail("canonical text holds another value", text, c1);
    if (json_value_canonical(v, MAX_BYTES, &c3, "payload", &err) != 0 || strcmp(c1, c3) != 0)
        fail("json_value_canonical differs from json_canonical", c1, c3);
    check_print(v, c1);
out:
    if (size <= 65536) {
        char *r = NULL;
        int rr = json_result_canonical(text, size, &r, &err);
        if ((rr == 0) != json_result_ok(text, size))
            fail("json_result_canonical and json_result_ok disagree", r, err.msg);
        free(r);
    }
    free(c1);
    free(c2);
    free(c3);
    json_decref(v);
    json_decref(w);
    return 0;
}
