/* viewer_assets.h - the dashboard's files (viewer/index.html, app.css,
 * app.js), compiled into prof by tools/embed.sh at build time. */
#ifndef PROF_OUTPUT_VIEWER_ASSETS_H
#define PROF_OUTPUT_VIEWER_ASSETS_H

#include <stddef.h>

typedef struct viewer_asset {
    const char *path;          /* "/app.js"; NULL ends the table         */
    const char *content_type;
    const unsigned char *data; /* NUL-terminated, size bytes before it  */
    size_t size;
} viewer_asset;

extern const viewer_asset viewer_assets[];

/* The asset served at path ("/index.html"), or NULL. */
const viewer_asset *viewer_asset_find(const char *path);

#endif
