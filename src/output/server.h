/* server.h - the dashboard's HTTP server for `prof view`: libmicrohttpd on
 * its own thread, serving the built-in page, the report data and time
 * windows of events, and nothing else. GET and HEAD only; every response
 * carries a Content-Security-Policy that forbids outside loads. */
#ifndef PROF_OUTPUT_SERVER_H
#define PROF_OUTPUT_SERVER_H

#include <stddef.h>

#include "output/timeline.h"
#include "prof_reader.h"

#define VIEW_MAX_PROFILES 2
#define VIEW_EVENTS_LIMIT 20000u /* events per /api/events answer */

/* A job's ranks (prof view DIR): any rank's view and events on demand, as
 * `prof view DIR --rank N` would serve them. Both may be called from
 * several server threads at once. rank is a rank number. */
typedef struct view_job_source {
    void *ctx;
    int described;          /* the rank view_json describes                    */
    /* That rank's view document (JSON text, freed by the server); NULL with
     * *found 0 when the job has no such rank, else with a one-line reason. */
    char *(*view)(void *ctx, long rank, int *found, char *why, size_t size);
    /* The profile its events are read from (kept while serving); NULL as
     * view. */
    const char *(*path)(void *ctx, long rank, int *found, char *why, size_t size);
} view_job_source;

typedef struct view_server_config {
    const char *bind_addr;  /* numeric IPv4 or IPv6 address; NULL: 127.0.0.1  */
    unsigned port;          /* 0: any free port (view_server_port says which) */
    size_t nprofiles;       /* 1 or 2                                         */
    const char *paths[VIEW_MAX_PROFILES];   /* the .prof files, for events    */
    const char *reports[VIEW_MAX_PROFILES]; /* each report as JSON text       */
    const char *view_json;  /* the page's data (view_document)                */
    const char *compare_json; /* the comparison as JSON text, or NULL         */
    const view_job_source *job; /* a job's other ranks, or NULL              */
    const prof_tuning *tuning;  /* how windows of the profiles are read       */
} view_server_config;

typedef struct view_server view_server;

/* The request arguments, parsed apart from the HTTP library so that they
 * can be tested (and fuzzed) on their own. Each argument is the raw value
 * from the query string, NULL when absent. */

/* profile=N: 0 when absent, N when a whole number below nprofiles, -1 for
 * anything else. */
long view_parse_profile(const char *text, size_t nprofiles);

/* rank=N (a job's rank, /api/view and /api/events): 0 with *rank -1 when
 * absent or N, a whole number up to INT32_MAX; -1 for anything else. */
int view_parse_rank(const char *text, long *rank);

#define VIEW_BAD_WINDOW (-1) /* profile, t0 or t1 malformed, or t1 < t0 */
#define VIEW_BAD_THREAD (-2) /* thread neither "gpu" nor a 32-bit index  */

/* /api/events?t0=NS&t1=NS&thread=N|gpu&profile=N into *profile_out and *q
 * (the whole profile, every thread, VIEW_EVENTS_LIMIT events when absent).
 * @return 0, VIEW_BAD_WINDOW or VIEW_BAD_THREAD. */
int view_parse_events(const char *profile, const char *t0, const char *t1, const char *thread,
                      size_t nprofiles, long *profile_out, timeline_query *q);

/* Binds, listens and starts answering. The strings in cfg must outlive the
 * server. Errors: PROF_ERR_INVALID (not a numeric address), PROF_ERR_IO (the
 * port is taken, or another socket error; err says which), PROF_ERR_NOMEM. */
prof_err view_server_start(const view_server_config *cfg, view_server **out, prof_error *err);

/* The port it listens on. */
unsigned view_server_port(const view_server *s);

/* The page's address with the run's token, "http://127.0.0.1:8051/?token=
 * 32 hex digits" ("[::1]" for IPv6): every request must carry the token,
 * in the query or in the cookie the answers set (server.c). */
const char *view_server_url(const view_server *s);

/* Whether it listens on a loopback address only. */
int view_server_loopback(const view_server *s);

/* Stops answering, waits for the server thread and frees everything. */
void view_server_stop(view_server *s);

#endif
