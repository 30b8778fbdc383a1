/* jscan.c - the strict JSON subset reader of jscan.h: recursive descent
 * over bytes held in memory with the scans of jscan.h (strings eight
 * bytes at a time). Everything it is not sure YAJL reads the same way is
 * declined. */
#include "import/jscan.h"

#include <stdint.h>
#include <string.h>

typedef struct js {
    const unsigned char *b;
    size_t i, n;
    const yajl_callbacks *cb;
    jscan_ignored ignored;
    void *ctx;
    int limit;
} js;

static inline void skip_blanks(js *s)
{
    s->i = jscan_blanks(s->b, s->i, s->n);
}

/* The string whose quote is at s->i: [*from, *to) is its raw text and
 * s->i moves past the closing quote. */
static jscan_result string(js *s, size_t *from, size_t *to, int *escaped)
{
    size_t close;
    jscan_result r = jscan_scan_string(s->b, s->n, s->i, &close, escaped);
    if (r != JSCAN_DONE)
        return r;
    *from = s->i + 1;
    *to = close;
    s->i = close + 1;
    return JSCAN_DONE;
}

/* A number at s->i; s->i moves to the byte that ends it. */
static jscan_result number(js *s)
{
    return jscan_scan_number(s->b, s->n, s->i, &s->i);
}

/* true, false or null at s->i: *which is 't', 'f' or 'n'. */
static jscan_result literal(js *s, char *which)
{
    static const char *const words[] = { "true", "false", "null" };
    unsigned char c = s->b[s->i];
    const char *w = words[c == 't' ? 0 : c == 'f' ? 1 : 2];
    size_t l = strlen(w), have = s->n - s->i;
    if (have <= l)
        return memcmp(s->b + s->i, w, have < l ? have : l) == 0 ? JSCAN_MORE : JSCAN_DECLINE;
    if (memcmp(s->b + s->i, w, l) != 0 || !jscan_ends_value(s->b[s->i + l]))
        return JSCAN_DECLINE;
    s->i += l;
    *which = (char)c;
    return JSCAN_DONE;
}

static jscan_result value(js *s, int depth);

/* After a key: blanks, the colon, blanks; s->i on the value. */
static jscan_result colon(js *s)
{
    skip_blanks(s);
    if (s->i >= s->n)
        return JSCAN_MORE;
    if (s->b[s->i] != ':')
        return JSCAN_DECLINE;
    s->i++;
    skip_blanks(s);
    return s->i < s->n ? JSCAN_DONE : JSCAN_MORE;
}

/* A value nobody wants: checked, not handed over. */
static jscan_result skip(js *s, int depth)
{
    size_t from, to;
    int escaped;
    char which;
    unsigned char c = s->b[s->i];
    if (c == '"')
        return string(s, &from, &to, &escaped);
    if (c == '-' || (c >= '0' && c <= '9'))
        return number(s);
    if (c == 't' || c == 'f' || c == 'n')
        return literal(s, &which);
    if (c != '{' && c != '[')
        return JSCAN_DECLINE;
    if (depth >= s->limit)
        return JSCAN_DECLINE;
    unsigned char close = c == '{' ? '}' : ']';
    s->i++;
    skip_blanks(s);
    if (s->i >= s->n)
        return JSCAN_MORE;
    if (s->b[s->i] == close) {
        s->i++;
        return JSCAN_DONE;
    }
    for (;;) {
        jscan_result r;
        if (close == '}') {
            if (s->b[s->i] != '"')
                return JSCAN_DECLINE;
            if ((r = string(s, &from, &to, &escaped)) != JSCAN_DONE ||
                (r = colon(s)) != JSCAN_DONE)
                return r;
        }
        if ((r = skip(s, depth + 1)) != JSCAN_DONE)
            return r;
        skip_blanks(s);
        if (s->i >= s->n)
            return JSCAN_MORE;
        c = s->b[s->i++];
        if (c == close)
            return JSCAN_DONE;
        if (c != ',')
            return JSCAN_DECLINE;
        skip_blanks(s);
        if (s->i >= s->n)
            return JSCAN_MORE;
    }
}

/* The value at s->i, wanted or not. */
static jscan_result element(js *s, int depth)
{
    return s->ignored(s->ctx) ? skip(s, depth) : value(s, depth);
}

/* After a member or an element: the separator, or the container's end
 * (1 when it ended; then its callback is made). */
