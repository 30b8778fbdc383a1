/* kineto.c - torch.profiler (Kineto) Chrome-trace JSON, plain or gzip, read
 * as a stream and handed to a sink (sink.h). The document is never held:
 * zlib inflates it in chunks, YAJL calls back per token, and each event is
 * gathered into one fixed struct (the fields and args prof uses; the rest,
 * Input Dims and the like, is skipped unread) and dispatched when its
 * object closes. Top-level keys (deviceProperties, distributedInfo,
 * baseTimeNanoseconds) are taken wherever they are, before or after
 * traceEvents. The mapping, era by era, is formats/kineto-import.md. A cut
 * or damaged document keeps what came before the damage.
 *
 * This file reads: the stream (gzip or plain text in a window fed to YAJL
 * and to the fast path), the second reader, and kineto_read. The parts it
 * shares with kineto_parse.c, kineto_queue.c and kineto_map.c are in
 * kineto_int.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <zlib.h>

#include "import/import.h"
#include "import/kineto_int.h"

/* ---- the stream ----------------------------------------------------------------------------- */

/* YAJL's allocations. Its buffers grow with the token they hold (one
 * that spans chunks, a string being unescaped), doubling: a request past
 * KIN_TOKEN_MAX marks the token too long, and the parse stops after the
 * chunk, so that a hostile file cannot make YAJL hold it all. */
static void *kin_malloc(void *ctx, size_t n)
{
    kin_parser *p = ctx;
    p->token_too_long |= n > KIN_TOKEN_MAX;
    return malloc(n);
}

static void *kin_realloc(void *ctx, void *ptr, size_t n)
{
    kin_parser *p = ctx;
    p->token_too_long |= n > KIN_TOKEN_MAX;
    return realloc(ptr, n);
}

static void kin_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

/* The text is read into a window: the fast path reads whole events in it
 * and YAJL is fed what it holds. An event longer than the window goes to
 * YAJL, which streams. Gzip text is read KIN_CHUNK at a time, for the
 * reason above. */
#define KIN_WINDOW (1u << 20)
#define KIN_READ (64u << 10)

/* Where the fast path is in traceEvents: after '[', after an event, after
 * a ','. YAJL takes over in the same state through a made-up prefix. */
typedef enum { AT_FIRST, AT_SEPARATOR, AT_EVENT } kin_at;

static const char *const yajl_prefix[] = {
    [AT_FIRST] = "{\"traceEvents\":[",
    [AT_SEPARATOR] = "{\"traceEvents\":[{}",
    [AT_EVENT] = "{\"traceEvents\":[{},",
};

typedef struct kin_stream {
    gzFile gz;
    int direct;           /* plain text                                      */
    unsigned char *buf;   /* the window                                      */
    size_t pos, len;      /* buf[pos..len) is read and not parsed yet        */
    uint64_t base;        /* text offset of buf[0]                           */
    int ended;            /* nothing more to read: the end, or a failed read */
    int read_failed, zerr, io_errno;
    char zmsg[160];
    yajl_handle h;        /* while YAJL reads, else NULL                     */
    kin_at at;            /* while the fast path reads                       */
    struct kin_helper *helper; /* a second reader of events, or NULL      */
    int no_helper;        /* none could be had                              */
    size_t chunk_size;    /* what each gzread asks for                       */
    int stopping;         /* a token too long: stop at stop_at (yajl_read)   */
    uint64_t stop_at;
    int split;            /* the helper reads from split_at on               */
    size_t split_at;
    uint64_t split_next;  /* no guess again before this text offset         */
    int bom_checked;      /* the text's first bytes were looked at (refill)   */
} kin_stream;

/* How the stream ended; END_GO while it goes on. */
typedef enum { END_GO, END_OK, END_DAMAGED, END_STOPPED, END_EMPTY, END_IO } kin_end;

/* Damage: kept for the error message, and told to the sink once events
 * were read (before them the import fails anyway). */
