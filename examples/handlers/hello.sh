#!/bin/sh
# An exec handler for jobd (see examples/worker.ini). The payload arrives on
# stdin as one line of JSON; whatever JSON goes to stdout becomes the result.
# JOBD_JOB_ID, JOBD_ATTEMPT, JOBD_TYPE, JOBD_QUEUE, JOBD_IDEMPOTENCY_KEY are set.
payload=$(cat)
name=$(printf '%s' "$payload" | sed -n 's/.*"name":"\([^"]*\)".*/\1/p')
[ -n "$name" ] || name=world
printf '{"greeting":"hello, %s","job":%s,"attempt":%s}\n' "$name" "$JOBD_JOB_ID" "$JOBD_ATTEMPT"
