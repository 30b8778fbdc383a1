/* jbuild.c - the sticky cJSON builder of the report and the comparison
 * (jbuild.h). */
#include <math.h>

#include "util/jbuild.h"

cJSON *jb_attach(int *ok, cJSON *parent, const char *key, cJSON *item)
{
    if (!item || !parent ||
        !(key ? cJSON_AddItemToObject(parent, key, item) : cJSON_AddItemToArray(parent, item))) {
        cJSON_Delete(item);
        *ok = 0;
        return NULL;
    }
    return item;
}

cJSON *jb_num(int *ok, cJSON *parent, const char *key, double v)
{
    return jb_attach(ok, parent, key, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
}

cJSON *jb_str(int *ok, cJSON *parent, const char *key, const char *v)
{
    return jb_attach(ok, parent, key, cJSON_CreateString(v ? v : ""));
}

cJSON *jb_bool(int *ok, cJSON *parent, const char *key, int v)
{
    return jb_attach(ok, parent, key, cJSON_CreateBool(v != 0));
}

cJSON *jb_null(int *ok, cJSON *parent, const char *key)
{
    return jb_attach(ok, parent, key, cJSON_CreateNull());
}

cJSON *jb_obj(int *ok, cJSON *parent, const char *key)
{
    return jb_attach(ok, parent, key, cJSON_CreateObject());
}

cJSON *jb_arr(int *ok, cJSON *parent, const char *key)
{
    return jb_attach(ok, parent, key, cJSON_CreateArray());
}