static kin_end damage(kin_parser *p, const char *what)
{
    kin_sync(p);
    snprintf(p->damage, sizeof p->damage, "%s", what);
    if (p->saw_events)
        sink_note_damage(p->s, what);
    return END_DAMAGED;
}

/* Why YAJL stopped, as damage with the byte offset: it was fed chunk,
 * which starts at text offset from. */
static kin_end parse_error(kin_parser *p, yajl_handle h, uint64_t from, const unsigned char *chunk,
                           size_t len)
{
    char what[200];
    uint64_t at = from + yajl_get_bytes_consumed(h);
    if (p->too_deep) {
        snprintf(what, sizeof what, "JSON nested deeper than %d levels at byte %llu",
                 KIN_DEPTH_MAX, (unsigned long long)at);
        return damage(p, what);
    }
    unsigned char *msg = yajl_get_error(h, 0, chunk, len);
    const char *m = msg ? (const char *)msg : "";
    int l = (int)strcspn(m, "\n");
    snprintf(what, sizeof what, "JSON syntax error at byte %llu: %.*s", (unsigned long long)at,
             l > 120 ? 120 : l, m);
    if (msg)
        yajl_free_error(h, msg);
    return damage(p, what);
}

static kin_end gzip_damage(kin_parser *p, uint64_t fed, const char *why)
{
    char what[200];
    const char *sep = strstr(why, ">: "); /* zlib's "<fd:3>: " before the reason */
    if (strncmp(why, "<fd:", 4) == 0 && sep)
        why = sep + 3;
    snprintf(what, sizeof what, "gzip data damaged after byte %llu: %s", (unsigned long long)fed,
             why);
    return damage(p, what);
}

static void read_failed(kin_stream *st)
{
    int e = errno;
    const char *m = gzerror(st->gz, &st->zerr);
    snprintf(st->zmsg, sizeof st->zmsg, "%s", m ? m : "");
    st->io_errno = e ? e : EIO;
    st->read_failed = 1;
}

/* Moves what is not parsed to the window's start and reads after it,
 * whole chunks of chunk_size (the window has room for one past its size):
 * so every gzread starts at a multiple of it in the text, whoever reads,
 * and a damaged gzip loses the same text.
 * Reads are small (KIN_READ), so that the text is still in the cache
 * when it is parsed: with 1 MiB reads a 205 MB import took a quarter
 * longer. */
static void split_drop(kin_stream *st);

static void refill(kin_stream *st)
{
    split_drop(st); /* the text moves: what the helper reads is no more */
    if (st->pos > 0) {
        memmove(st->buf, st->buf + st->pos, st->len - st->pos);
        st->base += st->pos;
        st->len -= st->pos;
        st->pos = 0;
    }
    /* KIN_READ more, or as much as is held when that is more: an event
     * read again after each refill then costs at most twice its length */
    size_t more = st->len > KIN_READ ? st->len : KIN_READ;
    size_t until = st->len >= KIN_WINDOW                ? st->len /* full */
                   : more < KIN_WINDOW - st->len ? st->len + more
                                                   : KIN_WINDOW;
    while (!st->ended && st->len < until) {
        errno = 0;
        int n = gzread(st->gz, st->buf + st->len, (unsigned)st->chunk_size);
        if (n <= 0) {
            if (n < 0)
                read_failed(st);
            st->ended = 1;
            break;
        }
        st->len += (size_t)n;
    }
    /* A UTF-8 byte order mark before the document: editors and Windows
     * tools write one, JSON readers in practice skip it (RFC 8259 §8.1
     * allows ignoring it), and import_detect already took such a file
     * for JSON. Passed over as read; offsets in messages still count it. */
    if (!st->bom_checked && st->base == 0 && (st->len >= 3 || st->ended)) {
        st->bom_checked = 1;
        if (st->pos == 0 && st->len >= 3 && memcmp(st->buf, "\xEF\xBB\xBF", 3) == 0)
            st->pos = 3;
    }
}

/* Everything read is parsed and nothing more can be read: a failed read
 * is damage, a gzip stream cut short too, and so is a document that is
 * not complete. */
