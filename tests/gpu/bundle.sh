#!/bin/sh
# bundle.sh - the Debian packages that building prof needs, fetched into one
# folder that travels to a machine which has none of them and reaches no
# package registry (a GPU machine lent for a few minutes, tests/gpu/
# device-check.sh). `make gpu-bundle` runs it with the Makefile's libraries.
#
#   tests/gpu/bundle.sh DIR -lNAME... [HEADER.h...]
#
# For each library, the package of its link-time name (libNAME.so: the -dev
# package, with the headers) and of the file it resolves to (the run-time
# package); for each header, its package. The C library and the compiler's
# own are left out: the machine has its own. DIR gets the .deb files and
# packages.txt ("PACKAGE VERSION FILE" per line); it is emptied first.
# Exit status: 0 done, 1 a package could not be found or fetched, 2 usage.
set -u
usage() {
    echo "usage: tests/gpu/bundle.sh DIR -lNAME... [HEADER.h...]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
case $1 in -*) usage ;; esac
dir=$1
shift
CC=${CC:-cc}

die() {
    echo "bundle.sh: $*" >&2
    exit 1
}

# owner FILE: the package that installed FILE (its path as given, else its
# name: /lib and /usr/lib are one folder on merged systems)
owner() {
    dpkg -S "$1" 2>/dev/null || dpkg -S "*/$(basename "$1")" 2>/dev/null
}

pkgs=""
add() {
    p=$(owner "$1" | sed -n '1s/:.*//p' | sed 's/:[a-z0-9]*$//')
    [ -n "$p" ] || die "no package owns '$1'"
    case " $pkgs " in *" $p "*) ;; *) pkgs="$pkgs $p" ;; esac
}

for arg in "$@"; do
    case $arg in
    -l*)
        name=${arg#-l}
        case $name in c | m | pthread | dl | rt) continue ;; esac
        so=$($CC -print-file-name="lib$name.so")
        [ "$so" != "lib$name.so" ] || die "'lib$name.so' not found by $CC: is its -dev package installed?"
        add "$(realpath -s "$so")"
        add "$(readlink -f "$so")"
        ;;
    *.h)
        path=$(echo "#include <$arg>" | $CC -M -x c - 2>/dev/null | tr ' \\' '\n\n' | grep "/$arg\$" | head -n 1)
        [ -n "$path" ] || die "header '$arg' not found by $CC: is its -dev package installed?"
        add "$path"
        ;;
    *) usage ;;
    esac
done

rm -rf "$dir" && mkdir -p "$dir" || die "cannot make '$dir'"
dir=$(cd "$dir" && pwd)
for p in $pkgs; do
    v=$(dpkg-query -W -f '${Version}' "$p")
    # the version installed here (its headers built and tested prof), else
    # the archive's current one when that version has left the archive
    (cd "$dir" && { apt-get download -q "$p=$v" >/dev/null 2>&1 || apt-get download -q "$p" >/dev/null 2>&1; }) ||
        die "apt-get download $p failed (no network, or no package lists: apt-get update)"
    f=$(cd "$dir" && ls "${p}_"*.deb 2>/dev/null | head -n 1)
    [ -n "$f" ] || die "apt-get download $p wrote no .deb"
    echo "$p $(dpkg-deb -f "$dir/$f" Version) $f" >>"$dir/packages.txt"
done
echo "bundle.sh: $(wc -l <"$dir/packages.txt") packages in $dir ($(du -sk "$dir" | cut -f1) KiB):$pkgs"
