/*
 * icu.h — the few ICU functions cron time zones need, loaded on first use.
 *
 * Linking ICU costs every jobd process ~2.7 MB of resident memory at start
 * (its relocations touch that many pages) although only a schedule with a
 * time zone other than UTC ever calls it: a worker never does. So ICU is
 * dlopen'ed the first time a zone is checked or opened. The members keep
 * ICU's own names (its headers rename them to the versioned symbols, e.g.
 * ucal_open_72, which is what is looked up), so calls read icu->ucal_open().
 */
#ifndef JOBD_UTIL_ICU_H
#define JOBD_UTIL_ICU_H

#include <unicode/ucal.h>
#include <unicode/ustring.h>
#include <unicode/utypes.h>

struct icu_api {
    __typeof__(&u_charsToUChars) u_charsToUChars;
    __typeof__(&u_errorName) u_errorName;
    __typeof__(&ucal_getCanonicalTimeZoneID) ucal_getCanonicalTimeZoneID;
    __typeof__(&ucal_open) ucal_open;
    __typeof__(&ucal_close) ucal_close;
    __typeof__(&ucal_setMillis) ucal_setMillis;
    __typeof__(&ucal_get) ucal_get;
    __typeof__(&ucal_getTimeZoneTransitionDate) ucal_getTimeZoneTransitionDate;
};

/*
 * The loaded functions (static, valid for the life of the process), or NULL
 * if ICU cannot be loaded, with *why (if why is not NULL) pointing at a
 * static sentence saying why. Thread-safe; loads once. util/ sits below
 * core/, so this says nothing of jobd's error type: the caller (core/cron.c)
 * turns the reason into one.
 */
const struct icu_api *icu_get(const char **why);

#endif
