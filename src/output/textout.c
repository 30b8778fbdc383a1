/* textout.c - the helpers shared by the text views (see textout.h). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output/textout.h"
#include "util/jsonesc.h"

#define DEFAULT_WIDTH 100

void textout_init(textout *t, FILE *out, const report_style *style)
{
    *t = (textout){ out, { 0, 0, 0, 0 }, DEFAULT_WIDTH, 0 };
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

/* ---- names that do not fit ---------------------------------------------------- */

/* Where the argument list of a C++ name starts: the '(' of a trailing
 * "(...)" outside every template, or NULL. */
static char *args_start(char *s)
{
    size_t n = strlen(s);
    if (!n || s[n - 1] != ')')
        return NULL;
    int depth = 0;
    for (size_t i = n; i-- > 0;) {
        if (s[i] == ')' || s[i] == '>')
            depth++;
        else if (s[i] == '(' || s[i] == '<')
            depth--;
        if (depth == 0)
            return s[i] == '(' && i > 0 ? s + i : NULL;
    }
    return NULL;
}

/* The deepest nesting of <...> in s. */
static int template_depth(const char *s)
{
    int depth = 0, most = 0;
    for (; *s; s++) {
        if (*s == '<' && ++depth > most)
            most = depth;
        else if (*s == '>' && depth > 0)
            depth--;
    }
    return most;
}

/* Replaces what every template at nesting `level` holds with `ell`
 * (shorter than what it replaces or left alone), in place. */
static void templates_fold(char *s, int level, const char *ell)
{
    size_t el = strlen(ell);
    int depth = 0;
    char *w = s;
    for (char *r = s; *r;) {
        if (*r == '<' && ++depth == level) {
            char *close = r + 1;
            int d = 1;
            while (*close && d) {
                d += *close == '<';
                d -= *close == '>';
                if (d)
                    close++;
            }
            if (*close && (size_t)(close - r - 1) > el) {
                *w++ = '<';
                memcpy(w, ell, el);
                w += el;
                *w++ = '>';
                r = close + 1;
                depth--;
                continue;
            }
        } else if (*r == '>' && depth > 0) {
            depth--;
        }
        *w++ = *r++;
    }
    *w = '\0';
}

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* Removes every occurrence of `what`, in place, in one pass. */
static void remove_all(char *s, const char *what)
{
    size_t n = strlen(what);
    char *w = s;
    for (const char *r = s; *r;) {
        if (strncmp(r, what, n) == 0)
            r += n;
        else
            *w++ = *r++;
    }
    *w = '\0';
}

/* Drops the qualifiers ("at::native::") of the names inside templates
 * (inside) or outside them, in place: the last component names the type
 * or function well enough. */
static void qualifiers_drop(char *s, int inside)
{
    int depth = 0;
    char *w = s;
    for (char *r = s; *r;) {
        if (ident_char(*r) && (r == s || !ident_char(r[-1]))) {
            char *e = r;
            while (ident_char(*e))
                e++;
            if (e[0] == ':' && e[1] == ':' && ident_char(e[2]) && (depth > 0) == inside) {
                r = e + 2;
                continue;
            }
            while (r < e)
                *w++ = *r++;
            continue;
        }
        depth += *r == '<';
        depth -= *r == '>' && depth > 0;
        *w++ = *r++;
    }
    *w = '\0';
}

#define FOLD_LEVELS 8 /* deeper templates are folded whole at this level */

/* Columns s takes once sanitized, or -1 when memory ran out. */
static int shown_cols(textout *t, const char *s)
{
    char *safe = textout_sanitize(t, s);
    int c = safe ? textout_cols(safe) : -1;
    free(safe);
    return c;
}

/* The steps of textout_shorten before any cut: s sanitized, with what a
 * name can lose dropped while it does not fit `width` columns. */
static char *shorten_folded(textout *t, const char *s, int width)
{
    size_t len = strlen(s);
    char *r = malloc(len + 1);
    if (!r) {
        t->nomem = 1;
        return NULL;
    }
    memcpy(r, s, len + 1);
    const char *ell = t->st.unicode ? "\xe2\x80\xa6" : "~";
    if (shown_cols(t, r) > width) {
        if (strncmp(r, "void ", 5) == 0)
            memmove(r, r + 5, strlen(r + 5) + 1);
        char *args = args_start(r);
        if (args)
            *args = '\0';
    }
    if (shown_cols(t, r) > width) {
        remove_all(r, "(anonymous namespace)::");
        qualifiers_drop(r, 1);
    }
    if (shown_cols(t, r) > width)
        qualifiers_drop(r, 0);
    int depth = template_depth(r);
    for (int level = depth < FOLD_LEVELS ? depth : FOLD_LEVELS;
         level > 1 && shown_cols(t, r) > width; level--)
        templates_fold(r, level, ell);
    char *safe = textout_sanitize(t, r);
    free(r);
    return safe;
}

