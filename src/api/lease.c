/*
 * lease.c — see lease.h.
 */
#include "api/lease.h"

#include <stdlib.h>

#include "core/err.h"
#include "store/operator.h"
#include "util/sha256.h"

int
api_lease_tokens(struct store *st, const struct job_list *l, lease_token **out,
                 struct jobd_error *err)
{
    *out = NULL;
    if (l->n == 0)
        return JOBD_OK;
    lease_token *t = calloc(l->n, sizeof *t);
    struct lease_token_ref *refs = calloc(l->n, sizeof *refs);
    int rc = JOBD_OK;
    if (t == NULL || refs == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; rc == JOBD_OK && i < l->n; i++) {
        uint8_t raw[LEASE_TOKEN_LEN / 2];
        if (!random_bytes(raw, sizeof raw)) {
            rc = jobd_error_set(err, JOBD_E_INTERNAL, NULL, "no random bytes for a lease token");
            break;
        }
        hex_encode(raw, sizeof raw, t[i]);
        refs[i].id = l->v[i].id;
        refs[i].attempt = l->v[i].attempt;
        sha256_hex(t[i], refs[i].hash);
    }
    if (rc == JOBD_OK)
        rc = store_lease_set(st, refs, l->n, err);
    free(refs);
    if (rc != JOBD_OK) {
        struct jobd_error e2 = {0};
        for (size_t i = 0; i < l->n; i++) /* best effort: else the leases run out */
            if (store_error_is_outage(store_release(st, l->v[i].id, l->v[i].attempt, &e2)))
                break;
        free(t);
        return rc;
    }
    *out = t;
    return JOBD_OK;
}
