/* dump_events.c - prints every event of a profile as one tab-separated
 * line, for tests that check what a real recording contains (the Python
 * binding's tests read it). Lines, by event type:
 *   region  THREAD NAME KIND DEPTH START_NS DUR_NS
 *   step    THREAD NUMBER FLAGS START_NS DUR_NS
 *   memory  THREAD SERIES BYTES START_NS
 *   counter THREAD NAME VALUE START_NS
 *   mark    THREAD NAME START_NS
 *   thread  THREAD NAME TID
 *   dropped THREAD COUNT START_NS
 *   TYPE    THREAD NAME START_NS DUR_NS          (GPU and API records)
 * and last "status clean=C truncated=T events=N dropped=D".
 * Usage: dump_events RUN.prof. Exit 0, or 3 with one line on stderr when
 * the file cannot be read. */
#include <inttypes.h>
#include <stdio.h>

#include "prof_reader.h"

static void print_event(const prof_reader *r, const prof_event *e)
{
    const char *type = prof_event_type_name(e->type);
    switch (e->type) {
    case PROF_EV_REGION:
        printf("region\t%" PRIu32 "\t%s\t%s\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\n", e->thread,
               e->name, prof_kind_name(e->kind), e->depth, e->start_ns, e->dur_ns);
        break;
    case PROF_EV_STEP:
        printf("step\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\n", e->thread,
               e->value, e->flags, e->start_ns, e->dur_ns);
        break;
    case PROF_EV_MEMORY:
        printf("memory\t%" PRIu32 "\t%s\t%" PRIu64 "\t%" PRIu64 "\n", e->thread, e->name, e->value,
               e->start_ns);
        break;
    case PROF_EV_COUNTER:
        printf("counter\t%" PRIu32 "\t%s\t%.17g\t%" PRIu64 "\n", e->thread, e->name, e->fvalue,
               e->start_ns);
        break;
    case PROF_EV_MARK:
        printf("mark\t%" PRIu32 "\t%s\t%" PRIu64 "\n", e->thread, e->name, e->start_ns);
        break;
    case PROF_EV_THREAD: {
        const char *name = prof_reader_thread_name(r, e->thread);
        printf("thread\t%" PRIu32 "\t%s\t%" PRIu64 "\n", e->thread, name ? name : e->name,
               e->value);
        break;
    }
    case PROF_EV_DROPPED:
        printf("dropped\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu64 "\n", e->thread, e->value,
               e->start_ns);
        break;
    case PROF_EV_ATTR:
        printf("attr\t%s\t%" PRIu32 "\t%s\n", e->name, e->subkind, prof_event_attr_value(e));
        break;
    default:
        printf("%s\t%" PRIu32 "\t%s\t%" PRIu64 "\t%" PRIu64 "\n", type, e->thread, e->name,
               e->start_ns, e->dur_ns);
        break;
    }
}

int main(int argc, char **argv)
{
    prof_reader *r;
    prof_error err;
    prof_event ev;
    prof_read_status st;
    int n;
    if (argc != 2) {
        fputs("usage: dump_events RUN.prof\n", stderr);
        return 2;
    }
    if (prof_reader_open(argv[1], &r, &err) != PROF_OK) {
        fprintf(stderr, "dump_events: cannot read '%s': %s\n", argv[1], err.message);
        return 3;
    }
    while ((n = prof_reader_next(r, &ev)) == 1)
        print_event(r, &ev);
    if (n < 0) {
        fprintf(stderr, "dump_events: cannot read '%s': %s\n", argv[1],
                prof_reader_error(r)->message);
        prof_reader_close(r);
        return 3;
    }
    prof_reader_status(r, &st);
    printf("status\tclean=%d\ttruncated=%d\tevents=%" PRIu64 "\tdropped=%" PRIu64 "\n", st.clean,
           st.truncated, st.events, st.dropped_events);
    prof_reader_close(r);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("dump_events: cannot write to standard output");
        return 4;
    }
    return 0;
}
