/* schema_check.h - checks a cJSON value against a JSON Schema (draft
 * 2020-12) for the keywords formats/report.schema.json uses: type, const,
 * enum, required, properties, additionalProperties, items, minItems,
 * maxItems, minimum, maximum, oneOf and local $ref ("#/$defs/NAME").
 * Other keywords are ignored. For tests: the report must match its schema. */
#ifndef PROF_TESTS_SCHEMA_CHECK_H
#define PROF_TESTS_SCHEMA_CHECK_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* 1 when value matches schema (root is the document $ref resolves against);
 * else 0 with the first failure's JSON path and reason in why. */
int schema_check(const cJSON *root, const cJSON *schema, const cJSON *value, char *why,
                 size_t size);

/* Reads and parses a JSON file; NULL on failure. */
cJSON *schema_load(const char *path);

#endif
