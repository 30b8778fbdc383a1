#!/usr/bin/env python3
"""check_report_keys.py - keeps src/analysis/report_keys.h the one home of
the member names the analysis hands the views, and src/format/meta_keys.h
the one home of those of a profile's metadata (tests/cli/report_keys.sh
runs it from the repository root with every C file of src/ and cmd/):

1. each header holds nothing but its comments, its guard (report_keys.h
   also its include of meta_keys.h) and one `#define RK_NAME "name"`
   (meta_keys.h: MK_NAME) a line, sorted, each macro named after its
   string;
2. the RK_ names are exactly the property names that
   formats/report.schema.json and formats/compare.schema.json declare;
3. each MK_ name is a metadata field of the format's documents
   (formats/prof-format.md section 4, the importers' "import" object);
4. no C file spells such a name as a string literal where a member name
   goes (the key arguments of the JSON helpers, KEY_ARGS below): in
   src/analysis and src/output the builder writes RK_ names (the other
   members it writes are a rule's own evidence) and the builder and the
   renderers read RK_ and MK_ names; the metadata's writers (META_WRITERS)
   write MK_ names and nothing else; the query's tables (src/query) write
   rows keyed by their own columns (src/query/tables.c) and read RK_ and
   MK_ names; every other file reads and writes
   MK_ names, and reads RK_ names (a command reading the report);
5. the dashboard's script (viewer/js/*.js) reads no member (`x.name`, or a snake_case string such as
   a table column 'self_ns') that is neither in the header, nor a value the
   schemas name, nor one of the names the page itself owns (PAGE_NAMES).

Prints one line per problem and exits 1 when there is one; else prints
what it checked and exits 0."""
import glob
import json
import re
import sys

HEADER = "src/analysis/report_keys.h"
META_HEADER = "src/format/meta_keys.h"
# the files that write a profile's metadata: every member they write is
# one of META_HEADER's
META_WRITERS = {"src/record/meta.c", "src/record/cupti.c", "src/record/gpu.c",
                "src/import/sink_meta.c"}
SCHEMAS = ["formats/report.schema.json", "formats/compare.schema.json"]
FORMAT_DOCS = ["formats/prof-format.md", "formats/kineto-import.md", "formats/nsys-import.md"]
VIEWER = "viewer/js"  # the parts of the dashboard's script

# The arguments that are member names, by function: (indexes, reads). A
# write's member is the builder's, a read's may be the metadata's too.
KEY_ARGS = {
    # the report builder (src/analysis/jsonout.c, leak.c, report.c)
    "jnum": ([2], False), "jstr": ([2], False), "jbool": ([2], False),
    "jnull": ([2], False), "jobj": ([2], False), "jarr": ([2], False),
    "report_others": ([2], False), "put_step": ([2], False), "put_rate": ([2, 3], False),
    "cJSON_AddItemToObject": ([1], False), "cJSON_AddStringToObject": ([1], False),
    "cJSON_AddNumberToObject": ([1], False), "cJSON_AddBoolToObject": ([1], False),
    "cJSON_AddNullToObject": ([1], False), "cJSON_AddObjectToObject": ([1], False),
    "cJSON_AddArrayToObject": ([1], False), "cJSON_AddRawToObject": ([1], False),
    # the metadata's writers (src/record/meta.c, src/import/sink_meta.c)
    "add_u64": ([1], False), "add_counted": ([1], False),
    # the metadata's readers (src/model/runset.c)
    "meta_num": ([1], True),
    # the comparison (src/analysis/compare.c)
    "attach": ([2], False), "put_num": ([2], False), "put_opt": ([2], False),
    "put_str": ([2], False), "put_bool": ([2], False), "put_obj": ([2], False),
    "put_arr": ([2], False), "add_change": ([2], True), "op_side_mean": ([2], True),
    "get_num": ([1], True), "num_or": ([1], True), "str_or": ([1], True),
    "get_path": ([1, 2, 3], True), "config_of": ([1], True), "find_named": ([1], True),
    # cJSON, and the renderers' readers
    "cJSON_GetObjectItemCaseSensitive": ([1], True), "cJSON_GetObjectItem": ([1], True),
    "cJSON_HasObjectItem": ([1], True), "get": ([1], True), "num": ([1], True),
    "str": ([1], True), "has": ([1], True), "json_num": ([1], True), "json_str": ([1], True),
    "textout_name_width": ([2], True), "percent": ([2], True), "p_value": ([2], True),
    "render_slope": ([2], True), "put_values": ([3, 4, 5], True), "put_rows": ([2], True),
    "put_header": ([1], True),
}

