/* names.c - display names of event types and of the kinds stored in
 * profiles, shared by every renderer so that outputs agree. */
#include "prof_reader.h"

const char *prof_event_type_name(prof_event_type t)
{
    switch (t) {
    case PROF_EV_REGION: return "region";
    case PROF_EV_STEP: return "step";
    case PROF_EV_MEMORY: return "memory";
    case PROF_EV_COUNTER: return "counter";
    case PROF_EV_MARK: return "mark";
    case PROF_EV_GPU_KERNEL: return "gpu_kernel";
    case PROF_EV_GPU_MEMCPY: return "gpu_memcpy";
    case PROF_EV_GPU_MEMSET: return "gpu_memset";
    case PROF_EV_SYNC: return "sync";
    case PROF_EV_API: return "api";
    case PROF_EV_DROPPED: return "dropped";
    case PROF_EV_THREAD: return "thread";
    case PROF_EV_ATTR: return "attr";
    }
    return "unknown";
}

const char *prof_kind_name(uint32_t kind)
{
    static const char *const names[] = { "compute", "data", "sync", "comm", "io" };
    return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

const char *prof_copy_kind_name(uint32_t kind)
{
    static const char *const names[] = { "other", "HtoD", "DtoH", "DtoD", "HtoH", "peer" };
    return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

const char *prof_sync_kind_name(uint32_t kind)
{
    static const char *const names[] = { "other", "device", "stream", "event", "stream_wait",
                                         "memcpy" };
    return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}
