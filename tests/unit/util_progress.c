/* util_progress.c - the loading progress bar: nothing when disabled (not a
 * terminal) or for small inputs, a bar with its percentage for large ones,
 * redraws limited to one per 100 ms except the last, and the line erased at
 * the end. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "util/progress.h"

#define BIG (PROGRESS_MIN_BYTES * 2ull)

typedef struct capture {
    char *text;
    size_t len;
    FILE *fp;
} capture;

static void capture_open(capture *c)
{
    c->text = NULL;
    c->len = 0;
    c->fp = open_memstream(&c->text, &c->len);
    cr_assert_not_null(c->fp);
}

static char *capture_close(capture *c)
{
    cr_assert_eq(fclose(c->fp), 0);
    return c->text;
}

Test(util_progress, disabled_writes_nothing)
{
    capture c;
    capture_open(&c);
    progress p;
    progress_init(&p, c.fp, 0, "run.prof");
    progress_update(BIG / 2, BIG, &p);
    progress_done(&p);
    char *text = capture_close(&c);
    cr_assert_str_eq(text, "");
    free(text);
}

Test(util_progress, small_input_writes_nothing)
{
    capture c;
    capture_open(&c);
    progress p;
    progress_init(&p, c.fp, 1, "run.prof");
    progress_update(10, PROGRESS_MIN_BYTES - 1, &p);
    progress_done(&p);
    char *text = capture_close(&c);
    cr_assert_str_eq(text, "");
    free(text);
}

Test(util_progress, bar_then_erased)
{
    capture c;
    capture_open(&c);
    progress p;
    progress_init(&p, c.fp, 1, "run.prof");
    progress_update(BIG / 2, BIG, &p);
    progress_update(BIG / 2 + 1, BIG, &p); /* within 100 ms: not redrawn */
    progress_update(BIG, BIG, &p);         /* the end is always drawn     */
    progress_done(&p);
    char *text = capture_close(&c);
    cr_assert_str_eq(text,
                     "\rloading run.prof [###############               ]  50%"
                     "\rloading run.prof [##############################] 100%"
                     "\r\033[K");
    free(text);
}

Test(util_progress, null_argument_is_ignored)
{
    progress_update(1, BIG, NULL);
}
