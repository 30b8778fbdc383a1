/* record_child.c - a program that knows nothing of prof, for the tests of
 * `prof record` (tests/cli/record.sh): it exits with a given status, prints
 * its environment, waits for a signal, or crashes, as its arguments say.
 *
 *   record_child exit N          exits with status N
 *   record_child env NAME...     prints NAME=value (or NAME unset) per line
 *   record_child wait FILE       creates FILE once ready, then sleeps until a
 *                                signal with the default action ends it
 *   record_child usr1 FILE       creates FILE, waits for SIGUSR1, prints
 *                                "got SIGUSR1" and exits 0
 *   record_child segv            touches some memory, then dereferences NULL
 *   record_child grow FILE N KEEP writes its pid to FILE, then takes N MiB,
 *                                one every 2 ms, touching each; KEEP 1 keeps
 *                                them all (a leak), 0 frees each as it takes
 *                                the next (flat)
 *   record_child threads N       starts N threads one after another, each
 *                                naming itself and recording a few regions
 *                                through the preloaded libprof (looked up
 *                                at run time: none, none recorded), then
 *                                prints its peak RSS as "maxrss KIB"
 *   record_child static          records through the libprof linked into
 *                                it (prof_start(NULL), as a program built
 *                                with libprof.a does), next to a preloaded
 *                                one recording into the same PROF_OUTPUT
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof.h"

static int ready(const char *path)
{
    FILE *f = fopen(path, "w");
    return f && fclose(f) == 0 ? 0 : 1;
}

static int print_env(int n, char **names)
{
    for (int i = 0; i < n; i++) {
        const char *v = getenv(names[i]);
        if (v)
            printf("%s=%s\n", names[i], v);
        else
            printf("%s unset\n", names[i]);
    }
    return fflush(stdout) != 0;
}

static int wait_usr1(const char *path)
{
    sigset_t set;
    int sig;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    if (ready(path) || sigwait(&set, &sig) != 0)
        return 1;
    printf("got SIGUSR1\n");
    return fflush(stdout) != 0;
}

static int crash(void)
{
    size_t n = (size_t)8 << 20;
    char *p = malloc(n);
    if (!p)
        return 1;
    memset(p, 1, n); /* some resident memory for the samples */
    volatile int *null = NULL;
    *null = p[n - 1];
    free(p);
    return 0;
}

static int grow(const char *path, long mib, int keep)
{
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0)
        return 1;
    size_t n = (size_t)1 << 20;
    char *prev = NULL;
    struct timespec pause_2ms = { 0, 2000000 };
    for (long i = 0; i < mib; i++) {
        char *p = malloc(n);
        if (!p)
            return 1;
        memset(p, (int)(i & 0x7f) + 1, n);
        if (!keep)
            free(prev);
        prev = p;
        nanosleep(&pause_2ms, NULL);
    }
    return 0; /* kept: freed at exit */
}

/* The preloaded libprof's calls, found at run time so that this program
 * does not depend on it; NULL without one. */
typedef void (*name_fn)(const char *);
typedef void (*end_fn)(void);
static name_fn region_begin, thread_name;
static end_fn region_end;

#define THREAD_REGIONS 4

static void *short_lived(void *arg)
{
    char name[32];
    snprintf(name, sizeof name, "worker.%lu", (unsigned long)(size_t)arg);
    if (thread_name)
        thread_name(name);
    for (int i = 0; i < THREAD_REGIONS && region_begin && region_end; i++) {
        region_begin("work");
        region_end();
    }
    return NULL;
}

static int threads(long n)
{
    region_begin = (name_fn)(void (*)(void))dlsym(RTLD_DEFAULT, "prof_region_begin");
    region_end = (end_fn)(void (*)(void))dlsym(RTLD_DEFAULT, "prof_region_end");
    thread_name = (name_fn)(void (*)(void))dlsym(RTLD_DEFAULT, "prof_thread_name");
    for (long i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_lived, (void *)(size_t)i) != 0 ||
            pthread_join(t, NULL) != 0)
            return 1;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 1;
    printf("maxrss %ld\n", ru.ru_maxrss);
    return fflush(stdout) != 0;
}

/* The copy of libprof linked into this program: its own recording, with
 * the preloaded copy's going on at the same time in the same process. */
static int record_static(void)
{
    int e = prof_start(NULL);
    if (e != 0) {
        fprintf(stderr, "record_child: prof_start: %s\n", strerror(-e));
        return 1;
    }
    prof_thread_name("static");
    for (int i = 0; i < 3; i++) {
        prof_region_begin("static.work");
        prof_region_end();
        prof_step();
    }
    return prof_stop() != 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "exit") == 0)
        return atoi(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "env") == 0)
        return print_env(argc - 2, argv + 2);
    if (argc >= 3 && strcmp(argv[1], "wait") == 0) {
        if (ready(argv[2]))
            return 1;
        for (;;)
            pause();
    }
    if (argc >= 3 && strcmp(argv[1], "usr1") == 0)
        return wait_usr1(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "segv") == 0)
        return crash();
    if (argc >= 5 && strcmp(argv[1], "grow") == 0)
        return grow(argv[2], atol(argv[3]), atoi(argv[4]));
    if (argc >= 3 && strcmp(argv[1], "threads") == 0)
        return threads(atol(argv[2]));
    if (argc >= 2 && strcmp(argv[1], "static") == 0)
        return record_static();
    fprintf(stderr, "usage: record_child exit N | env NAME... | wait FILE | usr1 FILE | segv | "
                    "grow FILE MIB KEEP | threads N | static\n");
    return 2;
}
