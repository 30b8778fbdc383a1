#!/bin/sh
# view.sh - `prof view` end to end: the server's HTTP behaviour checked with
# curl (its own paths only, GET and HEAD only, traversal, headers, loopback
# only, a port in use, Ctrl+C), the static --html file, usage errors, and
# the dashboard itself in headless Chromium (tests/browser/view.mjs: every
# tab drawn, figures equal to `prof analyze --format json`, hostile names
# kept as text, the warning banner, the comparison, a GPU profile's GPU
# columns, GPU-weighted flame graph and launch statistics). Screenshots of
# every tab go to $B/test-logs/screenshots/.
# Run from the repository root with PROF, TEST_BIN and B set, as
# tests/suite.sh does.
. "$(dirname "$0")/../support/cli_lib.sh"
B=${B:-build}
DEMO=testdata/demo.prof

tmp=$(mktemp -d "${TMPDIR:-/tmp}/prof-cli-view.XXXXXX") || exit 1
tmp=$(cd "$tmp" && pwd) # absolute, for file:// addresses
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

case "$PROF" in */asan/*) variant=asan ;; *) variant=rel ;; esac
shots=$B/test-logs/screenshots/$variant

# serve NAME ARGS...: starts `prof view ARGS --port 0 --no-open` in the
# background; sets $page, the URL it prints (with its token), $url, the
# same without the query, $token (empty on failure) and $pid.
serve() {
    name=$1
    shift
    : >"$tmp/$name.out"
    "$PROF" view "$@" --port 0 --no-open >>"$tmp/$name.out" 2>"$tmp/$name.err" &
    pid=$!
    pids="$pids $pid"
    url=""
    i=0
    while [ $i -lt 100 ]; do
        page=$(sed -n 's/^Serving .* at \(http:[^ ]*\) (Ctrl+C stops)$/\1/p' "$tmp/$name.out")
        url=${page%%\?token=*}
        token=${page##*\?token=}
        [ -n "$page" ] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
        i=$((i + 1))
    done
    not_ok "serve $name" "no URL printed: $(cat "$tmp/$name.out" "$tmp/$name.err")"
    return 1
}

# code NAME WANT CURL-ARGS...: the HTTP status of a request that carries
# the token's cookie is WANT; bare NAME WANT CURL-ARGS...: of one without
code() {
    name=$1
    want=$2
    shift 2
    got=$(curl -s -o /dev/null -w '%{http_code}' -b "prof_token=$token" "$@")
    if [ "$got" = "$want" ]; then ok "$name"; else not_ok "$name" "status $got, want $want"; fi
}
bare() {
    name=$1
    want=$2
    shift 2
    got=$(curl -s -o /dev/null -w '%{http_code}' "$@")
    if [ "$got" = "$want" ]; then ok "$name"; else not_ok "$name" "status $got, want $want"; fi
}

"$TEST_BIN/make_view" "$tmp" || { not_ok fixtures "make_view failed"; exit 1; }
# a run of over 3,000 steps: its report lists 2,000 of them (prof analyze --points)
"$TEST_BIN/make_big" 500000 "$tmp/long.prof" >/dev/null || { not_ok fixtures "make_big failed"; exit 1; }
"$PROF" analyze --format json --top 0 -o "$tmp/demo.json" "$DEMO" 2>"$tmp/analyze.err" \
    || not_ok "analyze json" "$(cat "$tmp/analyze.err")"

# ---- usage and input errors ---------------------------------------------------
expect_status() { # NAME STATUS ARGS...
    name=$1
    want=$2
    shift 2
    "$PROF" view "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    if [ $rc -ne "$want" ]; then
        not_ok "$name" "exit $rc, want $want: $(head -c 300 "$tmp/err")"
    elif [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q '^prof: view: ' "$tmp/err"; then
        not_ok "$name" "stderr is not one 'prof: view:' line: $(cat "$tmp/err")"
    else
        ok "$name"
    fi
}
expect_status "usage: no profile" 2
expect_status "usage: three profiles" 2 "$DEMO" "$DEMO" "$DEMO"
expect_status "usage: bad port" 2 "$DEMO" --port 70000
expect_status "usage: bad option" 2 "$DEMO" --frobnicate
expect_status "usage: address not numeric" 2 "$DEMO" --bind localhost --port 0
expect_status "input: missing file" 3 "$tmp/nope.prof"
"$PROF" view --help >"$tmp/help" 2>&1 && grep -q -e '--no-open' "$tmp/help" && ok "help" \
    || not_ok "help" "$(head -c 200 "$tmp/help")"

# ---- libmicrohttpd: loaded to serve, and by nothing else -------------------------
# (it and the TLS libraries it brings cost every command about 8 ms)
LD_DEBUG=libs "$PROF" analyze "$DEMO" >/dev/null 2>"$tmp/ld.err"
if grep -q 'calling init:' "$tmp/ld.err" && ! grep -q 'libmicrohttpd\|libgnutls' "$tmp/ld.err"; then
    ok "libmicrohttpd: not loaded by analyze"
else
    not_ok "libmicrohttpd: not loaded by analyze" "$(grep -m3 'microhttpd\|gnutls' "$tmp/ld.err")"
fi
printf '#!/bin/sh\nLD_DEBUG=libs exec "%s" "$@"\n' "$PROF" >"$tmp/prof-ld" && chmod +x "$tmp/prof-ld"
real_prof=$PROF
PROF=$tmp/prof-ld
if serve ld "$DEMO"; then
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if grep -q 'calling init: .*libmicrohttpd' "$tmp/ld.err"; then
        ok "libmicrohttpd: loaded by view to serve"
    else
        not_ok "libmicrohttpd: loaded by view to serve" "not in its LD_DEBUG=libs output"
    fi
fi
PROF=$real_prof
# Without it, serving fails with one line and status 4, naming --html. The
# library is hidden in a mount namespace of this test's own (root only).
mhd=$(ldconfig -p 2>/dev/null | sed -n 's/^[[:space:]]*libmicrohttpd\.so\.[0-9]* .*=> //p' | head -n 1)
[ -n "$mhd" ] && mhd=$(readlink -f "$mhd")
hide='mount --bind /dev/null "$1" && shift && exec "$@"'
if [ -n "$mhd" ] && unshare -m sh -c "$hide" sh "$mhd" true 2>/dev/null; then
    unshare -m sh -c "$hide" sh "$mhd" \
        "$PROF" view "$DEMO" --port 0 --no-open >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    if [ $rc -eq 4 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] \
        && grep -q '^prof: view: cannot serve the dashboard: cannot load libmicrohttpd (.*--html' "$tmp/err"; then
        ok "libmicrohttpd: missing, one line and status 4"
    else
        not_ok "libmicrohttpd: missing, one line and status 4" "exit $rc: $(head -c 300 "$tmp/err")"
    fi
else
    ok "libmicrohttpd: missing, one line and status 4 # skip needs root to hide the library"
fi

# ---- the static file ------------------------------------------------------------
if "$PROF" view "$DEMO" --html "$tmp/demo.html" 2>"$tmp/err"; then
    if grep -q 'Content-Security-Policy' "$tmp/demo.html" && grep -q 'id="prof-data"' "$tmp/demo.html" \
        && ! grep -q '<script src=' "$tmp/demo.html" && ! grep -q '<link rel="stylesheet"' "$tmp/demo.html"; then
        ok "html: self-contained"
    else
        not_ok "html: self-contained" "CSP, data block or inlining missing"
    fi
else
    not_ok "html: self-contained" "$(cat "$tmp/err")"
fi
mkfifo "$tmp/page.fifo"
timeout 20 cat "$tmp/page.fifo" >"$tmp/fifo.html" &
reader=$!
"$PROF" view "$DEMO" --html "$tmp/page.fifo" 2>"$tmp/err"
rc=$?
wait $reader
if [ $rc -eq 0 ] && [ -p "$tmp/page.fifo" ] && grep -q 'id="prof-data"' "$tmp/fifo.html"; then
    ok "html: into a FIFO"
else
    not_ok "html: into a FIFO" "exit $rc, FIFO replaced or page missing: $(cat "$tmp/err")"
fi
"$PROF" view "$tmp/xss.prof" --html "$tmp/xss.html" 2>"$tmp/err" || not_ok "html: xss" "$(cat "$tmp/err")"
# the data block holds no markup: every < > & of a name is a \u escape
if sed -n 's/.*<script type="application\/json" id="prof-data">\(.*\)/\1/p' "$tmp/xss.html" \
    | sed 's/<\/script>.*//' | grep -q '[<>&]'; then
    not_ok "html: names escaped in the data block" "raw < > or & inside the JSON"
