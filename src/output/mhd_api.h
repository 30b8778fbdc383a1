/* mhd_api.h - libmicrohttpd's functions, loaded with dlopen by the viewer's
 * server when it starts, not linked into prof: linked in, libmicrohttpd and
 * the TLS libraries it brings (gnutls and eight more) cost every prof
 * command about 8 ms to load and initialize, though only `prof view`
 * serves. The header still decides the types, so each pointer has exactly
 * its function's type. */
#ifndef PROF_OUTPUT_MHD_API_H
#define PROF_OUTPUT_MHD_API_H

#include <microhttpd.h>

#include "util/error.h"

typedef struct mhd_api {
    void *handle;
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_destroy_response) *destroy_response;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
} mhd_api;

/* Loads the library and its functions into *api; PROF_ERR_UNSUPPORTED, with
 * what was missing and how to get it, when it cannot. */
prof_err mhd_api_load(mhd_api *api, prof_error *err);

void mhd_api_unload(mhd_api *api);

#endif
