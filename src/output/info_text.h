/* info_text.h - renders a profile_summary as the text of `prof info`. */
#ifndef PROF_OUTPUT_INFO_TEXT_H
#define PROF_OUTPUT_INFO_TEXT_H

#include <stdio.h>

#include "model/summary.h"

/* @return PROF_OK, or PROF_ERR_IO when writing to out failed. */
prof_err info_render_text(FILE *out, const char *path, const profile_summary *s);

#endif