elif grep -q 'u003cimg src=x onerror=alert(1)\\u003e' "$tmp/xss.html"; then
    ok "html: names escaped in the data block"
else
    not_ok "html: names escaped in the data block" "escaped name not found"
fi
"$PROF" view "$tmp/cut.prof" --html "$tmp/cut.html" 2>"$tmp/err" || not_ok "html: cut" "$(cat "$tmp/err")"
"$PROF" view testdata/kineto/cut.json --html "$tmp/cut-import.html" 2>"$tmp/err" ||
    not_ok "html: cut import" "$(cat "$tmp/err")"
"$PROF" view "$tmp/nosteps.prof" --html "$tmp/nosteps.html" 2>"$tmp/err" \
    || not_ok "html: nosteps" "$(cat "$tmp/err")"
"$PROF" view "$DEMO" "$tmp/xss.prof" --html "$tmp/compare.html" 2>"$tmp/err" \
    || not_ok "html: compare" "$(cat "$tmp/err")"
"$PROF" view "$DEMO" --html "$tmp/no/such/dir/x.html" 2>"$tmp/err"
rc=$?
[ $rc -eq 4 ] && [ ! -e "$tmp/no/such/dir/x.html" ] && ok "html: unwritable path is exit 4" \
    || not_ok "html: unwritable path is exit 4" "exit $rc: $(cat "$tmp/err")"

