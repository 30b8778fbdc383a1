/* csvout.c - RFC 4180 fields for the CSV tables (see csvout.h). */
#include <string.h>

#include "output/csvout.h"
#include "output/report_json.h"

void csvout_text(FILE *out, const char *s)
{
    if (!s)
        return;
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void csvout_value(FILE *out, const cJSON *v)
{
    char num[REPORT_NUM_BUF];
    if (cJSON_IsNumber(v))
        fputs(report_number(num, v->valuedouble), out);
    else if (cJSON_IsString(v))
        csvout_text(out, v->valuestring);
    else if (cJSON_IsBool(v))
        fputs(cJSON_IsTrue(v) ? "true" : "false", out);
}
