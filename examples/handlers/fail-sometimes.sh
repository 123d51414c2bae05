#!/bin/sh
# Demo handler: exit 65 (EX_DATAERR, dead at once) for {"fatal":true};
# otherwise fail the first attempt (retryable, the message on stderr becomes
# last_error) and succeed on the next.
payload=$(cat)
case $payload in
*'"fatal":true'*) echo "fatal: this payload can never work" >&2; exit 65 ;;
esac
if [ "$JOBD_ATTEMPT" -lt 2 ]; then
    echo "attempt $JOBD_ATTEMPT failed on purpose; retrying" >&2
    exit 1
fi
printf '{"ok":true,"attempts":%s}\n' "$JOBD_ATTEMPT"
