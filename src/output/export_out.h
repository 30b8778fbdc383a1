/* export_out.h - what the export formats share: a buffered writer with the
 * number and string encoders they need, and the small table of functions
 * (begin, event, end) each format provides to export.c.
 *
 * The writer formats straight into its own buffer and hands full buffers to
 * stdio, because an export of millions of events is bound by formatting:
 * printf per field would cost more than decoding the profile. Write errors
 * are sticky: after the first one, writes are dropped and eo_failed() says
 * so, so that formats can write without checking every call and the driver
 * checks once per event. */
#ifndef PROF_OUTPUT_EXPORT_OUT_H
#define PROF_OUTPUT_EXPORT_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "prof_reader.h"

#define EO_BUFSIZE (1u << 16)

typedef struct export_out {
    FILE *fp;
    size_t len;
    int failed; /* errno of the first failed write, or -1 when it set none */
    char buf[EO_BUFSIZE];
} export_out;

void eo_init(export_out *o, FILE *fp);
/* A name as a frame of the folded formats: ';' (which would split the
 * frame) and control characters replaced, made valid UTF-8, "[unnamed]"
 * for the empty name. Malloc'd; NULL when out of memory. */
char *eo_frame_text(const char *name);
/* Hands the buffer to stdio and flushes it; 0 or -1. */
int eo_flush(export_out *o);
/* Hands the buffer to stdio (without flushing stdio) to make room. */
void eo_drain(export_out *o);

static inline int eo_failed(const export_out *o)
{
    return o->failed != 0;
}

/* Room for at least n more bytes (n <= EO_BUFSIZE). */
static inline char *eo_room(export_out *o, size_t n)
{
    if (EO_BUFSIZE - o->len < n)
        eo_drain(o);
    return o->buf + o->len;
}

static inline void eo_put(export_out *o, const char *s, size_t n)
{
    if (n > EO_BUFSIZE / 2) {
        eo_drain(o);
        if (!o->failed && fwrite(s, 1, n, o->fp) != n)
            o->failed = -1;
        return;
    }
    memcpy(eo_room(o, n), s, n);
    o->len += n;
}

static inline void eo_char(export_out *o, char c)
{
    *eo_room(o, 1) = c;
    o->len++;
}

/* A string literal. */
#define eo_lit(o, s) eo_put((o), "" s, sizeof(s) - 1) /* "" s: literals only */

static inline void eo_str(export_out *o, const char *s)
{
    eo_put(o, s, strlen(s));
}

void eo_u64(export_out *o, uint64_t v);
/* Nanoseconds as microseconds with three decimals: 1234567 -> "1234.567". */
void eo_us(export_out *o, uint64_t ns);
/* The shortest decimal that reads back as the same double; non-finite
 * values as `nonfinite` (e.g. "null" in JSON, "" in CSV). */
void eo_double(export_out *o, double v, const char *nonfinite);
/* A JSON string with its quotes, escaped as jsonesc.h says. */
void eo_json(export_out *o, const char *s);

/* The profile's metadata as a JSON object text fit to embed: strings made
 * valid UTF-8 and escaped (jsonesc_clean_json), "{}" when the text is not a
 * JSON object after all (a crafted NUL inside). Free it; NULL when out of
 * memory. */
char *eo_metadata(prof_reader *r);

/* The export formats. state is the format's own, allocated by begin and
 * freed by finish, which is called in every case. */
typedef struct export_ctx {
    export_out *out;
    prof_reader *reader;
    unsigned options;     /* EXPORT_OPT_* of export.h */
    void *state;
    prof_error *err;
} export_ctx;

typedef struct export_ops {
    const char *name;
    /* Writes what precedes the events; PROF_OK or an error in *x->err. */
    prof_err (*begin)(export_ctx *x);
    /* One event (thread definitions included); PROF_OK or an error. */
    prof_err (*event)(export_ctx *x, const prof_event *ev);
    /* What follows the events, given the reader's final status. */
    prof_err (*end)(export_ctx *x, const prof_read_status *st);
    /* Frees the state; called after begin in every case. */
    void (*finish)(export_ctx *x);
} export_ops;

extern const export_ops export_chrome_ops, export_csv_ops, export_json_ops, export_folded_ops;

#endif
