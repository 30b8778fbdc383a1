/* html.c - the static HTML report: the viewer's own page (viewer/index.html)
 * with its stylesheet and script inlined and the report data embedded as a
 * JSON data block, so the file is the dashboard without a server. The data
 * is escaped for its <script> element; the page puts every string from the
 * profile into the document as text, never as markup. */
#include "output/html.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/report_json.h"
#include "output/viewer_assets.h"
#include "util/error.h"

/* The two tags of viewer/index.html that the static file replaces. */
static const char css_tag[] = "<link rel=\"stylesheet\" href=\"/app.css\">";
static const char js_tag[] = "<script src=\"/app.js\"></script>";

/* Outside loads forbidden; the inline stylesheet and script allowed (the
 * file has no server to serve them separately). */
static const char csp_meta[] =
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
    "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'\">\n";

const viewer_asset *viewer_asset_find(const char *path)
{
    for (const viewer_asset *a = viewer_assets; a->path; a++)
        if (strcmp(a->path, path) == 0)
            return a;
    return NULL;
}

int html_write_script_json(FILE *out, const char *json)
{
    for (const unsigned char *p = (const unsigned char *)json; *p; p++) {
        const char *esc = NULL;
        if (*p == '<')
            esc = "\\u003c";
        else if (*p == '>')
            esc = "\\u003e";
        else if (*p == '&')
            esc = "\\u0026";
        else if (p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9)) {
            esc = p[2] == 0xA8 ? "\\u2028" : "\\u2029";
            p += 2;
        }
        if (esc ? fputs(esc, out) == EOF : putc(*p, out) == EOF)
            return EOF;
    }
    return 0;
}

char *view_document(const cJSON *const *reports, size_t n, const cJSON *compare, prof_error *err)
{
    /* Each report written as `prof analyze --format json` writes it, so the
     * page shows exactly the numbers of the JSON report. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        prof_error_set(err, PROF_ERR_NOMEM, "out of memory writing the page data");
        return NULL;
    }
    int bad = fputs("{\"reports\":[", f) == EOF;
    for (size_t i = 0; !bad && i < n; i++)
        bad = (i && putc(',', f) == EOF) || report_render_json(f, reports[i]) != PROF_OK;
    bad = bad || fputs("],\"compare\":", f) == EOF ||
          (compare ? report_render_json(f, compare) != PROF_OK : fputs("null", f) == EOF) ||
          putc('}', f) == EOF;
    if ((fclose(f) != 0) | bad) {
        free(text);
        prof_error_set(err, PROF_ERR_NOMEM, "out of memory writing the page data");
        return NULL;
    }
    return text;
}

/* The asset's text, or NULL when it would end its inline element early. */
static const char *inlinable(const char *path, const char *closing)
{
    const viewer_asset *a = viewer_asset_find(path);
    if (!a || strstr((const char *)a->data, closing))
        return NULL;
    return (const char *)a->data;
}

static int write_span(FILE *out, const char *from, const char *to)
{
    size_t n = (size_t)(to - from);
    return fwrite(from, 1, n, out) == n ? 0 : EOF;
}

prof_err view_render_html(FILE *out, const cJSON *const *reports, size_t n, const cJSON *compare,
                          prof_error *err)
{
    const viewer_asset *page = viewer_asset_find("/index.html");
    const char *css = inlinable("/app.css", "</style");
    const char *js = inlinable("/app.js", "</script");
    const char *html = page ? (const char *)page->data : NULL;
    const char *at_css = html ? strstr(html, css_tag) : NULL;
    const char *at_js = at_css ? strstr(at_css, js_tag) : NULL;
    if (!css || !js || !at_js || n == 0)
        return prof_error_set(err, PROF_ERR_INVALID, "the built-in page is malformed");
    char *data = view_document(reports, n, compare, err);
    if (!data)
        return PROF_ERR_NOMEM;
    int bad = write_span(out, html, at_css) || fputs(csp_meta, out) == EOF ||
              fputs("<style>\n", out) == EOF || fputs(css, out) == EOF ||
              fputs("</style>", out) == EOF ||
              write_span(out, at_css + strlen(css_tag), at_js) ||
              fputs("<script type=\"application/json\" id=\"prof-data\">", out) == EOF ||
              html_write_script_json(out, data) || fputs("</script>\n<script>\n", out) == EOF ||
              fputs(js, out) == EOF || fputs("</script>", out) == EOF ||
              fputs(at_js + strlen(js_tag), out) == EOF;
    free(data);
    if (bad || ferror(out))
        return prof_error_set(err, PROF_ERR_IO, "cannot write the HTML report: %s",
                              strerror(errno ? errno : EIO));
    return PROF_OK;
}

prof_err report_render_html(FILE *out, const cJSON *report, const cJSON *compare,
                            prof_error *err)
{
    const cJSON *one[1] = { report };
    return view_render_html(out, one, 1, compare, err);
}
