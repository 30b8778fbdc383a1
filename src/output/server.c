/* server.c - the dashboard's HTTP server. libmicrohttpd answers on its own
 * threads from a listening socket this file opens itself (so that a port in
 * use is reported as such). Only a fixed set of paths exists: nothing here
 * maps a URL to a file, so no request can reach anything else. Everything
 * answered is built before the server starts, except the event windows,
 * which each request reads from the profile with its own reader, and a
 * job's other ranks, which the command's callbacks (view_job_source) give
 * on demand: the handler shares no mutable state and may run on several
 * threads.
 *
 * Every request must carry the run's token, drawn from the kernel's random
 * source when the server starts and printed in its URL (as Jupyter does):
 * in the query (?token=, the URL prof view prints) or in the cookie that
 * every answer to it sets, so that the page's own requests carry it. The
 * Host check keeps other web pages out; the token keeps out other users of
 * the machine, who can reach a port on 127.0.0.1 but cannot read the URL. */
#include "output/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "output/mhd_api.h"
#include "output/timeline.h"
#include "output/viewer_assets.h"
#include "util/error.h"

#define SERVER_THREADS 4u
#define MAX_HOSTS 8
#define TOKEN_BYTES 16u            /* 128 random bits, written as 32 hex digits */
#define TOKEN_COOKIE "prof_token"
#define JOB_WHY_MAX 512            /* a job callback's reason for a failure      */

struct view_server {
    view_server_config cfg;
    mhd_api mhd;
    struct MHD_Daemon *daemon;
    unsigned port;
    int loopback;              /* then only loopback Host headers are answered */
    char url[160];             /* with ?token=                                 */
    char token[2 * TOKEN_BYTES + 1];
    char cookie[2 * TOKEN_BYTES + 64]; /* the Set-Cookie value that carries it */
    char hosts[MAX_HOSTS][80]; /* accepted Host values when loopback          */
    size_t nhosts;
};

/* Outside loads forbidden; the page's own files and API allowed. */
static const char csp[] = "default-src 'self'; object-src 'none'; base-uri 'none'; "
                          "form-action 'none'; frame-ancestors 'none'";

static enum MHD_Result respond(const view_server *s, struct MHD_Connection *c, unsigned status,
                               const char *type, const void *data, size_t size,
                               enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = s->mhd.create_response_from_buffer(size, (void *)data, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free((void *)data);
        return MHD_NO;
    }
    int ok = s->mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type) == MHD_YES &&
             s->mhd.add_response_header(r, "Content-Security-Policy", csp) == MHD_YES &&
             s->mhd.add_response_header(r, "X-Content-Type-Options", "nosniff") == MHD_YES &&
             s->mhd.add_response_header(r, "Referrer-Policy", "no-referrer") == MHD_YES &&
             s->mhd.add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") == MHD_YES &&
             (status == MHD_HTTP_FORBIDDEN ||
              s->mhd.add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, s->cookie) == MHD_YES) &&
             (status != MHD_HTTP_METHOD_NOT_ALLOWED ||
              s->mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") == MHD_YES);
    enum MHD_Result ret = ok ? s->mhd.queue_response(c, status, r) : MHD_NO;
    s->mhd.destroy_response(r);
    return ret;
}

