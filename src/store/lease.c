/*
 * lease.c — the backend-independent half of the lease tokens of
 * store/operator.h: argument checks. The SQL is in pg/lease.c and
 * sqlite/lease.c.
 */
#include <string.h>

#include "core/err.h"
#include "store/operator.h"

static int
lease_ops(struct store *st, const struct store_operator_ops **o, struct jobd_error *err)
{
    *o = st->ops->oper;
    if (*o == NULL || (*o)->lease_set == NULL || (*o)->lease_check == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, NULL, "the %s store keeps no lease tokens",
                              st->ops->name);
    return JOBD_OK;
}

/* A SHA-256 in lowercase hex. */
static bool
is_hash(const char *h)
{
    if (h == NULL || strlen(h) != 64)
        return false;
    return strspn(h, "0123456789abcdef") == 64;
}

int
store_lease_set(struct store *st, const struct lease_token_ref *v, size_t n, struct jobd_error *err)
{
    const struct store_operator_ops *o;
    int rc = lease_ops(st, &o, err);
    if (rc != JOBD_OK || n == 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (!is_hash(v[i].hash))
            return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "a lease token hash is not hex");
    return o->lease_set(st, v, n, err);
}

int
store_lease_check(struct store *st, int64_t id, int32_t attempt, const char *hash, char **queue,
                  struct jobd_error *err)
{
    *queue = NULL;
    const struct store_operator_ops *o;
    int rc = lease_ops(st, &o, err);
    if (rc != JOBD_OK)
        return rc;
    if (!is_hash(hash))
        return jobd_error_set(err, JOBD_E_STALE, "lease_token", "not this attempt's lease token");
    return o->lease_check(st, id, attempt, hash, queue, err);
}

int
store_lease_replayed(struct store *st, int64_t id, int32_t attempt, enum lease_report kind,
                     const char *hash, char **queue, struct jobd_error *err)
{
    *queue = NULL;
    const struct store_operator_ops *o;
    int rc = lease_ops(st, &o, err);
    if (rc != JOBD_OK)
        return rc;
    if (o->lease_replayed == NULL || !is_hash(hash))
        return jobd_error_set(err, JOBD_E_STALE, "lease_token", "not a repeated report");
    return o->lease_replayed(st, id, attempt, kind, hash, queue, err);
}
