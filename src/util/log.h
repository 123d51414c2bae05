/*
 * log.h — the one logger of jobd's long-running processes (server, worker).
 *
 * Every line is one event: an RFC 3339 UTC timestamp with milliseconds, a
 * level, the component that speaks, a message and key=value fields. Two
 * formats, chosen once at start (--log-format):
 *
 *   text  2026-12-03T12:35:01.123Z info worker: lost the lease job=12 attempt=3
 *   json  {"ts":"2026-12-03T12:35:01.123Z","level":"info","component":"worker",
 *          "msg":"lost the lease","job":12,"attempt":3}
 *
 * Messages and values often carry what a client sent (a path, a queue name,
 * an error text), so everything but the keys is escaped: in text, control
 * characters, DEL, C1 controls and invalid UTF-8 become \n \t \r \xHH and a
 * value with a space, quote, '=' or backslash is double-quoted; in json,
 * the strings are proper JSON strings (invalid UTF-8 becomes U+FFFD). No
 * terminal escape sequence and no forged second line can get through.
 *
 * A line is built in a fixed buffer and written with one write(2) on
 * stderr, so lines from many threads never interleave; a line too long for
 * the buffer is cut and says so (truncated=true). Keys must be constant
 * identifiers from the code (they are not escaped).
 *
 * The configuration is process-wide (like syslog's): set it once at start,
 * before threads, with log_configure; reading it is lock-free. This module
 * depends on libc only, so any layer may log.
 */
#ifndef JOBD_UTIL_LOG_H
#define JOBD_UTIL_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum log_level { LOGL_DEBUG, LOGL_INFO, LOGL_WARN, LOGL_ERROR };
enum log_format { LOG_TEXT, LOG_JSON };
/* Which HTTP requests get an access line (docs/LOGGING.md, Access log):
 * none, the notable ones (errors, slow ones, those that change something),
 * or every one. */
enum log_access { LOG_ACCESS_OFF, LOG_ACCESS_NOTABLE, LOG_ACCESS_ALL };

/* The longest line written, newline included; longer ones are cut. */
#define LOG_LINE_MAX 8192

/* Sets format, the lowest level written, and which access lines are
 * written. Defaults: text, info, notable. Call before starting threads. */
void log_configure(enum log_format fmt, enum log_level min, enum log_access access);

/* Parses "debug"|"info"|"warn"|"error" / "text"|"json" /
 * "notable"|"all"|"off" ("on", the older spelling, is "all"); false if unknown. */
bool log_parse_level(const char *s, enum log_level *out);
bool log_parse_format(const char *s, enum log_format *out);
bool log_parse_access(const char *s, enum log_access *out);

/* Whether a line at lvl would be written (to skip building costly fields). */
bool log_enabled(enum log_level lvl);
/* Which requests the HTTP access log writes. */
enum log_access log_access_mode(void);

enum log_field_kind { LOG_FIELD_STR, LOG_FIELD_INT, LOG_FIELD_DBL, LOG_FIELD_TRACE };

/* One key=value; s is borrowed for the call (NULL is written as empty). */
struct log_field {
    const char *key;
    enum log_field_kind kind;
    const char *s;
    int64_t i;
    double d;
};

#define LF_STR(k, v) ((struct log_field){.key = (k), .kind = LOG_FIELD_STR, .s = (v)})
#define LF_INT(k, v) ((struct log_field){.key = (k), .kind = LOG_FIELD_INT, .i = (int64_t)(v)})
#define LF_DBL(k, v) ((struct log_field){.key = (k), .kind = LOG_FIELD_DBL, .d = (double)(v)})
/*
 * The trace id of a job's W3C traceparent tp (docs/API.md, Trace context;
 * core/traceparent.h) as the field trace_id=<32 hex>: the one way every
 * line about a job names its trace. tp is the job's traceparent as stored
 * (checked at enqueue), borrowed for the call; NULL or "" (a job without
 * one) writes no field at all, nor does anything that is not a
 * traceparent's length.
 */
#define LF_TRACE(tp) ((struct log_field){.key = "trace_id", .kind = LOG_FIELD_TRACE, .s = (tp)})

/*
 * Writes one line if lvl is enabled: comp names the speaker ("server",
 * "worker", "plane", "http"...), msg is the event, f[0..nf) its fields.
 * Thread-safe; never fails visibly (a failed write is dropped).
 */
void log_write(enum log_level lvl, const char *comp, const char *msg, const struct log_field *f,
               size_t nf);

/* The same with a printf-formatted message (cut at LOG_LINE_MAX). */
void log_writef(enum log_level lvl, const char *comp, const struct log_field *f, size_t nf,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * The usual call: log_at(LOGL_INFO, "worker", "job finished",
 *                        LF_INT("job", id), LF_STR("queue", q));
 * Fields may be omitted.
 */
#define log_at(lvl, comp, msg, ...)                                                                \
    do {                                                                                           \
        const struct log_field log_f_[] = {{0}, __VA_ARGS__};                                      \
        log_write((lvl), (comp), (msg), log_f_ + 1, sizeof log_f_ / sizeof log_f_[0] - 1);         \
    } while (0)

/*
 * Formats one line into buf (LOG_LINE_MAX bytes) as log_write would, with
 * the instant now_us (microseconds since the epoch); returns its length,
 * newline included. For tests and for callers that write elsewhere.
 */
size_t log_format_line(char *buf, enum log_format fmt, int64_t now_us, enum log_level lvl,
                       const char *comp, const char *msg, const struct log_field *f, size_t nf);

#endif