/* A new string of the pieces (s, bytes) in order, or NULL. */
static char *joined(textout *t, const char *const *s, const size_t *bytes, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += bytes[i];
    char *r = malloc(len + 1), *w = r;
    if (!r) {
        t->nomem = 1;
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        memcpy(w, s[i], bytes[i]);
        w += bytes[i];
    }
    *w = '\0';
    return r;
}

/* safe (sanitized) in `width` columns: whole when it fits, else its head
 * and its tail around an ellipsis. A new string, or NULL. */
static char *cut_head_tail(textout *t, const char *safe, int width)
{
    const char *ell = t->st.unicode ? "\xe2\x80\xa6" : "~";
    int c = textout_cols(safe);
    if (c <= width || width < 3) {
        size_t len = strlen(safe);
        return joined(t, &safe, &len, 1);
    }
    int head = (width - 1) / 2, tail = width - 1 - head;
    size_t tb = prefix_bytes(safe, c - tail);
    const char *piece[] = { safe, ell, safe + tb };
    size_t bytes[] = { prefix_bytes(safe, head), strlen(ell), strlen(safe + tb) };
    return joined(t, piece, bytes, 3);
}

/* A name made to fit `width` columns while keeping what tells it from its
 * neighbours (many kernels share a long prefix, "void clover::par_ranged2d_
 * kernel<...>"), each step only while it does not fit: the return type
 * "void " and the argument list go, then the namespaces of the names inside
 * templates, then those of the name itself, then the templates' contents
 * from the innermost out (at most FOLD_LEVELS passes), down to the
 * outermost, which tells instances apart; what still does not fit keeps
 * its head and its tail. The steps work on the name as it is, so that an
 * escape of sanitizing is never taken for part of a name. Returns a new
 * string, or NULL. */
char *textout_shorten(textout *t, const char *s, int width)
{
    char *safe = shorten_folded(t, s, width);
    if (!safe)
        return NULL;
    char *cut = cut_head_tail(t, safe, width);
    free(safe);
    return cut;
}

/* ---- a table's column of names ------------------------------------------------------ */

#define CUT_ENDS 6 /* columns of head and of tail kept around a difference */