# ---- the server over HTTP -----------------------------------------------------------
if serve demo "$DEMO"; then
    demo_url=$page
    # the token: nothing is answered without it, the printed URL sets its
    # cookie, and the cookie alone is enough (the page's own requests)
    case "$token" in
    [0-9a-f][0-9a-f][0-9a-f][0-9a-f]*) [ ${#token} -eq 32 ] && ok "token: 128 bits in the URL" \
        || not_ok "token: 128 bits in the URL" "'$token'" ;;
    *) not_ok "token: 128 bits in the URL" "'$page'" ;;
    esac
    code "rank: none in one profile's view" 404 "${url}api/view?rank=0"
    code "rank: no events of a rank in one profile's view" 404 "${url}api/events?rank=0"
    bare "token: page refused without it" 403 "$url"
    bare "token: report refused without it" 403 "${url}api/report"
    bare "token: events refused without it" 403 "${url}api/events?t0=0&t1=1"
    bare "token: a wrong one refused" 403 "${url}api/report?token=0123456789abcdef0123456789abcdef"
    case "$token" in *0) last=1 ;; *) last=0 ;; esac # another last digit
    bare "token: a wrong cookie refused" 403 -b "prof_token=${token%?}$last" "${url}api/report"
    bare "token: a short one refused" 403 "${url}?token=${token%?}"
    bare "token: the printed URL" 200 "$page"
    bare "token: in the query of the API" 200 "${url}api/report?token=$token"
    cookie=$(curl -s -D - -o /dev/null "$page" | tr -d '\r' | sed -n 's/^[Ss]et-[Cc]ookie: //p')
    case "$cookie" in
    "prof_token=$token; Path=/; HttpOnly; SameSite=Strict") ok "token: cookie set" ;;
    *) not_ok "token: cookie set" "'$cookie'" ;;
    esac
    refused=$(curl -s "${url}api/report")
    echo "$refused" | grep -q "URL prof view printed" && ok "token: the refusal says why" \
        || not_ok "token: the refusal says why" "$refused"
    demo_pid=$pid
    code "http: page" 200 "$url"
    code "http: script" 200 "${url}app.js"
    code "http: stylesheet" 200 "${url}app.css"
    code "http: report" 200 "${url}api/report"
    code "http: events" 200 "${url}api/events?t0=0&t1=500000000"
    code "http: HEAD" 200 -I "$url"
    code "http: unknown path 404" 404 "${url}index.htm"
    code "http: no directory listing" 404 "${url}api/"
    code "http: POST 405" 405 -X POST -d x=1 "$url"
    code "http: PUT 405" 405 -X PUT "${url}api/report"
    code "http: DELETE 405" 405 -X DELETE "${url}app.js"
    code "http: traversal 404" 404 --path-as-is "${url}../etc/passwd"
    code "http: traversal after a path 404" 404 --path-as-is "${url}app.js/../../../etc/passwd"
    code "http: encoded traversal 404" 404 --path-as-is "${url}%2e%2e/%2e%2e/etc/passwd"
    code "http: encoded slash 404" 404 --path-as-is "${url}..%2f..%2fetc%2fpasswd"
    code "http: absolute path 404" 404 --path-as-is "${url}/etc/passwd"
    code "http: bad window 400" 400 "${url}api/events?t0=abc"
    code "http: reversed window 400" 400 "${url}api/events?t0=9&t1=1"
    code "http: the largest t1, as the server gives it" 200 \
        "${url}api/events?t0=0&t1=18446744073709551615"
    code "http: past the largest t1 400" 400 "${url}api/events?t1=18446744073709551616"
    code "http: no second profile 404" 404 "${url}api/report?profile=1"
    code "http: other Host refused" 403 -H 'Host: attacker.example' "$url"
    headers=$(curl -s -D - -o /dev/null "$page")
    echo "$headers" | grep -qi "^Content-Security-Policy: default-src 'self'" && ok "http: CSP header" \
        || not_ok "http: CSP header" "$headers"
    echo "$headers" | grep -qi '^X-Content-Type-Options: nosniff' && ok "http: nosniff header" \
        || not_ok "http: nosniff header" "$headers"
    allow=$(curl -s -D - -o /dev/null -X POST "$page" | grep -i '^Allow:')
    echo "$allow" | grep -q 'GET, HEAD' && ok "http: 405 says Allow" || not_ok "http: 405 says Allow" "$allow"
    ctype=$(curl -s -D - -o /dev/null -b "prof_token=$token" "${url}api/report" | grep -i '^Content-Type:')
    echo "$ctype" | grep -q 'application/json' && ok "http: JSON type" || not_ok "http: JSON type" "$ctype"
    # the served report is the analyze report
    if curl -s -b "prof_token=$token" "${url}api/report" >"$tmp/served.json" && node -e '
        const fs = require("fs");
        const a = JSON.parse(fs.readFileSync(process.argv[1])), b = JSON.parse(fs.readFileSync(process.argv[2]));
        process.exit(JSON.stringify(a) === JSON.stringify(b) ? 0 : 1);' "$tmp/served.json" "$tmp/demo.json"; then
        ok "http: report equals prof analyze --format json --top 0"
    else
        not_ok "http: report equals prof analyze --format json --top 0" "reports differ"
    fi
    # listening on loopback only: the socket's local address in /proc/net/tcp
    port=$(echo "$url" | sed 's/.*:\([0-9]*\)\/$/\1/')
    hexport=$(printf '%04X' "$port")
    listen=$(awk -v p=":$hexport" '$2 ~ p"$" && $4 == "0A" { print $2 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null)
    [ "$listen" = "0100007F:$hexport" ] && ok "http: bound to 127.0.0.1 only" \
        || not_ok "http: bound to 127.0.0.1 only" "listening on '$listen'"
    other=$(hostname -I 2>/dev/null | awk '{print $1}')
    if [ -n "$other" ] && [ "${other#127.}" = "$other" ]; then
        code "http: not reachable on $other" 000 --max-time 3 "http://$other:$port/"
    fi
    # the port in use: one line naming --port, exit 4
    "$PROF" view "$DEMO" --port "$port" --no-open >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 4 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'already in use' "$tmp/err" \
        && grep -q -e '--port' "$tmp/err"; then
        ok "port in use"
    else
        not_ok "port in use" "exit $rc: $(cat "$tmp/err")"
    fi
fi

# ---- the dashboard in a browser -----------------------------------------------------
"$PROF" analyze --format json -o "$tmp/xss.json" "$tmp/xss.prof" 2>"$tmp/err" ||
    not_ok "xss report" "$(cat "$tmp/err")"
serve xss "$tmp/xss.prof" && xss_url=$page
serve cut "$tmp/cut.prof" && cut_url=$page
serve compare "$DEMO" "$tmp/xss.prof" && compare_url=$page
serve long "$tmp/long.prof" && long_url=$page
# a profile with GPU time joined to the operations that launched it
# (rules.md 3.2): its GPU columns, GPU-weighted flame graph and launch
# statistics, served, as the static file, and as `analyze --sort gpu --format html`
GPU=testdata/gpu/h200_torch_train.prof
"$PROF" analyze --format json --top 0 -o "$tmp/gpu.json" "$GPU" 2>"$tmp/err" || not_ok "gpu report" "$(cat "$tmp/err")"
"$PROF" analyze --format json --top 0 --sort gpu -o "$tmp/gpu-sorted.json" "$GPU" 2>"$tmp/err" ||
    not_ok "gpu report by GPU time" "$(cat "$tmp/err")"
"$PROF" view "$GPU" --html "$tmp/gpu.html" 2>"$tmp/err" || not_ok "html: gpu" "$(cat "$tmp/err")"
"$PROF" analyze --format html --top 0 --sort gpu -o "$tmp/gpu-sorted.html" "$GPU" 2>"$tmp/err" ||
    not_ok "html: gpu sorted" "$(cat "$tmp/err")"
serve gpu "$GPU" && gpu_url=$page
# the ranks of one job (a directory): every rank's row, the rank x step
# heat map, the rank that holds the job back in full (make_analyze's job4:
# rank 2's steps last 115 ms, the others' 90 ms)
mkdir -p "$tmp/an"
"$TEST_BIN/make_analyze" "$tmp/an" >/dev/null 2>"$tmp/err" || not_ok "job fixture" "$(cat "$tmp/err")"
mv "$tmp/an/job4" "$tmp/job"
"$PROF" analyze --format json --top 1000 -o "$tmp/job.json" "$tmp/job" 2>"$tmp/err" || not_ok "job report" "$(cat "$tmp/err")"
"$PROF" view "$tmp/job" --html "$tmp/job.html" 2>"$tmp/err" || not_ok "html: job" "$(cat "$tmp/err")"
serve job "$tmp/job" && job_url=$page && job_base=$url && job_token=$token
if grep -q "^Serving the dashboard of $tmp/job/rank2.prof at " "$tmp/job.out"; then ok "job: the straggler served"
else not_ok "job: the straggler served" "$(cat "$tmp/job.out")"; fi
"$PROF" view "$tmp/job" --rank 7 --html "$tmp/none.html" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "rank 7: no profile of that rank" "$tmp/err" && [ ! -e "$tmp/none.html" ]; then ok "job: --rank missing"
else not_ok "job: --rank missing" "exit $rc: $(cat "$tmp/err")"; fi
"$PROF" view "$DEMO" --rank 1 --html "$tmp/none.html" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q -e "--rank applies to a directory of ranks" "$tmp/err"; then ok "job: --rank needs a directory"
else not_ok "job: --rank needs a directory" "exit $rc: $(cat "$tmp/err")"; fi
# Served, any other rank's view and events on demand: the view of rank N
# is the one prof view DIR --rank N serves, byte for byte; a rank the job
# lacks, or a rank of a single profile's view, is not found.
jget() { # NAME QUERY OUTPUT: a request to the job's server
    curl -s -f -b "prof_token=$job_token" -o "$3" "$job_base$2" || not_ok "$1" "GET $2 failed"
}
if serve job0 "$tmp/job" --rank 0; then
    curl -s -b "prof_token=$token" -o "$tmp/job0.view" "${url}api/view"
    jget "job: rank 0 on demand" "api/view?rank=0" "$tmp/job-r0.view"
    if [ -s "$tmp/job0.view" ] && cmp -s "$tmp/job0.view" "$tmp/job-r0.view"; then ok "job: rank 0 on demand is --rank 0"
    else not_ok "job: rank 0 on demand is --rank 0" "$(cmp "$tmp/job0.view" "$tmp/job-r0.view" 2>&1)"; fi
    code "job: another rank of a --rank view" 200 "${url}api/view?rank=1"
    jget "job: rank 0 again" "api/view?rank=0" "$tmp/job-r0b.view"
    if cmp -s "$tmp/job-r0.view" "$tmp/job-r0b.view"; then ok "job: rank 0 kept"; else not_ok "job: rank 0 kept" "differs"; fi
fi
jget "job: described rank" "api/view?rank=2" "$tmp/job-r2.view"
jget "job: the job's view" "api/view" "$tmp/job.view"
if cmp -s "$tmp/job-r2.view" "$tmp/job.view"; then ok "job: rank 2 is the job's view"
else not_ok "job: rank 2 is the job's view" "differs"; fi
for q in "api/view?rank=7" "api/view?rank=x" "api/view?rank=-1" "api/view?rank=99999999999" "api/events?rank=7"; do
    got=$(curl -s -o /dev/null -w '%{http_code}' -b "prof_token=$job_token" "$job_base$q")
    if [ "$got" = 404 ]; then ok "job: $q not found"; else not_ok "job: $q not found" "status $got"; fi
done
jget "job: rank 0 events" "api/events?rank=0" "$tmp/job-ev0.json"
jget "job: rank 2 events" "api/events?rank=2" "$tmp/job-ev2.json"
if "$PYTHON" -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["count"] > 0 and "rank2_only" not in a["names"] and "rank2_only" in b["names"], (a["names"], b["names"])
' "$tmp/job-ev0.json" "$tmp/job-ev2.json" 2>"$tmp/err"; then ok "job: each rank's own events"
else not_ok "job: each rank's own events" "$(tail -n 2 "$tmp/err")"; fi
cat >"$tmp/browser.json" <<EOF
{ "screenshots": "$shots", "report": "$tmp/demo.json", "pages": [
  { "name": "served-demo", "url": "$demo_url", "kind": "demo", "served": true },
  { "name": "static-demo", "url": "file://$tmp/demo.html", "kind": "demo", "served": false },
  { "name": "served-xss", "url": "$xss_url", "kind": "xss", "served": true, "report": "$tmp/xss.json" },
  { "name": "static-xss", "url": "file://$tmp/xss.html", "kind": "xss", "served": false, "report": "$tmp/xss.json" },
  { "name": "served-cut", "url": "$cut_url", "kind": "cut", "served": true },
  { "name": "static-cut", "url": "file://$tmp/cut.html", "kind": "cut", "served": false },
  { "name": "static-cut-import", "url": "file://$tmp/cut-import.html", "kind": "cut", "served": false },
  { "name": "static-nosteps", "url": "file://$tmp/nosteps.html", "kind": "nosteps", "served": false },
  { "name": "served-compare", "url": "$compare_url", "kind": "compare", "served": true },
  { "name": "static-compare", "url": "file://$tmp/compare.html", "kind": "compare", "served": false },
  { "name": "served-long", "url": "$long_url", "kind": "long", "served": true },
  { "name": "served-gpu", "url": "$gpu_url", "kind": "gpu", "served": true, "report": "$tmp/gpu.json" },
  { "name": "static-gpu", "url": "file://$tmp/gpu.html", "kind": "gpu", "served": false, "report": "$tmp/gpu.json" },
  { "name": "static-gpu-sorted", "url": "file://$tmp/gpu-sorted.html", "kind": "gpu", "served": false,
    "report": "$tmp/gpu-sorted.json" },
  { "name": "served-job", "url": "$job_url", "kind": "job", "served": true, "report": "$tmp/job.json" },
  { "name": "static-job", "url": "file://$tmp/job.html", "kind": "job", "served": false, "report": "$tmp/job.json" }
] }
EOF
if [ ! -d tests/browser/node_modules/playwright-core ] || ! command -v "${CHROMIUM:-chromium}" >/dev/null 2>&1; then
    not_ok "browser" "chromium or tests/browser/node_modules missing (run make deps)"
else
    node tests/browser/view.mjs "$tmp/browser.json" 2>"$tmp/browser.err" || fails=$((fails + 1))
    [ -s "$tmp/browser.err" ] && sed 's/^/# /' "$tmp/browser.err" | head -n 20
fi

# ---- the browser is opened on a file of the user's, not on the URL ----------------------
# The token must not show in the command lines of xdg-open and the browser
# (ps): view writes a 0600 redirect file and opens that, removed when it stops.
# A terminal (script) and a display make it open one; xdg-open is a stand-in.
if command -v script >/dev/null 2>&1; then
    mkdir -p "$tmp/xdg" "$tmp/run" && chmod 700 "$tmp/run"
    printf '#!/bin/sh\necho "$1" >"%s/xdg/args"\nstat -c %%a "$1" >"%s/xdg/mode"\ncat "$1" >"%s/xdg/content"\n' \
        "$tmp" "$tmp" "$tmp" >"$tmp/xdg/xdg-open" && chmod +x "$tmp/xdg/xdg-open"
    PATH="$tmp/xdg:$PATH" DISPLAY=:0 XDG_RUNTIME_DIR="$tmp/run" timeout -s INT 5 \
        script -qc "'$PROF' view '$DEMO' --port 0" /dev/null >"$tmp/xdg/out" 2>&1 </dev/null
    opened=$(cat "$tmp/xdg/args" 2>/dev/null)
    # script sends the server SIGTERM and may return before it has removed the file
    i=0
    while [ -n "$opened" ] && [ -e "$opened" ] && [ $i -lt 50 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    printed=$(sed -n 's/^Serving .* at \(http:[^ ]*\) (Ctrl+C stops).*$/\1/p' "$tmp/xdg/out" | tr -d '\r')
    case "$opened" in
    "$tmp/run/prof-view-"*.html)
        if [ "$(cat "$tmp/xdg/mode")" = 600 ] && [ -n "$printed" ] &&
            grep -qF "url=$printed\"" "$tmp/xdg/content" && [ ! -e "$opened" ]; then
            ok "browser opened on a 0600 redirect file, removed at the end"
        else
            not_ok "browser opened on a 0600 redirect file, removed at the end" \
                "mode $(cat "$tmp/xdg/mode"), printed '$printed', content $(cat "$tmp/xdg/content")"
        fi ;;
    *) not_ok "browser opened on a 0600 redirect file, removed at the end" \
        "xdg-open got '$opened': $(head -c 300 "$tmp/xdg/out")" ;;
    esac
