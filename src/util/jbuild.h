/* jbuild.h - building a cJSON document whose allocation failures are
 * sticky: every call takes the builder's flag, clears it when anything
 * fails (and frees what it made), returns NULL then, and accepts a NULL
 * parent, which fails. Code that builds a report or a comparison thus
 * reads straight through and checks the flag once at the end. A NULL key
 * appends to an array; numbers that are not finite become null; a NULL
 * string becomes "". */
#ifndef PROF_UTIL_JBUILD_H
#define PROF_UTIL_JBUILD_H

#include <cjson/cJSON.h>

cJSON *jb_attach(int *ok, cJSON *parent, const char *key, cJSON *item);
cJSON *jb_num(int *ok, cJSON *parent, const char *key, double v);
cJSON *jb_str(int *ok, cJSON *parent, const char *key, const char *v);
cJSON *jb_bool(int *ok, cJSON *parent, const char *key, int v);
cJSON *jb_null(int *ok, cJSON *parent, const char *key);
cJSON *jb_obj(int *ok, cJSON *parent, const char *key);
cJSON *jb_arr(int *ok, cJSON *parent, const char *key);

#endif /* PROF_UTIL_JBUILD_H */
