/* mhd_api.c - loads libmicrohttpd when `prof view` serves (mhd_api.h says
 * why it is not linked). */
#include "output/mhd_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Its run-time name (the SONAME of the library prof was built against, when
 * the build could read it), then the names it has had since 2014. */
static const char *const mhd_names[] = {
#ifdef PROF_MHD_SONAME
    PROF_MHD_SONAME,
#endif
    "libmicrohttpd.so.12",
    "libmicrohttpd.so",
};

#define MHD_LOAD(field, sym) (*(void **)&api->field = dlsym(api->handle, (sym))) != NULL

prof_err mhd_api_load(mhd_api *api, prof_error *err)
{
    memset(api, 0, sizeof *api);
    char why[200] = "not found"; /* the first name's reason: the others repeat it */
    for (size_t i = 0; !api->handle && i < sizeof mhd_names / sizeof *mhd_names; i++) {
        if (i > 0 && strcmp(mhd_names[i], mhd_names[0]) == 0)
            continue;
        api->handle = dlopen(mhd_names[i], RTLD_NOW | RTLD_LOCAL);
        const char *e = api->handle ? NULL : dlerror(); /* valid until the next dlopen */
        if (i == 0 && e)
            snprintf(why, sizeof why, "%s", e);
    }
    if (!api->handle)
        return prof_error_set(err, PROF_ERR_UNSUPPORTED, "cannot load libmicrohttpd (%s)", why);
    if (MHD_LOAD(start_daemon, "MHD_start_daemon") && MHD_LOAD(stop_daemon, "MHD_stop_daemon") &&
        MHD_LOAD(create_response_from_buffer, "MHD_create_response_from_buffer") &&
        MHD_LOAD(add_response_header, "MHD_add_response_header") &&
        MHD_LOAD(queue_response, "MHD_queue_response") &&
        MHD_LOAD(destroy_response, "MHD_destroy_response") &&
        MHD_LOAD(lookup_connection_value, "MHD_lookup_connection_value"))
        return PROF_OK;
    mhd_api_unload(api);
    return prof_error_set(err, PROF_ERR_UNSUPPORTED,
                          "libmicrohttpd lacks a function prof needs (too old a version)");
}

void mhd_api_unload(mhd_api *api)
{
    if (api->handle)
        dlclose(api->handle);
    memset(api, 0, sizeof *api);
}
