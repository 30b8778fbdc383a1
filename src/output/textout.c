/* textout.c - the helpers shared by the text views (see textout.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output/textout.h"
#include "util/jsonesc.h"

#define DEFAULT_WIDTH 100

void textout_init(textout *t, FILE *out, const report_style *style)
{
    *t = (textout){ out, { 0, 0, 0 }, DEFAULT_WIDTH, 0 };
    if (style) {
        t->st = *style;
        if (style->width > 0)
            t->width = style->width;
    }
}

prof_err textout_finish(const textout *t)
{
    if (t->nomem)
        return PROF_ERR_NOMEM;
    return ferror(t->out) ? PROF_ERR_IO : PROF_OK;
}

uint64_t textout_u64(double v)
{
    if (!(v > 0))
        return 0;
    return v >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(v);
}

/* ---- safe strings ------------------------------------------------------------- */

char *textout_sanitize(textout *t, const char *s)
{
    size_t n = strlen(s);
    char *r = malloc(4 * n + 1);
    if (!r) {
        t->nomem = 1;
        return NULL;
    }
    size_t o = 0;
    const char *end = s + n;
    while (*s) {
        size_t len = jsonesc_utf8_len((const unsigned char *)s, (size_t)(end - s));
        unsigned char c = (unsigned char)s[0];
        int c1 = len == 2 && c == 0xC2 && (unsigned char)s[1] < 0xA0;
        if (len == 0 || c1 || (len == 1 && (c < 0x20 || c == 0x7F))) {
            size_t k = c1 ? 2 : 1;
            for (size_t i = 0; i < k; i++)
                o += (size_t)sprintf(r + o, "\\x%02x", (unsigned char)s[i]);
            s += k;
            continue;
        }
        memcpy(r + o, s, len);
        o += len;
        s += len;
    }
    r[o] = '\0';
    return r;
}

int textout_cols(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Bytes of the first `want` code points of s. */
static size_t prefix_bytes(const char *s, int want)
{
    size_t i = 0;
    int n = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80 && n++ == want)
            break;
        i++;
    }
    return i;
}

void textout_put_safe(textout *t, const char *s)
{
    char *safe = textout_sanitize(t, s);
    if (safe)
        fputs(safe, t->out);
    free(safe);
}

void textout_put_cell(textout *t, const char *s, int width)
{
    char *safe = textout_sanitize(t, s);
    if (!safe)
        return;
    int c = textout_cols(safe);
    if (c > width) {
        fwrite(safe, 1, prefix_bytes(safe, width - 1), t->out);
        fputs(t->st.unicode ? "\xe2\x80\xa6" : "~", t->out);
        c = width;
    } else {
        fputs(safe, t->out);
    }
    fprintf(t->out, "%*s", width - c, "");
    free(safe);
}

void textout_put_wrapped(textout *t, const char *s, int col, int indent)
{
    char *safe = textout_sanitize(t, s);
    if (!safe)
        return;
    int start = col;
    for (char *w = safe; *w;) {
        size_t len = strcspn(w, " ");
        if (len == 0) {
            w++;
            continue;
        }
        char saved = w[len];
        w[len] = '\0';
        int wc = textout_cols(w);
        if (col > start && col + 1 + wc > t->width) {
            fprintf(t->out, "\n%*s", indent, "");
            col = start = indent;
        } else if (col > start) {
            fputc(' ', t->out);
            col++;
        }
        fputs(w, t->out);
        col += wc;
        w[len] = saved;
        w += len;
    }
    fputc('\n', t->out);
    free(safe);
}

/* ---- styling and shared pieces ------------------------------------------------ */

void textout_sgr(textout *t, const char *code)
{
    if (t->st.color)
        fprintf(t->out, "\033[%sm", code);
}

void textout_heading(textout *t, const char *title)
{
    fputc('\n', t->out);
    textout_sgr(t, "1");
    fputs(title, t->out);
    textout_sgr(t, "0");
}

int textout_name_width(textout *t, const cJSON *items, const char *key, int least, int most)
{
    int width = least;
    const cJSON *item;
    cJSON_ArrayForEach(item, items) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, key));
        char *safe = textout_sanitize(t, name ? name : "");
        if (safe && textout_cols(safe) > width)
            width = textout_cols(safe);
        free(safe);
    }
    return width > most ? most : width;
}

void textout_notes(textout *t, const cJSON *notes)
{
    const cJSON *n;
    if (!cJSON_IsArray(notes) || !notes->child)
        return;
    textout_heading(t, "Notes\n");
    cJSON_ArrayForEach(n, notes) {
        if (!cJSON_IsString(n))
            continue;
        fputs("  - ", t->out);
        textout_put_wrapped(t, n->valuestring, 4, 4);
    }
}