static kin_end read_end(kin_parser *p, kin_stream *st)
{
    uint64_t fed = st->base + st->len;
    int zerr = Z_OK;
    split_drop(st);
    if (st->read_failed) {
        if (st->zerr != Z_ERRNO)
            return gzip_damage(p, fed, st->zmsg);
        return fed == 0 ? END_IO : gzip_damage(p, fed, strerror(st->io_errno));
    }
    const char *zmsg = gzerror(st->gz, &zerr);
    if (zerr != Z_OK)
        return gzip_damage(p, fed, zmsg);
    if (fed == 0)
        return END_EMPTY;
    if (st->h) {
        yajl_status ys = yajl_complete_parse(st->h);
        if (ys == yajl_status_client_canceled && p->yield)
            p->yield = 0; /* an event (a number) ended with the text: inside traceEvents */
        else if (ys == yajl_status_client_canceled)
            return END_STOPPED;
        else if (ys == yajl_status_ok)
            return END_OK;
        else if (!p->seen_top)
            return END_EMPTY; /* whitespace only */
    }
    char what[120];
    snprintf(what, sizeof what, "the file ends inside the JSON document at byte %llu",
             (unsigned long long)fed);
    return damage(p, what);
}

/* YAJL takes over: from the start of the document, or where the fast path
 * is in traceEvents (then for one event, or for the rest of the document
 * once the array ends). */
static kin_end yajl_turn(kin_parser *p, kin_stream *st, kin_yajl_turn turn, int resume)
{
    yajl_alloc_funcs afs = { kin_malloc, kin_realloc, kin_free, p };
    if (!(st->h = yajl_alloc(&kin_callbacks, &afs, p))) {
        kin_sync(p);
        kin_sink_ok(p, PROF_ERR_NOMEM);
        return END_STOPPED;
    }
    yajl_config(st->h, yajl_dont_validate_strings, 1);
    yajl_config(st->h, yajl_allow_trailing_garbage, 1);
    p->turn = turn;
    if (resume) {
        const char *pre = yajl_prefix[st->at];
        p->muted = 1;
        yajl_status ys = yajl_parse(st->h, (const unsigned char *)pre, strlen(pre));
        p->muted = 0;
        if (ys != yajl_status_ok) {
            kin_sync(p);
            kin_sink_ok(p, PROF_ERR_NOMEM);
            return END_STOPPED;
        }
    }
    return END_GO;
}

/* A token past KIN_TOKEN_MAX, found after the piece that ends at `at`. */
static kin_end token_damage(kin_parser *p, uint64_t at)
{
    char what[120];
    snprintf(what, sizeof what, "a JSON token longer than %u MiB before byte %llu",
             KIN_TOKEN_MAX >> 20, (unsigned long long)at);
    return damage(p, what);
}

/* YAJL reads what the window holds, up to the next multiple of chunk_size
 * in the text: YAJL is given the same pieces whoever read the text before
 * it, so a token too long for its buffer is found at the same place. */
static kin_end yajl_read(kin_parser *p, kin_stream *st)
{
    if (st->pos == st->len) {
        refill(st);
        if (st->len == 0)
            return read_end(p, st);
    }
    const unsigned char *chunk = st->buf + st->pos;
    uint64_t from = st->base + st->pos;
    uint64_t edge = (from / st->chunk_size + 1) * st->chunk_size;
    size_t n = st->len - st->pos;
    if (from + n > edge)
        n = (size_t)(edge - from);
    yajl_status ys = yajl_parse(st->h, chunk, n);
    int yielded = ys == yajl_status_client_canceled && p->yield;
    if (ys == yajl_status_client_canceled && !yielded && !p->too_deep)
        return END_STOPPED; /* by a callback, which said why */
    if (ys != yajl_status_ok && !yielded)
        return parse_error(p, st->h, from, chunk, n);
    if (p->token_too_long && !yielded)
        return token_damage(p, from + n);
    if (p->token_too_long && !st->stopping) {
        /* YAJL alone would read the rest of this piece, then stop: so does
         * the fast path, which takes over here */
        split_drop(st);
        st->stopping = 1;
        st->stop_at = from + n;
    }
    if (!yielded) {
        st->pos += n;
        return END_GO;
    }
    p->yield = 0;
    st->pos += yajl_get_bytes_consumed(st->h);
    st->at = p->turn == TURN_DOCUMENT ? AT_FIRST : AT_SEPARATOR;
    p->turn = TURN_FAST;
    yajl_free(st->h);
    st->h = NULL;
    return END_GO;
}