static enum MHD_Result respond_text(const view_server *s, struct MHD_Connection *c,
                                    unsigned status, const char *text)
{
    return respond(s, c, status, "text/plain; charset=utf-8", text, strlen(text),
                   MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result respond_json(const view_server *s, struct MHD_Connection *c,
                                    const char *json)
{
    return respond(s, c, MHD_HTTP_OK, "application/json", json, strlen(json),
                   MHD_RESPMEM_PERSISTENT);
}

/* A whole unsigned decimal number up to UINT64_MAX, or -1. Every value
 * the server hands out (t1_ns defaults to UINT64_MAX) must read back. */
static int parse_u64(const char *s, uint64_t *v)
{
    if (!s || !*s)
        return -1;
    uint64_t n = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        uint64_t d = (uint64_t)(*s - '0');
        if (n > (UINT64_MAX - d) / 10)
            return -1;
        n = n * 10 + d;
    }
    *v = n;
    return 0;
}

static const char *arg(const view_server *s, struct MHD_Connection *c, const char *key)
{
    return s->mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
}

long view_parse_profile(const char *text, size_t nprofiles)
{
    uint64_t v = 0;
    if (text && parse_u64(text, &v) < 0)
        return -1;
    return v < nprofiles ? (long)v : -1;
}

int view_parse_rank(const char *text, long *rank)
{
    uint64_t v = 0;
    *rank = -1;
    if (!text)
        return 0;
    if (parse_u64(text, &v) < 0 || v > INT32_MAX)
        return -1;
    *rank = (long)v;
    return 0;
}

int view_parse_events(const char *profile, const char *t0, const char *t1, const char *thread,
                      size_t nprofiles, long *profile_out, timeline_query *q)
{
    uint64_t th = 0;
    *q = (timeline_query){ 0, UINT64_MAX, TIMELINE_ALL_THREADS, VIEW_EVENTS_LIMIT };
    if ((*profile_out = view_parse_profile(profile, nprofiles)) < 0 ||
        (t0 && parse_u64(t0, &q->t0_ns) < 0) || (t1 && parse_u64(t1, &q->t1_ns) < 0) ||
        q->t1_ns < q->t0_ns)
        return VIEW_BAD_WINDOW;
    if (thread && strcmp(thread, "gpu") == 0)
        q->thread = TIMELINE_GPU_ONLY;
    else if (thread && (parse_u64(thread, &th) < 0 || th > UINT32_MAX))
        return VIEW_BAD_THREAD;
    else if (thread)
        q->thread = (long)th;
    return 0;
}

/* What a job's callback could not give: no such rank, or why it failed. */
static enum MHD_Result answer_job_failure(const view_server *s, struct MHD_Connection *c,
                                          int found, const char *why)
{
    if (!found)
        return respond_text(s, c, MHD_HTTP_NOT_FOUND, "no such rank\n");
    size_t len = strlen(why);
    char *text = malloc(len + 2);
    if (!text)
        return MHD_NO;
    memcpy(text, why, len);
    memcpy(text + len, "\n", 2);
    return respond(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", text,
                   len + 1, MHD_RESPMEM_MUST_FREE);
}

/* The rank=N of a request on a job's other rank: 1 and *rank, 0 when it
 * names none (or the rank view_json describes), -1 when it is malformed
 * or the view is not of a job. */
static int job_rank(const view_server *s, struct MHD_Connection *c, long *rank)
{
    if (view_parse_rank(arg(s, c, "rank"), rank) < 0 || (*rank >= 0 && !s->cfg.job))
        return -1;
    return *rank >= 0 && *rank != s->cfg.job->described;
}

/* /api/view[?rank=N] */
static enum MHD_Result answer_view(const view_server *s, struct MHD_Connection *c)
{
    long rank;
    int other = job_rank(s, c, &rank), found = 1;
    if (other < 0)
        return respond_text(s, c, MHD_HTTP_NOT_FOUND, "no such rank\n");
    if (!other)
        return respond_json(s, c, s->cfg.view_json);
    char why[JOB_WHY_MAX];
    const view_job_source *j = s->cfg.job;
    char *json = j->view(j->ctx, rank, &found, why, sizeof why);
    if (!json)
        return answer_job_failure(s, c, found, why);
    return respond(s, c, MHD_HTTP_OK, "application/json", json, strlen(json),
                   MHD_RESPMEM_MUST_FREE);
}

/* /api/events?t0=NS&t1=NS[&thread=N|gpu][&profile=N|&rank=N] */
static enum MHD_Result answer_events(const view_server *s, struct MHD_Connection *c)
{
    timeline_query q;
    long profile = 0, rank;
    int bad = view_parse_events(arg(s, c, "profile"), arg(s, c, "t0"), arg(s, c, "t1"),
                                arg(s, c, "thread"), s->cfg.nprofiles, &profile, &q);
    if (bad == VIEW_BAD_WINDOW)
        return respond_text(s, c, MHD_HTTP_BAD_REQUEST, "bad profile, t0 or t1\n");
    if (bad == VIEW_BAD_THREAD)
        return respond_text(s, c, MHD_HTTP_BAD_REQUEST, "bad thread\n");
    int other = job_rank(s, c, &rank), found = 1;
    if (other < 0)
        return respond_text(s, c, MHD_HTTP_NOT_FOUND, "no such rank\n");
    const char *path = s->cfg.paths[profile];
    char why[JOB_WHY_MAX];
    if (other && !(path = s->cfg.job->path(s->cfg.job->ctx, rank, &found, why, sizeof why)))
        return answer_job_failure(s, c, found, why);
    prof_error err = { PROF_OK, "" };
    char *json = timeline_window_json(path, s->cfg.tuning, &q, &err);
    if (!json)
        return respond_text(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the profile\n");
    return respond(s, c, MHD_HTTP_OK, "application/json", json, strlen(json),
                   MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result answer_asset(const view_server *s, struct MHD_Connection *c,
                                    const char *path)
{
    const viewer_asset *a = viewer_asset_find(path);
    if (!a)
        return respond_text(s, c, MHD_HTTP_NOT_FOUND, "not found\n");
    return respond(s, c, MHD_HTTP_OK, a->content_type, a->data, a->size, MHD_RESPMEM_PERSISTENT);
}

/* Requests naming another host are refused while serving on loopback: a web
 * page elsewhere cannot read the profile through DNS rebinding. */
static int host_allowed(const view_server *s, struct MHD_Connection *c)
{
    if (!s->loopback)
        return 1;
    const char *host = s->mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (!host)
        return 0;
    for (size_t i = 0; i < s->nhosts; i++)
        if (strcmp(host, s->hosts[i]) == 0)
            return 1;
    return 0;
}

/* Whether a equals the token, in time that does not depend on where they
 * differ. */
static int token_equal(const view_server *s, const char *a)
{
    if (!a || strlen(a) != 2 * TOKEN_BYTES)
        return 0;
    unsigned char diff = 0;
    for (size_t i = 0; i < 2 * TOKEN_BYTES; i++)
        diff |= (unsigned char)(a[i] ^ s->token[i]);
    return diff == 0;
}

static int token_given(const view_server *s, struct MHD_Connection *c)
{
    return token_equal(s, s->mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token")) ||
           token_equal(s, s->mhd.lookup_connection_value(c, MHD_COOKIE_KIND, TOKEN_COOKIE));
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)state;
    const view_server *s = cls;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return respond_text(s, c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
    if (!host_allowed(s, c))
        return respond_text(s, c, MHD_HTTP_FORBIDDEN, "unknown host\n");
    if (!token_given(s, c))
        return respond_text(s, c, MHD_HTTP_FORBIDDEN, "open the dashboard with the URL prof "
                            "view printed: it carries this run's token\n");
    if (strcmp(url, "/") == 0)
        return answer_asset(s, c, "/index.html");
    if (strcmp(url, "/app.js") == 0 || strcmp(url, "/app.css") == 0)
        return answer_asset(s, c, url);
    if (strcmp(url, "/favicon.ico") == 0) /* browsers ask; there is none */
        return respond(s, c, MHD_HTTP_NO_CONTENT, "image/x-icon", "", 0, MHD_RESPMEM_PERSISTENT);
    if (strcmp(url, "/api/view") == 0)
        return answer_view(s, c);
    if (strcmp(url, "/api/report") == 0) {
        long p = view_parse_profile(arg(s, c, "profile"), s->cfg.nprofiles);
        return p < 0 ? respond_text(s, c, MHD_HTTP_NOT_FOUND, "no such profile\n")
                     : respond_json(s, c, s->cfg.reports[p]);
    }
    if (strcmp(url, "/api/compare") == 0 && s->cfg.compare_json)
        return respond_json(s, c, s->cfg.compare_json);
    if (strcmp(url, "/api/events") == 0)
        return answer_events(s, c);
    return respond_text(s, c, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* Parses a numeric address into ss; 0, or -1 when it is not one. */
static int parse_addr(const char *addr, unsigned port, struct sockaddr_storage *ss,
                      socklen_t *len, int *loopback)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *len = sizeof *v4;
        *loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
        return 0;
    }
    if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *len = sizeof *v6;
        *loopback = memcmp(&v6->sin6_addr, &in6addr_loopback, sizeof in6addr_loopback) == 0;
        return 0;
    }
    return -1;
}

static prof_err open_listener(view_server *s, const char *addr, int *fd_out, prof_error *err)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    if (s->cfg.port > 65535)
        return prof_error_set(err, PROF_ERR_INVALID, "port %u is not between 0 and 65535",
                              s->cfg.port);
    if (parse_addr(addr, s->cfg.port, &ss, &len, &s->loopback) < 0)
        return prof_error_set(err, PROF_ERR_INVALID,
                              "'%s' is not a numeric IPv4 or IPv6 address", addr);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0)
        return prof_error_set(err, PROF_ERR_IO, "cannot open a socket: %s", strerror(errno));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0) {
        int e = errno;
        close(fd);
        if (e == EADDRINUSE)
            return prof_error_set(err, PROF_ERR_IO, "port %u on %s is already in use", s->cfg.port,
                                  addr);
        return prof_error_set(err, PROF_ERR_IO, "cannot listen on %s port %u: %s", addr,
                              s->cfg.port, strerror(e));
    }
    len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
        s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
    *fd_out = fd;
    return PROF_OK;
}

static void add_host(view_server *s, const char *name)
{
    if (s->nhosts + 2 > MAX_HOSTS)
        return;
    snprintf(s->hosts[s->nhosts++], sizeof s->hosts[0], "%s", name);
    snprintf(s->hosts[s->nhosts++], sizeof s->hosts[0], "%s:%u", name, s->port);
}

prof_err view_server_start(const view_server_config *cfg, view_server **out, prof_error *err)
{
    *out = NULL;
    if (cfg->nprofiles < 1 || cfg->nprofiles > VIEW_MAX_PROFILES)
        return prof_error_set(err, PROF_ERR_INVALID, "one or two profiles");
    view_server *s = calloc(1, sizeof *s);
    if (!s)
        return prof_error_set(err, PROF_ERR_NOMEM, "out of memory");
    s->cfg = *cfg;
    const char *addr = cfg->bind_addr ? cfg->bind_addr : "127.0.0.1";
    int fd = -1;
    prof_err e = open_listener(s, addr, &fd, err);
    if (e == PROF_OK && (e = mhd_api_load(&s->mhd, err)) != PROF_OK)
        close(fd);
    if (e != PROF_OK) {
        free(s);
        return e;
    }
    unsigned char raw[TOKEN_BYTES];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        int saved = errno;
        close(fd);
        mhd_api_unload(&s->mhd);
        free(s);
        return prof_error_set(err, PROF_ERR_IO, "cannot draw the dashboard's token: %s",
                              strerror(saved));
    }
    for (size_t i = 0; i < TOKEN_BYTES; i++)
        snprintf(s->token + 2 * i, 3, "%02x", raw[i]);
    snprintf(s->cookie, sizeof s->cookie, TOKEN_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict",
             s->token);
    int v6 = strchr(addr, ':') != NULL;
    char shown[72];
    snprintf(shown, sizeof shown, v6 ? "[%s]" : "%s", addr);
    snprintf(s->url, sizeof s->url, "http://%s:%u/?token=%s", shown, s->port, s->token);
    add_host(s, shown);
    add_host(s, "localhost");
    add_host(s, v6 ? "127.0.0.1" : "[::1]");
    s->daemon = s->mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | (v6 ? MHD_USE_IPv6 : 0),
                                    0, NULL, NULL, answer, s, MHD_OPTION_LISTEN_SOCKET, fd,
                                    MHD_OPTION_THREAD_POOL_SIZE, SERVER_THREADS,
                                    MHD_OPTION_CONNECTION_LIMIT, 64u,
                                    MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!s->daemon) {
        unsigned port = s->port;
        close(fd);
        mhd_api_unload(&s->mhd);
        free(s);
        return prof_error_set(err, PROF_ERR_IO, "cannot start the HTTP server on %s port %u",
                              addr, port);
    }
    *out = s;
    return PROF_OK;
}

unsigned view_server_port(const view_server *s)
{
    return s->port;
}

const char *view_server_url(const view_server *s)
{
    return s->url;
}

int view_server_loopback(const view_server *s)
{
    return s->loopback;
}

void view_server_stop(view_server *s)
{
    if (!s)
        return;
    s->mhd.stop_daemon(s->daemon); /* closes the listening socket too */
    mhd_api_unload(&s->mhd);
    free(s);
}
