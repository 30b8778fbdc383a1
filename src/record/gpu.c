/* gpu.c - the hook where CUDA capture plugs in. This build has no CUPTI:
 * a request for CUDA capture is recorded in the metadata as not built in,
 * said once as a warning (rt_report), and nothing GPU-related is recorded. cupti.c (built
 * when CUDA is found, with -DPROF_HAVE_CUPTI) provides these functions
 * instead. */
#include <errno.h>

#include <cjson/cJSON.h>

#include "format/meta_keys.h"
#include "record/runtime.h"

#ifndef PROF_HAVE_CUPTI

static int warned; /* the one warning, once per process */

int rt_gpu_start(const rt_config *c)
{
    if (!c->cuda)
        return 0;
    if (!warned) {
        warned = 1;
        rt_report(PROF_MSG_WARNING, "CUDA capture off: libprof was built without CUPTI");
    }
    return -ENOTSUP;
}

void rt_gpu_stop(void)
{
}

int rt_gpu_step(uint64_t now_ns, int next_sampled, rt_gpu_sample *out, int max)
{
    (void)now_ns;
    (void)next_sampled;
    (void)out;
    (void)max;
    return 0;
}

void rt_gpu_write(void)
{
}

void rt_gpu_metadata(const rt_config *c, cJSON *meta)
{
    if (!c->cuda)
        return;
    cJSON *o = cJSON_AddObjectToObject(meta, MK_CUDA);
    if (o) {
        cJSON_AddBoolToObject(o, MK_REQUESTED, 1);
        cJSON_AddBoolToObject(o, MK_ACTIVE, 0);
        cJSON_AddStringToObject(o, MK_REASON, "libprof was built without CUPTI");
    }
}

#endif