/* ---- a second reader of events ------------------------------------------------------------ */

/* With the event thread there are two threads for two cores, and reading
 * is the slower one. So the reader guesses an event start ahead of it in
 * the window (a '{' after "}," and before '"'), a helper thread reads the
 * events from there while the reader reads those before, and the helper's
 * events are taken only when the reader arrives exactly there between two
 * events of traceEvents: then the helper started in the state the reader
 * would have had, and read what it would have read. Otherwise (a guess
 * inside a string, an event the reader gave to YAJL past it) they are
 * dropped and the reader reads on. The helper only reads events it takes
 * whole and the fast path accepts; the reader does the rest. */
#define KIN_SPLIT_AHEAD (1024u << 10) /* text held when the helper starts    */
#define KIN_SPLIT_MINE (576u << 10)  /* the reader's part, before the guess */

typedef struct kin_helper {
    pool_job thread;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    int job, quit;          /* under mu                                    */
    const unsigned char *buf;
    size_t from, len;       /* the helper's text: buf[from..len)           */
    size_t end;             /* where it stopped: after an event or a comma */
    kin_at at;              /* the state there                             */
    kin_packbuf out;        /* its events, packed                          */
    kin_parser *g;          /* its state while reading an event            */
} kin_helper;

static int blank_byte(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The helper's job: events from w->from, stopping at anything the reader
 * must see to (the end of the text, a declined or unfinished event, the
 * array's end, a separator that is not a comma). */
static void helper_read(kin_helper *w)
{
    kin_parser *g = w->g;
    size_t i = w->from;
    w->end = i;
    w->at = AT_EVENT;
    w->out.packed = 0;
    g->cut = 0;
    for (;;) {
        while (i < w->len && blank_byte(w->buf[i]))
            i++;
        if (i == w->len)
            return;
        if (w->at == AT_SEPARATOR) {
            if (w->buf[i] != ',')
                return;
            w->end = ++i;
            w->at = AT_EVENT;
            continue;
        }
        if (w->buf[i] != '{')
            return;
        uint64_t cut = g->cut;
        size_t packed = w->out.packed;
        if (kin_read_event(g, w->buf, w->len, &i, KIN_DEPTH_MAX - 2) != JSCAN_DONE) {
            g->depth = 2;
            g->cut = cut;
            g->field = F_NONE;
            w->out.packed = packed;
            return;
        }
        w->end = i;
        w->at = AT_SEPARATOR;
    }
}

static void helper_main(void *arg)
{
    kin_helper *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->job && !w->quit)
            pthread_cond_wait(&w->go, &w->mu);
        if (w->quit)
            break;
        pthread_mutex_unlock(&w->mu);
        helper_read(w);
        pthread_mutex_lock(&w->mu);
        w->job = 0;
        pthread_cond_signal(&w->done);
    }
    pthread_mutex_unlock(&w->mu);
}

