/* Placeholder until the pg backend lands (this commit only). */
#include "core/err.h"
#include "store/store_pg.h"
int
store_pg_open(const char *url, struct store **out, struct jobd_error *err)
{
    (void)url;
    *out = NULL;
    return jobd_error_set(err, JOBD_E_STORE, "db", "the pg backend is not built yet");
}
