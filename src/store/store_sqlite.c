/* Placeholder until the sqlite backend lands (this commit only). */
#include "core/err.h"
#include "store/store_sqlite.h"
int
store_sqlite_open(const char *url, struct store **out, struct jobd_error *err)
{
    (void)url;
    *out = NULL;
    return jobd_error_set(err, JOBD_E_STORE, "db", "the sqlite backend is not built yet");
}