static void helper_wait(kin_helper *w)
{
    pthread_mutex_lock(&w->mu);
    while (w->job)
        pthread_cond_wait(&w->done, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

static void helper_free(kin_helper *w)
{
    free(w->out.pack);
    free(w->g);
    free(w);
}

/* The helper, made the first time it is wanted; NULL when it cannot be. */
static kin_helper *helper_get(kin_parser *p, kin_stream *st)
{
    if (st->helper || st->no_helper)
        return st->helper;
    st->no_helper = 1;
    kin_helper *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->out.pack = malloc(KIN_QBLOCK);
    w->g = aligned_alloc(_Alignof(kin_parser), sizeof *w->g);
    if (!w->out.pack || !w->g) {
        helper_free(w);
        return NULL;
    }
    memset(w->g, 0, sizeof *w->g);
    w->g->s = p->s;
    w->g->python_stacks = p->python_stacks;
    w->g->fast = 1;
    w->g->turn = TURN_FAST;
    w->g->ctx[1] = C_TOP;
    w->g->ctx[2] = C_EVENTS;
    w->g->depth = 2;
    w->g->into = &w->out;
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        helper_free(w);
        return NULL;
    }
    int go = pthread_cond_init(&w->go, NULL) == 0;
    int done = go && pthread_cond_init(&w->done, NULL) == 0;
    if (done && pool_start(tuning_pool(p->tuning), &w->thread, helper_main, w)) {
        st->no_helper = 0;
        return st->helper = w;
    }
    if (done)
        pthread_cond_destroy(&w->done);
    if (go)
        pthread_cond_destroy(&w->go);
    pthread_mutex_destroy(&w->mu);
    helper_free(w);
    return NULL;
}

static void helper_end(kin_stream *st)
{
    kin_helper *w = st->helper;
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_signal(&w->go);
    pthread_mutex_unlock(&w->mu);
    pool_join(&w->thread);
    pthread_cond_destroy(&w->done);
    pthread_cond_destroy(&w->go);
    pthread_mutex_destroy(&w->mu);
    helper_free(w);
    st->helper = NULL;
}

/* A likely event start in buf[from..len): a '{' after "}," and before '"'
 * (blanks between). 0 when there is none. */
static size_t event_start_guess(const unsigned char *b, size_t from, size_t len)
{
    for (size_t i = from; i < len; i++) {
        const unsigned char *brace = memchr(b + i, '{', len - i);
        if (!brace)
            return 0;
        i = (size_t)(brace - b);
        size_t k = i, j = i + 1;
        while (k > from && blank_byte(b[k - 1]))
            k--;
        if (k == from || b[--k] != ',')
            continue;
        while (k > from && blank_byte(b[k - 1]))
            k--;
        if (k == from || b[k - 1] != '}')
            continue;
        while (j < len && blank_byte(b[j]))
            j++;
        if (j < len && b[j] == '"')
            return i;
    }
    return 0;
}

/* At an event start past split_next, with the event thread running and no
 * split: hands the text past a guessed event start to the helper. It may
 * move the text and read more (st->pos and st->len change, the event still
 * starts at st->pos): the caller takes both anew. Afterwards either the
 * helper reads or split_next is further on. */
static void split_start(kin_parser *p, kin_stream *st)
{
    /* refill moves what is left to the window's start, so a window read
     * nearly to its end is filled again here rather than read alone */
    while (!st->ended && st->len - st->pos < KIN_SPLIT_AHEAD) {
        size_t held = st->len - st->pos;
        refill(st);
        if (st->len - st->pos <= held)
            break;
    }
    size_t g = 0;
    if (st->len - st->pos >= KIN_SPLIT_AHEAD)
        g = event_start_guess(st->buf, st->pos + KIN_SPLIT_MINE, st->len);
    kin_helper *w = g ? helper_get(p, st) : NULL;
    if (!w) {
        st->split_next = st->base + st->pos + KIN_SPLIT_MINE; /* not at every event */
        return;
    }
    pthread_mutex_lock(&w->mu);
    w->buf = st->buf;
    w->from = g;
    w->len = st->len;
    w->job = 1;
    pthread_cond_signal(&w->go);
    pthread_mutex_unlock(&w->mu);
    st->split = 1;
    st->split_at = g;
}

/* The reader gives up on the helper's events. */
static void split_drop(kin_stream *st)
{
    if (!st->split)
        return;
    helper_wait(st->helper);
    st->split = 0;
}

/* The reader is where the helper started, between two events: the
 * helper's events follow the reader's, and the reader goes on where the
 * helper stopped. 0 once the sink has failed. */
static int split_take(kin_parser *p, kin_stream *st)
{
    kin_helper *w = st->helper;
    helper_wait(w);
    st->split = 0;
    if (!kin_queue_adopt(p->q, &w->out.pack, w->out.packed))
        return 0;
    p->cut += w->g->cut;
    st->pos = w->end;
    st->at = w->at;
    return 1;
}

/* The fast path reads the events in the window, until it needs more text
 * or YAJL's help. */
static kin_end fast_read(kin_parser *p, kin_stream *st)
{
    for (;;) {
        size_t i = st->pos, len = st->len;
        if (st->stopping && st->stop_at - st->base < len)
            len = (size_t)(st->stop_at - st->base); /* see yajl_read */
        while (i < len && blank_byte(st->buf[i]))
            i++;
        st->pos = i;
        if (st->split && i >= st->split_at) {
            if (i != st->split_at || st->at != AT_EVENT)
                split_drop(st);
            else if (!split_take(p, st))
                return END_STOPPED; /* the sink failed */
            continue;
        }
        if (i == len && st->stopping)
            return token_damage(p, st->stop_at);
        if (i == st->len) {
            if (st->ended)
                return read_end(p, st);
            refill(st);
            continue;
        }
        unsigned char c = st->buf[i];
        if (c == '{' && st->at != AT_SEPARATOR && !st->split && p->q && !st->no_helper &&
            !st->stopping && st->base + st->pos >= st->split_next) {
            split_start(p, st);
            continue; /* it may have moved and read the text: i and len anew */
        }
        if (st->at == AT_SEPARATOR && c == ',') {
            st->pos = i + 1;
            st->at = AT_EVENT;
            continue;
        }
        if (st->at != AT_EVENT && c == ']')
            return yajl_turn(p, st, TURN_DOCUMENT, 1);
        if (st->at == AT_SEPARATOR || c != '{')
            return yajl_turn(p, st, TURN_EVENT, 1);
        int depth = p->depth;
        uint64_t cut = p->cut;
        jscan_result r = kin_read_event(p, st->buf, len, &i, KIN_DEPTH_MAX - depth);
        if (r == JSCAN_DONE) {
            st->pos = i;
            st->at = AT_SEPARATOR;
            continue;
        }
        if (r == JSCAN_STOP)
            return END_STOPPED; /* the sink failed */
        /* undo the event's callbacks: YAJL or the next try starts it anew */
        p->depth = depth;
        p->cut = cut;
        p->field = F_NONE;
        if (r == JSCAN_MORE && st->stopping)
            return token_damage(p, st->stop_at);
        if (r == JSCAN_DECLINE || st->ended || (st->pos == 0 && st->len >= KIN_WINDOW))
            return yajl_turn(p, st, TURN_EVENT, 1);
        refill(st);
    }
}

static kin_end run(kin_parser *p, kin_stream *st)
{
    kin_end e = yajl_turn(p, st, TURN_DOCUMENT, 0);
    while (e == END_GO)
        e = st->h ? yajl_read(p, st) : fast_read(p, st);
    return e;
}

/* ---- the end -------------------------------------------------------------------------------- */

/* A count for the metadata's import.facts, when not 0. */
static int fact(kin_parser *p, const char *key, uint64_t n)
{
    char v[24];
    if (n == 0)
        return 1;
    snprintf(v, sizeof v, "%llu", (unsigned long long)n);
    return kin_sink_ok(p, sink_set_fact(p->s, key, v));
}

/* What is told once the events are read: held-back synchronize calls, the
 * CPU process's name, strings cut. */
static int wrap_up(kin_parser *p)
{
    while (p->npending > 0)
        if (!kin_pending_flush_one(p))
            return 0;
    const kin_proc *cpu = NULL;
    for (uint32_t i = 0; i < p->nprocs && !cpu; i++)
        if (p->has_cpu_pid ? p->procs[i].pid == p->cpu_pid : p->procs[i].labelled_cpu)
            cpu = &p->procs[i];
    if (cpu)
        sink_set_process(p->s, (uint64_t)cpu->pid, cpu->has_name ? cpu->name : NULL);
    else if (p->has_cpu_pid)
        sink_set_process(p->s, (uint64_t)p->cpu_pid, NULL);
    return fact(p, "strings_cut", p->cut) && fact(p, "syncs_from_calls", p->syncs_from_calls);
}

static prof_err set_err(prof_error *err, prof_err code, const char *fmt, const char *detail)
{
    if (err) {
        err->code = code;
        snprintf(err->message, sizeof err->message, fmt, detail);
    }
    return code;
}

/* The sink stopped: a trace past the format's limits says which in the
 * sink's words; anything else failed writing the profile. */
static prof_err sink_stopped(kin_parser *p, prof_error *err)
{
    const prof_error *why = sink_error(p->s);
    if (p->fail == PROF_ERR_LIMIT && why && why->code == PROF_ERR_LIMIT)
        return set_err(err, p->fail, "%s", why->message);
    return set_err(err, p->fail, "cannot write the profile: %s", prof_strerror(p->fail));
}

static prof_err conclude(kin_parser *p, const kin_stream *st, kin_end end, prof_error *err)
{
    if (p->fail != PROF_OK)
        return sink_stopped(p, err);
    if (end == END_IO)
        return set_err(err, PROF_ERR_IO, "cannot read: %s", strerror(st->io_errno));
    if (end == END_EMPTY)
        return set_err(err, PROF_ERR_NOT_PROF, "%s", "not a trace: no JSON document");
    if (p->not_object)
        return set_err(err, PROF_ERR_NOT_PROF, "%s", "not a trace: the JSON document is not an object");
    if (!p->seen_top)
        return set_err(err, PROF_ERR_NOT_PROF, "not JSON: %s", p->damage);
    if (!p->saw_events)
        return end == END_DAMAGED
                   ? set_err(err, PROF_ERR_CORRUPT, "damaged before any trace event: %s", p->damage)
                   : set_err(err, PROF_ERR_NOT_PROF, "%s", "not a trace: no traceEvents array");
    if (!wrap_up(p))
        return sink_stopped(p, err);
    return PROF_OK;
}

prof_err kineto_read(const char *path, import_sink *s, const import_options *o, prof_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return set_err(err, PROF_ERR_IO, "cannot open: %s", strerror(errno));
    kin_stream st = { .gz = gzdopen(fd, "rb") };
    kin_parser *p = aligned_alloc(_Alignof(kin_parser), sizeof *p); /* see kin_queue */
    st.buf = malloc(KIN_WINDOW + KIN_READ); /* see refill */
    if (p)
        memset(p, 0, sizeof *p);
    prof_err rc = PROF_ERR_NOMEM;
    if (!st.gz)
        close(fd);
    if (!st.gz || !p || !st.buf || gzbuffer(st.gz, KIN_GZ_BUFFER) != 0) {
        rc = set_err(err, PROF_ERR_NOMEM, "%s", "out of memory");
        goto out;
    }
    st.direct = gzdirect(st.gz);
    st.chunk_size = st.direct ? KIN_READ : KIN_CHUNK;
    p->s = s;
    p->tuning = o ? o->tuning : NULL;
    p->python_stacks = o && o->python_stacks;
    p->fast = !(p->tuning && p->tuning->yajl_only);
    p->out = &p->ev;
    sink_set_epoch(s, 0); /* epoch-microsecond ts, unless baseTimeNanoseconds says */
    kin_queue_start(p);
    kin_end end = run(p, &st);
    split_drop(&st);
    helper_end(&st);
    kin_queue_end(p);
    rc = conclude(p, &st, end, err);
out:
    helper_end(&st);
    if (st.h)
        yajl_free(st.h);
    if (st.gz)
        gzclose_r(st.gz);
    free(st.buf);
    free(p);
    return rc;
}
