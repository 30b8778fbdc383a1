/* gpu.c - the hook where CUDA capture plugs in. This build has no CUPTI:
 * a request for CUDA capture is recorded in the metadata as not built in,
 * and nothing GPU-related is recorded. cupti.c (built when CUDA is found,
 * with -DPROF_HAVE_CUPTI) provides these three functions instead. */
#include <errno.h>

#include <cjson/cJSON.h>

#include "record/runtime.h"

#ifndef PROF_HAVE_CUPTI

int rt_gpu_start(const rt_config *c)
{
    return c->cuda ? -ENOTSUP : 0;
}

void rt_gpu_stop(void)
{
}

void rt_gpu_metadata(const rt_config *c, cJSON *meta)
{
    if (!c->cuda)
        return;
    cJSON *o = cJSON_AddObjectToObject(meta, "cuda");
    if (o) {
        cJSON_AddBoolToObject(o, "requested", 1);
        cJSON_AddBoolToObject(o, "active", 0);
        cJSON_AddStringToObject(o, "reason", "libprof was built without CUPTI");
    }
}

#endif
