/* run_measured.c - runs a command with its standard output thrown away and
 * prints its wall time, CPU time (user + system) and peak resident memory,
 * for the benchmarks: one line "WALL_S CPU_S MAXRSS_KIB STATUS". Each
 * figure is the least of ROUNDS runs (a preemption on a shared machine must
 * not decide a ratio); CPU time is the steadier figure on a busy machine.
 * usage: run_measured ROUNDS COMMAND [ARGS...] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One run: its wall and CPU time, peak RSS (KiB) and exit status; -1 on
 * failure. */
static int run_once(char **argv, double *wall, double *cpu, long *rss_kib, int *status)
{
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, STDOUT_FILENO);
        execvp(argv[0], argv);
        _exit(127);
    }
    struct rusage ru;
    int st;
    if (wait4(pid, &st, 0, &ru) != pid)
        return -1;
    *wall = now_s() - t0;
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    *rss_kib = ru.ru_maxrss;
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fputs("usage: run_measured ROUNDS COMMAND [ARGS...]\n", stderr);
        return 2;
    }
    int rounds = atoi(argv[1]);
    double best_wall = 1e30, best_cpu = 1e30;
    long best_rss = 0;
    int worst_status = 0;
    for (int r = 0; r < (rounds > 0 ? rounds : 1); r++) {
        double wall, cpu;
        long rss;
        int status;
        if (run_once(argv + 2, &wall, &cpu, &rss, &status) != 0) {
            perror("run_measured");
            return 1;
        }
        best_wall = wall < best_wall ? wall : best_wall;
        best_cpu = cpu < best_cpu ? cpu : best_cpu;
        best_rss = r == 0 || rss < best_rss ? rss : best_rss;
        worst_status = status ? status : worst_status;
    }
    printf("%.3f %.3f %ld %d\n", best_wall, best_cpu, best_rss, worst_status);
    return 0;
}
