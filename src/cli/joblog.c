/*
 * joblog.c — `jobd job log ID [ATTEMPT]` (docs/CLI.md): an attempt's log
 * (docs/API.md, GET /v1/jobs/{id}/attempts/{attempt}/log) printed as the
 * server keeps it, byte for byte, so it pipes to grep or a pager. Without
 * ATTEMPT, the job's latest attempt (one more request, for the job).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/http.h"

/* The job's latest attempt, or 0 with *rc set (a message printed). */
static long
latest_attempt(const char *server, long id, int *rc)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%ld", id);
    struct cli_http_resp r;
    if ((*rc = cli_http("job log", server, "GET", path, NULL, &r)) != CLI_OK)
        return 0;
    if (r.status != 200) {
        *rc = cli_http_fail("job log", &r);
        free(r.body);
        return 0;
    }
    json_t *o = json_loadb(r.body, r.len, 0, NULL);
    free(r.body);
    long n = (long)json_integer_value(json_object_get(o, "attempt"));
    json_decref(o);
    if (n <= 0) {
        fprintf(stderr, "jobd job log: job %ld has not run yet: it has no attempt\n", id);
        *rc = CLI_FAILED;
    }
    return n;
}

int
cli_job_log(const char *server, long id, long attempt)
{
    int rc = CLI_OK;
    if (attempt == 0 && (attempt = latest_attempt(server, id, &rc)) == 0)
        return rc;
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%ld/attempts/%ld/log", id, attempt);
    struct cli_http_resp r;
    if ((rc = cli_http("job log", server, "GET", path, NULL, &r)) != CLI_OK)
        return rc;
    if (r.status != 200)
        rc = cli_http_fail("job log", &r);
    else if (r.len > 0 && fwrite(r.body, 1, r.len, stdout) != r.len)
        rc = CLI_FAILED;
    free(r.body);
    return rc;
}
