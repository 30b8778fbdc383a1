/* intern.c - the process-wide string table behind prof_intern and the
 * by-name calls, and the classes of its names (prof_name_class). Ids start
 * at 1 (0 is invalid) and live as long as the process, across sessions.
 * Copies sit in pages that never move and the id → copy table is two-level
 * with pages published atomically, so the writer, the hot path's cache
 * check and the crash path read strings without the lock; only inserting
 * takes it, and the index from content to id (util/hmap, by FNV-1a hash)
 * is used under it alone. Classes are a log of changes in pages published the same way,
 * which every session writes from its start. */
#include <stdlib.h>
#include <string.h>

#include "record/runtime.h"
#include "util/hmap.h"

#define IDS_PER_PAGE 4096u
#define ID_PAGES (PF_STRING_IDS / IDS_PER_PAGE)
#define ARENA_PAGE (64u << 10)
#define ARENA_BIG (ARENA_PAGE / 4) /* longer strings get their own block */

#define ATTRS_PER_PAGE 4096u
#define ATTR_PAGES (RT_ATTR_MAX / ATTRS_PER_PAGE)

typedef struct str_entry {
    const char *s;
    uint32_t len;
    uint32_t cls;      /* string id of its class, 0 none (mu)               */
} str_entry;

static struct {
    pthread_mutex_t mu;
    str_entry *_Atomic pages[ID_PAGES];  /* id → entry, page by page         */
    hmap index;                          /* content hash → id (mu)           */
    char *arena;                         /* current arena page (mu)          */
    size_t arena_left;
    _Atomic uint32_t nattrs;             /* attrs[0..nattrs) exist           */
    rt_attr *_Atomic attrs[ATTR_PAGES];  /* class changes, page by page      */
} tab = { .mu = PTHREAD_MUTEX_INITIALIZER };

_Atomic uint32_t rt_nstrings; /* written under tab.mu */

/* The count as the holder of tab.mu sees it. */
static uint32_t count_locked(void)
{
    return atomic_load_explicit(&rt_nstrings, memory_order_relaxed);
}

static str_entry *entry_of(uint32_t id)
{
    str_entry *page = atomic_load_explicit(&tab.pages[id / IDS_PER_PAGE], memory_order_acquire);
    return page ? &page[id % IDS_PER_PAGE] : NULL;
}

const char *rt_intern_get(uint32_t id, uint32_t *len)
{
    if (id == 0 || id > rt_intern_count())
        return NULL;
    str_entry *e = entry_of(id);
    if (!e)
        return NULL;
    if (len)
        *len = e->len;
    return e->s;
}