static int cols_in(const char *s, size_t bytes)
{
    int n = 0;
    for (size_t i = 0; i < bytes && s[i]; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* f (sanitized, over `width` columns) shown from byte `from` on, where
 * names that share its first `from` bytes part: a head of at most
 * CUT_ENDS columns and an ellipsis, as much from `from` as fits, and when
 * that is not all, an ellipsis and a tail of at most CUT_ENDS columns.
 * NULL when too little would fit (or memory ran out). */
static char *cut_around(textout *t, const char *f, size_t from, int width)
{
    const char *ell = t->st.unicode ? "\xe2\x80\xa6" : "~";
    int c = textout_cols(f), start = cols_in(f, from);
    int head = start < CUT_ENDS ? start : CUT_ENDS, e1 = start > head;
    int rest = c - start, tail = 0, e2 = 0;
    if (head + e1 + rest > width) {
        tail = rest < CUT_ENDS ? rest : CUT_ENDS;
        e2 = 1;
    }
    int mid = e2 ? width - head - e1 - 1 - tail : rest;
    if (mid < 4)
        return NULL;
    size_t tb = prefix_bytes(f, c - tail);
    const char *piece[] = { f, ell, f + from, ell, f + tb };
    size_t bytes[] = { prefix_bytes(f, head), e1 ? strlen(ell) : 0,
                       prefix_bytes(f + from, mid), e2 ? strlen(ell) : 0, e2 ? strlen(f + tb) : 0 };
    return joined(t, piece, bytes, 5);
}

static int sep_char(char ch)
{
    return strchr("._:/<>,( -", ch) != NULL;
}

typedef struct shown_row {
    const char *shown;
    size_t i;
} shown_row;

static int by_shown(const void *a, const void *b)
{
    const shown_row *x = a, *y = b;
    int d = strcmp(x->shown, y->shown);
    return d ? d : (x->i > y->i) - (x->i < y->i);
}

/* Rows [lo, hi) of `rows` show the same cut: those whose folded names
 * differ show, instead, the part from where the group's names part (from
 * the separator before it, within 8 bytes). Whether any changed. */
static int names_apart(textout *t, textout_names *c, char **folded, const shown_row *rows,
                        size_t lo, size_t hi)
{
    const char *f0 = folded[rows[lo].i];
    size_t common = strlen(f0);
    int differ = 0;
    for (size_t k = lo + 1; k < hi; k++) {
        const char *f = folded[rows[k].i];
        size_t p = 0;
        while (p < common && f[p] == f0[p])
            p++;
        common = p;
        differ |= strcmp(f, f0) != 0;
    }
    if (!differ)
        return 0;
    while (common > 0 && ((unsigned char)f0[common] & 0xC0) == 0x80)
        common--;
    size_t from = common;
    for (size_t k = common; k > 0 && common - k < 8; k--)
        if (sep_char(f0[k - 1])) {
            from = k;
            break;
        }
    int changed = 0;
    for (size_t k = lo; k < hi; k++) {
        char *alt = cut_around(t, folded[rows[k].i], from, c->width);
        if (alt && strcmp(alt, c->shown[rows[k].i]) != 0) {
            free(c->shown[rows[k].i]);
            c->shown[rows[k].i] = alt;
            changed = 1;
        } else {
            free(alt);
        }
    }
    return changed;
}

/* The shortened names, then the groups that came out alike (sorted
 * together) told apart, again while that changes something (names alike
 * on a longer stretch part further on), a few times at most. */
static int names_shorten(textout *t, textout_names *c, const char *const *names)
{
    char **folded = calloc(c->n, sizeof *folded);
    shown_row *rows = calloc(c->n, sizeof *rows);
    int ok = folded && rows;
    for (size_t i = 0; ok && i < c->n; i++) {
        folded[i] = shorten_folded(t, names[i], c->width);
        c->shown[i] = folded[i] ? cut_head_tail(t, folded[i], c->width) : NULL;
        ok = c->shown[i] != NULL;
    }
    for (int round = 0, changed = 1; ok && changed && round < 4; round++) {
        for (size_t i = 0; i < c->n; i++)
            rows[i] = (shown_row){ c->shown[i], i };
        qsort(rows, c->n, sizeof *rows, by_shown);
        changed = 0;
        for (size_t lo = 0, hi; lo < c->n; lo = hi) {
            for (hi = lo + 1; hi < c->n && strcmp(rows[hi].shown, rows[lo].shown) == 0; hi++)
                ;
            if (hi - lo > 1)
                changed |= names_apart(t, c, folded, rows, lo, hi);
        }
    }
    for (size_t i = 0; folded && i < c->n; i++)
        free(folded[i]);
    free(folded);
    free(rows);
    if (!ok)
        t->nomem = 1;
    return ok && !t->nomem ? 0 : -1;
}

int textout_names_init(textout *t, textout_names *c, const cJSON *items, const char *key, int width)
{
    int n = cJSON_GetArraySize(items);
    *c = (textout_names){ NULL, (size_t)(n > 0 ? n : 0), width };
    const char **names = calloc(c->n + 1, sizeof *names);
    c->shown = calloc(c->n + 1, sizeof *c->shown);
    if (!names || !c->shown) {
        free(names);
        textout_names_free(c);
        t->nomem = 1;
        return -1;
    }
    const cJSON *item;
    size_t i = 0;
    cJSON_ArrayForEach(item, items) {
        const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, key));
        names[i++] = s ? s : "";
    }
    int e = 0;
    if (t->st.wide) {
        for (i = 0; i < c->n && !e; i++)
            e = (c->shown[i] = textout_sanitize(t, names[i])) ? 0 : -1;
    } else {
        e = names_shorten(t, c, names);
    }
    free(names);
    if (e)
        textout_names_free(c);
    return e;
}

void textout_names_put(textout *t, const textout_names *c, size_t i)
{
    if (!c->shown || i >= c->n || !c->shown[i])
        return;
    int cols = textout_cols(c->shown[i]);
    fputs(c->shown[i], t->out);
    fprintf(t->out, "%*s", cols < c->width ? c->width - cols : 0, "");
}

void textout_names_free(textout_names *c)
{
    for (size_t i = 0; c->shown && i < c->n; i++)
        free(c->shown[i]);
    free(c->shown);
    c->shown = NULL;
    c->n = 0;
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
    if (t->st.wide)
        most = INT_MAX;
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

void textout_list(textout *t, const char *heading, const cJSON *items, const char *bullet,
                  const char *sgr)
{
    const cJSON *n;
    if (!cJSON_IsArray(items) || !items->child)
        return;
    textout_heading(t, heading);
    fputc('\n', t->out);
    cJSON_ArrayForEach(n, items) {
        if (!cJSON_IsString(n))
            continue;
        fputs("  ", t->out);
        if (sgr)
            textout_sgr(t, sgr);
        fputs(bullet, t->out);
        if (sgr)
            textout_sgr(t, "0");
        fputc(' ', t->out);
        textout_put_wrapped(t, n->valuestring, 4, 4);
    }
}

void textout_notes(textout *t, const cJSON *notes)
{
    textout_list(t, "Notes", notes, "-", NULL);
}