static jscan_result after_item(js *s, unsigned char close, int *ended)
{
    skip_blanks(s);
    if (s->i >= s->n)
        return JSCAN_MORE;
    unsigned char c = s->b[s->i++];
    if (c == close) {
        *ended = 1;
        int ok = close == '}' ? s->cb->yajl_end_map(s->ctx) : s->cb->yajl_end_array(s->ctx);
        return ok ? JSCAN_DONE : JSCAN_STOP;
    }
    if (c != ',')
        return JSCAN_DECLINE;
    *ended = 0;
    skip_blanks(s);
    return s->i < s->n ? JSCAN_DONE : JSCAN_MORE;
}

/* Past the opening of a container at s->i, with its callback made: *empty
 * says it closed at once (its closing callback made too). */
static jscan_result open_container(js *s, int depth, unsigned char close, int *empty)
{
    if (depth >= s->limit)
        return JSCAN_DECLINE;
    if (!(close == '}' ? s->cb->yajl_start_map(s->ctx) : s->cb->yajl_start_array(s->ctx)))
        return JSCAN_STOP;
    s->i++;
    skip_blanks(s);
    if (s->i >= s->n)
        return JSCAN_MORE;
    *empty = s->b[s->i] == close;
    if (!*empty)
        return JSCAN_DONE;
    s->i++;
    int ok = close == '}' ? s->cb->yajl_end_map(s->ctx) : s->cb->yajl_end_array(s->ctx);
    return ok ? JSCAN_DONE : JSCAN_STOP;
}

/* The key of a member and its colon; s->i on the value. */
static jscan_result key(js *s)
{
    size_t from, to;
    int escaped;
    jscan_result r;
    if (s->b[s->i] != '"')
        return JSCAN_DECLINE;
    if ((r = string(s, &from, &to, &escaped)) != JSCAN_DONE)
        return r;
    if (escaped)
        return JSCAN_DECLINE;
    if (!s->cb->yajl_map_key(s->ctx, s->b + from, to - from))
        return JSCAN_STOP;
    return colon(s);
}

/* An object or an array, with callbacks. */
static jscan_result container(js *s, int depth, unsigned char close)
{
    int ended = 0;
    jscan_result r = open_container(s, depth, close, &ended);
    while (r == JSCAN_DONE && !ended) {
        if (close == '}' && (r = key(s)) != JSCAN_DONE)
            break;
        if ((r = element(s, depth + 1)) != JSCAN_DONE)
            break;
        r = after_item(s, close, &ended);
    }
    return r;
}

static jscan_result value(js *s, int depth)
{
    size_t from, to, at = s->i;
    int escaped, ok;
    char which;
    jscan_result r;
    unsigned char c = s->b[s->i];
    switch (c) {
    case '{': return container(s, depth, '}');
    case '[': return container(s, depth, ']');
    case '"':
        if ((r = string(s, &from, &to, &escaped)) != JSCAN_DONE)
            return r;
        if (escaped)
            return JSCAN_DECLINE;
        ok = s->cb->yajl_string(s->ctx, s->b + from, to - from);
        break;
    case 't':
    case 'f':
    case 'n':
        if ((r = literal(s, &which)) != JSCAN_DONE)
            return r;
        ok = which == 'n' ? s->cb->yajl_null(s->ctx) : s->cb->yajl_boolean(s->ctx, which == 't');
        break;
    default:
        if (c != '-' && (c < '0' || c > '9'))
            return JSCAN_DECLINE;
        if ((r = number(s)) != JSCAN_DONE)
            return r;
        ok = s->cb->yajl_number(s->ctx, (const char *)s->b + at, s->i - at);
        break;
    }
    return ok ? JSCAN_DONE : JSCAN_STOP;
}

jscan_result jscan_skip_value(const unsigned char *buf, size_t len, size_t *pos, int depth,
                              int limit)
{
    js s = { .b = buf, .i = *pos, .n = len, .limit = limit };
    if (s.i >= s.n)
        return JSCAN_MORE;
    jscan_result r = skip(&s, depth);
    if (r == JSCAN_DONE)
        *pos = s.i;
    return r;
}

jscan_result jscan_value(const unsigned char *buf, size_t len, size_t *pos,
                         const yajl_callbacks *cb, jscan_ignored ignored, void *ctx, int limit)
{
    js s = { .b = buf, .i = *pos, .n = len, .cb = cb, .ignored = ignored, .ctx = ctx,
             .limit = limit };
    if (s.i >= s.n)
        return JSCAN_MORE;
    jscan_result r = value(&s, 0);
    if (r == JSCAN_DONE)
        *pos = s.i;
    return r;
}