/* A stable NUL-terminated copy; never freed (ids outlive sessions). */
static char *copy_string(const char *s, size_t len)
{
    char *p;
    if (len + 1 > ARENA_BIG) {
        if (!(p = malloc(len + 1)))
            return NULL;
    } else {
        if (tab.arena_left < len + 1) {
            if (!(tab.arena = malloc(ARENA_PAGE)))
                return NULL;
            tab.arena_left = ARENA_PAGE;
        }
        p = tab.arena;
        tab.arena += len + 1;
        tab.arena_left -= len + 1;
    }
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

typedef struct str_key {
    const char *s;
    size_t len;
} str_key;

/* The index's equality: whether id's string is the key looked up. */
static int same_string(const void *ctx, uint32_t id)
{
    const str_key *k = ctx;
    const str_entry *e = entry_of(id);
    return e->len == k->len && memcmp(e->s, k->s, k->len) == 0;
}

/* The hash of id's string, where the index moves it when it grows. */
static uint64_t string_hash(const void *ctx, uint32_t id)
{
    const str_entry *e = entry_of(id);
    (void)ctx;
    return hash_fnv1a(e->s, e->len);
}

/* A new id for s, or 0. */
static uint32_t insert(const char *s, size_t len)
{
    uint32_t id = count_locked() + 1;
    if (id >= PF_STRING_IDS || len > UINT32_MAX)
        return 0;
    if (!entry_of(id)) {
        str_entry *page = calloc(IDS_PER_PAGE, sizeof *page);
        if (!page)
            return 0;
        atomic_store_explicit(&tab.pages[id / IDS_PER_PAGE], page, memory_order_release);
    }
    char *copy = copy_string(s, len);
    if (!copy)
        return 0;
    *entry_of(id) = (str_entry){ copy, (uint32_t)len, 0 };
    /* Publishing the count last makes the entry visible to lock-free
     * readers (the writer defines ids up to the count it loads). */
    atomic_store_explicit(&rt_nstrings, id, memory_order_release);
    return id;
}

uint32_t rt_intern(const char *s, size_t len, uint64_t hash)
{
    str_key key = { s, len };
    int added;
    uint32_t id = 0;
    pthread_mutex_lock(&tab.mu);
    uint32_t *slot = hmap_slot_by(&tab.index, hash, same_string, string_hash, &key, &added);
    if (slot && !added)
        id = *slot;
    else if (slot && (id = insert(s, len)) != 0)
        *slot = id;
    else if (slot)
        hmap_remove_by(&tab.index, slot, string_hash, &key); /* no id: the key is not kept */
    pthread_mutex_unlock(&tab.mu);
    return id;
}

/* The by-name lookup after both per-thread caches missed: intern, then
 * remember the answer in both. */
uint32_t rt_name_miss(rt_thread *t, const char *name)
{
    size_t len;
    uint64_t h = hash_fnv1a_str(name, &len);
    rt_str_slot *ss = &t->str_cache[(h >> 40) & (RT_STR_CACHE - 1)];
    uint32_t id;
    if (ss->hash == h && ss->len == len && memcmp(ss->copy, name, len) == 0) {
        id = ss->id;
    } else {
        if (len > UINT32_MAX || !(id = rt_intern(name, len, h)))
            return 0;
        *ss = (rt_str_slot){ h, rt_intern_get(id, NULL), (uint32_t)len, id };
    }
    rt_ptr_slot *ps = rt_ptr_slot_of(t, name);
    *ps = (rt_ptr_slot){ name, ss->copy, id };
    return id;
}

/* ---- classes ---------------------------------------------------------------- */

uint32_t rt_attr_count(void)
{
    return atomic_load_explicit(&tab.nattrs, memory_order_acquire);
}

const rt_attr *rt_attr_get(uint32_t i)
{
    if (i >= rt_attr_count())
        return NULL;
    rt_attr *page = atomic_load_explicit(&tab.attrs[i / ATTRS_PER_PAGE], memory_order_acquire);
    return page ? &page[i % ATTRS_PER_PAGE] : NULL;
}

/* Appends a change of name's class to the log (mu held). 0, or -1 when the
 * log is full or out of memory. */
static int attr_append(uint32_t name, uint32_t cls)
{
    uint32_t i = atomic_load_explicit(&tab.nattrs, memory_order_relaxed);
    if (i >= RT_ATTR_MAX)
        return -1;
    rt_attr *page = atomic_load_explicit(&tab.attrs[i / ATTRS_PER_PAGE], memory_order_relaxed);
    if (!page) {
        if (!(page = calloc(ATTRS_PER_PAGE, sizeof *page)))
            return -1;
        atomic_store_explicit(&tab.attrs[i / ATTRS_PER_PAGE], page, memory_order_release);
    }
    page[i % ATTRS_PER_PAGE] = (rt_attr){ name, PF_ATTR_CLASS, cls };
    /* Published last, as the string count: the writer reads up to it. */
    atomic_store_explicit(&tab.nattrs, i + 1, memory_order_release);
    return 0;
}

/* Only a change is logged: instrumenting the same model twice, or again
 * in a later session, adds nothing. */
static void name_class(uint32_t name, uint32_t cls)
{
    pthread_mutex_lock(&tab.mu);
    str_entry *e = name && name <= count_locked() ? entry_of(name) : NULL;
    if (e && e->cls != cls && attr_append(name, cls) == 0)
        e->cls = cls;
    pthread_mutex_unlock(&tab.mu);
}

void prof_name_class(const char *name, const char *cls)
{
    prof_name n = prof_intern(name), c = prof_intern(cls);
    if (n && c)
        name_class(n, c);
}

void rt_intern_lock(void)
{
    pthread_mutex_lock(&tab.mu);
}

void rt_intern_unlock(void)
{
    pthread_mutex_unlock(&tab.mu);
}

prof_name prof_intern(const char *name)
{
    size_t len;
    if (!name)
        return 0;
    uint64_t h = hash_fnv1a_str(name, &len);
    return len > UINT32_MAX ? 0 : rt_intern(name, len, h);
}