fi

# ---- Ctrl+C, or the terminal closing (SIGHUP), stops the server cleanly -----------------
# stops_on SIGNAL TEST PID NAME: the server PID (started as NAME), sent SIGNAL,
# exits 0 within 5 s and says nothing on stderr
stops_on() {
    kill -"$1" "$3"
    i=0
    while kill -0 "$3" 2>/dev/null && [ $i -lt 50 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    if kill -0 "$3" 2>/dev/null; then
        not_ok "$2" "still running after 5 s"
    else
        wait "$3"
        rc=$?
        [ $rc -eq 0 ] && [ ! -s "$tmp/$4.err" ] && ok "$2" || not_ok "$2" "exit $rc: $(cat "$tmp/$4.err")"
    fi
}
[ -n "$demo_url" ] && stops_on INT "Ctrl+C stops" "$demo_pid" demo
serve hup "$DEMO" && stops_on HUP "SIGHUP stops" "$pid" hup

# ---- serving beyond loopback is said once, on stderr; loopback says nothing -------------
if serve wide "$DEMO" --bind 0.0.0.0; then
    kill -INT "$pid" && wait "$pid"
    if [ "$(wc -l <"$tmp/wide.err")" -eq 1 ] && has "$tmp/wide.err" "serving on 0.0.0.0, beyond this machine"; then
        ok "bind beyond loopback warns"
    else
        not_ok "bind beyond loopback warns" "stderr: $(cat "$tmp/wide.err")"
    fi
fi

[ $fails -eq 0 ]