# What the dashboard's script reads that is the page's own: the DOM's and the
# language's properties, the page's objects (charts, scales, boxes, rows it
# builds), and the dashboard's own documents (the page data {reports,
# compare} of src/output/html.c, the time windows of src/output/timeline.c).
PAGE_NAMES = {
    # JavaScript and the DOM
    "PI", "length", "body", "clientWidth", "clientX", "clientY", "deltaY", "firstChild",
    "hash", "height", "hidden", "id", "innerHeight", "innerWidth", "key", "left", "style",
    "textContent", "top", "width", "ok", "message", "size", "background", "margin", "search",
    "maxWidth",
    # the page's objects: charts' options and series, boxes, scales, table rows
    "a", "b", "d", "h", "l", "r", "w", "x", "y", "pts", "hlines", "marks", "markers", "dash",
    "label", "noTip", "hideLine", "xKind", "xInteger", "yKind", "xLabel", "yLabel", "yZero", "_redraw",
    "other", "depth", "rel", "integer", "focus", "a_ns", "a_self_ns", "b_self_ns", "delta_ns",
    # the dashboard's own documents
    "reports", "compare", "lanes", "names", "t0_ns", "t1_ns",
}

problems = []


def problem(msg):
    problems.append(msg)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# ---- 1. the header ------------------------------------------------------------------

def parse_header(path, prefix, allowed):
    """The defines of prefix in the header at path, by name; allowed: the
    lines besides comments and defines it may hold."""
    table, order = {}, []
    in_comment = False
    for no, line in enumerate(read(path).splitlines(), 1):
        s = line.strip()
        if in_comment:
            in_comment = "*/" not in s
            continue
        if s.startswith("/*"):
            in_comment = "*/" not in s
            continue
        if s == "" or s in allowed:
            continue
        m = re.fullmatch(r'#define (' + prefix + r'[A-Z0-9_]+) +"([a-z0-9_]+)"', s)
        if not m:
            problem(f"{path}:{no}: not a key define: {s}")
            continue
        macro, name = m.groups()
        if macro != prefix + name.upper():
            problem(f"{path}:{no}: {macro} should be named {prefix + name.upper()}")
        if name in table:
            problem(f"{path}:{no}: {name} twice")
        table[name] = macro
        order.append(name)
    if order != sorted(order):
        problem(f"{path}: the {prefix} defines are not in order")
    return table


def parse_headers():
    rk = parse_header(HEADER, "RK_", {"#ifndef PROF_ANALYSIS_REPORT_KEYS_H",
                                      "#define PROF_ANALYSIS_REPORT_KEYS_H",
                                      '#include "format/meta_keys.h"', "#endif"})
    mk = parse_header(META_HEADER, "MK_", {"#ifndef PROF_FORMAT_META_KEYS_H",
                                           "#define PROF_FORMAT_META_KEYS_H", "#endif"})
    return rk, mk


# ---- 2. the schemas -----------------------------------------------------------------

def schema_names(schema):
    """Property names a schema declares, and the string values it names
    (enum and const), anywhere in it."""
    names, values = set(), set()

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "properties" and isinstance(v, dict):
                    names.update(v)
                elif k == "required" and isinstance(v, list):
                    names.update(v)
                elif k == "enum" and isinstance(v, list):
                    values.update(e for e in v if isinstance(e, str))
                elif k == "const" and isinstance(v, str):
                    values.add(v)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(schema)
    return names, values


# ---- 3. the format's metadata ---------------------------------------------------------

def documented_fields():
    fields = set()
    for doc in FORMAT_DOCS:
        for m in re.finditer(r"`([a-z_][a-z0-9_.\[\]]*)`", read(doc)):
            fields.update(p for p in re.split(r"[.\[\]]+", m.group(1)) if p)
    return fields


# ---- 4. the C sources -----------------------------------------------------------------

def c_calls(src):
    """(name, [(offset, text) of each argument]) of every call in src;
    comments and literals are skipped, not parsed."""
    out, stack = [], []
    depth, i, n = 0, 0, len(src)
    ident = re.compile(r"[A-Za-z_]\w*")
    while i < n:
        c = src[i]
        if src.startswith("/*", i):
            i = src.index("*/", i) + 2
        elif src.startswith("//", i):
            i = src.index("\n", i)
        elif c in "\"'":
            i += 1
            while src[i] != c:
                i += 2 if src[i] == "\\" else 1
            i += 1
        elif (c.isalpha() or c == "_") and not (src[i - 1].isalnum() or src[i - 1] == "_"):
            m = ident.match(src, i)
            j = m.end()
            k = j
            while k < n and src[k] in " \t\n":
                k += 1
            if k < n and src[k] == "(":
                depth += 1
                stack.append([m.group(0), [], k + 1, depth])
                i = k + 1
            else:
                i = j
        else:
            if c in "([{":
                depth += 1
            elif c in ")]}":
                if c == ")" and stack and stack[-1][3] == depth:
                    name, args, start, _ = stack.pop()
                    args.append((start, src[start:i]))
                    out.append((name, args))
                depth -= 1
            elif c == "," and stack and stack[-1][3] == depth:
                stack[-1][1].append((stack[-1][2], src[stack[-1][2]:i]))
                stack[-1][2] = i + 1
            i += 1
    return out


