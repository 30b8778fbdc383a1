/* schema_check.c - a JSON Schema checker for the subset of draft 2020-12
 * that formats/report.schema.json uses (see schema_check.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_check.h"
#include "util/vec.h"

typedef struct sc {
    const cJSON *root;
    char *why;
    size_t size;
} sc;

static int check(sc *c, const cJSON *schema, const cJSON *v, const char *path);

static int fail(sc *c, const char *path, const char *what)
{
    snprintf(c->why, c->size, "%s: %s", path[0] ? path : "(root)", what);
    return 0;
}

static const cJSON *resolve(sc *c, const cJSON *schema)
{
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(schema, "$ref");
    const char *r = cJSON_GetStringValue(ref);
    if (!r || strncmp(r, "#/$defs/", 8) != 0)
        return schema;
    const cJSON *defs = cJSON_GetObjectItemCaseSensitive(c->root, "$defs");
    return cJSON_GetObjectItemCaseSensitive(defs, r + 8);
}

static int is_type(const cJSON *v, const char *t)
{
    if (strcmp(t, "object") == 0)
        return cJSON_IsObject(v);
    if (strcmp(t, "array") == 0)
        return cJSON_IsArray(v);
    if (strcmp(t, "string") == 0)
        return cJSON_IsString(v);
    if (strcmp(t, "boolean") == 0)
        return cJSON_IsBool(v);
    if (strcmp(t, "null") == 0)
        return cJSON_IsNull(v);
    if (strcmp(t, "number") == 0)
        return cJSON_IsNumber(v);
    if (strcmp(t, "integer") == 0)
        return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble);
    return 0;
}

static int same(const cJSON *a, const cJSON *b)
{
    return cJSON_Compare(a, b, 1);
}

static int check_type(sc *c, const cJSON *schema, const cJSON *v, const char *path)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(schema, "type");
    if (!t)
        return 1;
    if (cJSON_IsString(t))
        return is_type(v, t->valuestring) ? 1 : fail(c, path, t->valuestring);
    const cJSON *e;
    cJSON_ArrayForEach(e, t) if (cJSON_IsString(e) && is_type(v, e->valuestring)) return 1;
    return fail(c, path, "none of the allowed types");
}

static int check_values(sc *c, const cJSON *schema, const cJSON *v, const char *path)
{
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(schema, "const");
    if (k && !same(k, v))
        return fail(c, path, "not the const value");
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(schema, "enum"), *e;
    if (en) {
        int found = 0;
        cJSON_ArrayForEach(e, en) found |= same(e, v);
        if (!found)
            return fail(c, path, "not in enum");
    }
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(schema, "minimum");
    const cJSON *mx = cJSON_GetObjectItemCaseSensitive(schema, "maximum");
    if (cJSON_IsNumber(v) && mn && v->valuedouble < mn->valuedouble)
        return fail(c, path, "below minimum");
    if (cJSON_IsNumber(v) && mx && v->valuedouble > mx->valuedouble)
        return fail(c, path, "above maximum");
    return 1;
}

static int check_object(sc *c, const cJSON *schema, const cJSON *v, const char *path)
{
    if (!cJSON_IsObject(v))
        return 1;
    char sub[512];
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(schema, "required"), *e;
    cJSON_ArrayForEach(e, req) {
        if (cJSON_IsString(e) && !cJSON_GetObjectItemCaseSensitive(v, e->valuestring)) {
            snprintf(sub, sizeof sub, "missing required '%s'", e->valuestring);
            return fail(c, path, sub);
        }
    }
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
    const cJSON *extra = cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
    cJSON_ArrayForEach(e, v) {
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(props, e->string);
        snprintf(sub, sizeof sub, "%s.%s", path, e->string);
        if (ps && !check(c, ps, e, sub))
            return 0;
        if (!ps && cJSON_IsObject(extra) && !check(c, extra, e, sub))
            return 0;
        if (!ps && cJSON_IsFalse(extra))
            return fail(c, sub, "property not allowed");
    }
    return 1;
}

static int check_array(sc *c, const cJSON *schema, const cJSON *v, const char *path)
{
    if (!cJSON_IsArray(v))
        return 1;
    int n = cJSON_GetArraySize(v);
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(schema, "minItems");
    const cJSON *mx = cJSON_GetObjectItemCaseSensitive(schema, "maxItems");
    if (mn && n < mn->valueint)
        return fail(c, path, "too few items");
    if (mx && n > mx->valueint)
        return fail(c, path, "too many items");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(schema, "items"), *e;
    if (!items)
        return 1;
    int i = 0;
    char sub[512];
    cJSON_ArrayForEach(e, v) {
        snprintf(sub, sizeof sub, "%s[%d]", path, i++);
        if (!check(c, items, e, sub))
            return 0;
    }
    return 1;
}

static int check_one_of(sc *c, const cJSON *schema, const cJSON *v, const char *path)
{
    const cJSON *alts = cJSON_GetObjectItemCaseSensitive(schema, "oneOf"), *e;
    if (!alts)
        return 1;
    int matches = 0;
    char first[512] = "", *keep = c->why;
    size_t keep_size = c->size;
    cJSON_ArrayForEach(e, alts) {
        char why[512] = "";
        c->why = why;
        c->size = sizeof why;
        if (check(c, e, v, path))
            matches++;
        else if (!first[0])
            snprintf(first, sizeof first, "%s", why);
    }
    c->why = keep;
    c->size = keep_size;
    if (matches == 1)
        return 1;
    return fail(c, path, matches ? "matches several oneOf schemas" : first);
}

static int check(sc *c, const cJSON *schema, const cJSON *v, const char *path)
{
    schema = resolve(c, schema);
    if (!schema)
        return fail(c, path, "unresolved $ref");
    return check_type(c, schema, v, path) && check_values(c, schema, v, path) &&
           check_object(c, schema, v, path) && check_array(c, schema, v, path) &&
           check_one_of(c, schema, v, path);
}

int schema_check(const cJSON *root, const cJSON *schema, const cJSON *value, char *why,
                 size_t size)
{
    sc c = { root, why, size };
    if (size)
        why[0] = '\0';
    return check(&c, schema, value, "");
}

cJSON *schema_load(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (vec_grow(&buf, &cap, len + 4096, 1) < 0) /* 4096 bytes and a NUL */
            break;
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    if (!buf)
        return NULL;
    buf[len] = '\0';
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    return j;
}
