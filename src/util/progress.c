/* progress.c - the loading progress bar (see progress.h). */
#include <time.h>

#include "util/progress.h"

#define BAR_CELLS 30
#define REDRAW_MS 100

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void progress_init(progress *p, FILE *out, int enabled, const char *label)
{
    p->out = enabled ? out : NULL;
    p->label = label ? label : "";
    p->last_ms = 0;
    p->shown = 0;
}

void progress_update(uint64_t done, uint64_t total, void *arg)
{
    progress *p = arg;
    if (!p || !p->out || total < PROGRESS_MIN_BYTES)
        return;
    uint64_t t = now_ms();
    if (p->shown && t - p->last_ms < REDRAW_MS && done < total)
        return;
    p->last_ms = t;
    if (done > total)
        done = total;
    unsigned pct = (unsigned)(done * 100u / total);
    unsigned cells = (unsigned)(done * BAR_CELLS / total);
    fprintf(p->out, "\rloading %.40s [", p->label);
    for (unsigned i = 0; i < BAR_CELLS; i++)
        fputc(i < cells ? '#' : ' ', p->out);
    fprintf(p->out, "] %3u%%", pct);
    fflush(p->out);
    p->shown = 1;
}

void progress_done(progress *p)
{
    if (!p->out || !p->shown)
        return;
    /* "\r", then erase to the end of the line */
    fputs("\r\033[K", p->out);
    fflush(p->out);
    p->shown = 0;
}