def spelling(path, key, reads, rk, mk):
    """The macro path should spell key with, or a message, or None."""
    if path in META_WRITERS:
        return mk.get(key) or f"no MK_ name: add MK_{key.upper()} to {META_HEADER}"
    if path.startswith(("src/analysis/", "src/output/")):
        return rk.get(key) or (mk.get(key) if reads else None)
    if path.startswith("src/query/"):
        return (rk.get(key) or mk.get(key)) if reads else None
    return mk.get(key) or (rk.get(key) if reads else None)


def check_sources(rk, mk, paths):
    for path in paths:
        src = read(path)
        for name, args in c_calls(src):
            indexes, reads = KEY_ARGS.get(name, ([], False))
            for ix in indexes:
                if ix >= len(args):
                    continue
                at, text = args[ix]
                m = re.fullmatch(r'\s*"([a-z_][a-z0-9_]*)"\s*', text)
                if not m:
                    continue
                key = m.group(1)
                macro = spelling(path, key, reads, rk, mk)
                if macro:
                    line = src.count("\n", 0, at) + 1
                    problem(f'{path}:{line}: {name}(.., "{key}", ..): spell it {macro}')


# ---- 5. the viewer ----------------------------------------------------------------------

def viewer_code(js):
    """The script without comments (code), and without strings and
    regular expressions besides (bare); lines kept."""
    code = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), js, flags=re.S)
    code = re.sub(r"(?<![:'\"\\])//[^\n]*", "", code)
    strings = re.compile(r"'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|`(?:\\.|[^`\\])*`")
    bare = strings.sub(lambda m: "''" + "\n" * m.group(0).count("\n"), code)
    bare = re.sub(r"/(?![/*])(?:\\.|[^/\\\n])+/[gimsuy]*(?=\s*[.,;)\]])", "/x/", bare)
    return code, bare


def check_viewer(known):
    parts = {path: viewer_code(read(path)) for path in sorted(glob.glob(VIEWER + "/*.js"))}
    if not parts:
        problem(f"{VIEWER}: no parts of the dashboard's script")
    # a method called in any part is no member read
    calls = set()
    for code, bare in parts.values():
        calls |= set(re.findall(r"\.([A-Za-z_$][\w$]*)\s*\(", bare))
    unknown, reads = {}, 0
    for path, (code, bare) in parts.items():
        seen = set()
        # x.name and x?.name, but not x.method(...)
        for m in re.finditer(r"(?<=[\w$)\]])\??\.([A-Za-z_$][\w$]*)(?![\w$]|\s*\()", bare):
            seen.add((m.group(1), bare.count("\n", 0, m.start()) + 1))
        # a member named in a string: 'self_ns', ['step_time']
        for m in re.finditer(r"'([a-z][a-z0-9]*(?:_[a-z0-9]+)+)'", code):
            seen.add((m.group(1), code.count("\n", 0, m.start()) + 1))
        reads += len(seen)
        for name, line in seen:
            if name not in known and name not in PAGE_NAMES and name not in calls:
                unknown.setdefault(name, (path, line))
    for name, (path, line) in sorted(unknown.items(), key=lambda x: x[1]):
        problem(f"{path}:{line}: reads '{name}', which no schema declares and the page does "
                f"not own (a misspelt member? else add it to {HEADER} or PAGE_NAMES)")
    return reads


def main():
    rk, mk = parse_headers()
    names, values = set(), set()
    for path in SCHEMAS:
        n, v = schema_names(json.loads(read(path)))
        names |= n
        values |= v
    for name in sorted(names - set(rk)):
        problem(f"{HEADER}: no RK_{name.upper()} for '{name}', which the schemas declare")
    for name in sorted(set(rk) - names):
        problem(f"{HEADER}: RK_{name.upper()}: '{name}' is in neither schema")
    fields = documented_fields()
    for name in sorted(set(mk) - fields):
        problem(f"{META_HEADER}: MK_{name.upper()}: '{name}' is no metadata field of "
                + ", ".join(FORMAT_DOCS))
    sources = sys.argv[1:]
    check_sources(rk, mk, sources)
    reads = check_viewer(set(rk) | set(mk) | values)
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{len(rk)} report and comparison members, {len(mk)} metadata members; "
          f"{len(sources)} C files and {reads} reads of {VIEWER}/*.js checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
