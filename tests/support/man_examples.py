#!/usr/bin/env python3
"""man_examples.py - runs the examples of the manual pages
(tests/cli/man_examples.sh calls it from the repository root), so that a
page never shows a command that fails or output that prof no longer
prints.

usage: man_examples.py PROF TEST_BIN LIBPROF_A PAGE...

Each .EX ... .EE block of a page is one of:
- a session: lines "$ COMMAND" (a COMMAND ending in a backslash goes on
  on the next line), each followed by the output it shows, if any;
- a file the sessions after it use: its first line is "/* NAME */";
- an illustration (output alone, a fragment of code): not run; in the
  EXAMPLES section that is an error, as a block there is meant to run.
Roff comments just before a block say how to run it:
  .\\" example: skip WHY        not run (a training script, a GPU, a network)
  .\\" example: needs WORD...   skipped unless each WORD is there: a program
                               on PATH, a path (/dev/full) or a Python
                               module (python3:pandas)
  .\\" example: exit N [WHY]    its last command exits with N, not 0

Each page's sessions run in order, with sh, in a directory of their own
that holds what the pages name: testdata/ (the repository's), run.prof,
before.prof, after.prof, main.prof and branch.prof (copies of
testdata/demo.prof), run.0.prof .. run.3.prof (a four-rank job, and in runs/) and
report.nsys.sqlite (from TEST_BIN/make_man_fixtures), rank0.pt.trace.json.gz,
trace_rank0.json.gz and trace_rank1.json.gz (testdata/kineto's traces);
prof is PROF, and pkg-config's prof is the build tree's (LIBPROF_A and
include/). A command must exit with 0, unless "echo $?" follows it (that
prints its status, which is then checked as output) or an exit marker says
otherwise; the output shown must be what it prints (stdout and stderr),
white space aside, a line "..." standing for any lines.

Prints "ok NAME", "ok NAME # skip WHY" or "not ok NAME - WHY" for each
block that runs or is skipped, NAME being PAGE#N (its Nth block)."""
import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

ROFF = [("\\\\", "\0"), ("\\-", "-"), ("\\(aq", "'"), ("\\(dq", '"'), ("\\(em", "--"),
        ("\\e", "\\"), ("\\&", ""), ("\\ ", " "), ("\\fB", ""), ("\\fI", ""), ("\\fR", ""),
        ("\\fP", ""), ("\0", "\\")]
MARK = "@@man-example@@"
TIMEOUT = int(os.environ.get("MAN_EXAMPLE_TIMEOUT", "120"))  # seconds a block may take


def unroff(line):
    for a, b in ROFF:
        line = line.replace(a, b)
    return line


class Block:
    def __init__(self, page, number, section, lines, markers):
        self.name = f"{os.path.basename(page)}#{number}"
        self.section = section
        self.lines = lines
        self.markers = markers
        self.file = None
        self.commands = []  # [command, [expected lines]]
        m = re.fullmatch(r"/\* (\S+) \*/", lines[0].strip()) if lines else None
        if m:
            self.file = m.group(1)
            return
        for line in lines:
            if line.startswith("$ "):
                self.commands.append([line[2:], []])
            elif self.commands and self.commands[-1][0].endswith("\\") \
                    and not self.commands[-1][1]:
                self.commands[-1][0] += "\n" + line
            elif self.commands:
                self.commands[-1][1].append(line)


def blocks(page):
    out, markers, section, lines, inside = [], [], "", None, False
    with open(page, encoding="utf-8") as f:
        for raw in f.read().splitlines():
            if inside:
                if raw.startswith(".EE"):
                    out.append(Block(page, len(out) + 1, section, lines, markers))
                    markers, inside = [], False
                else:
                    lines.append(unroff(raw))
            elif raw.startswith(".EX"):
                inside, lines = True, []
            elif raw.startswith(".SH"):
                section = raw[3:].strip().strip('"')
            else:
                m = re.match(r'\.\\"\s*example:\s*(\S+)\s*(.*)$', raw)
                if m:
                    markers.append((m.group(1), m.group(2).strip()))
    return out


# ---- the directory the sessions run in -----------------------------------------------

def fixtures(work, prof, test_bin, libprof_a):
    """A directory of what every page's examples name, copied for each."""
    root = os.path.join(work, "fixtures")
    os.makedirs(os.path.join(root, ".bin"))
    os.makedirs(os.path.join(root, ".pc"))
    os.symlink(os.path.abspath(prof), os.path.join(root, ".bin", "prof"))
    repo = os.getcwd()
    os.symlink(os.path.join(repo, "testdata"), os.path.join(root, "testdata"))
    for name in ("run", "before", "after", "main", "branch"):
        shutil.copy("testdata/demo.prof", os.path.join(root, name + ".prof"))
    subprocess.run([os.path.join(test_bin, "make_man_fixtures"), root], check=True)
    os.mkdir(os.path.join(root, "runs"))
    for rank in range(4):
        shutil.copy(os.path.join(root, "run.%d.prof" % rank), os.path.join(root, "runs"))
    shutil.copy("testdata/kineto/2024.json.gz", os.path.join(root, "rank0.pt.trace.json.gz"))
    for rank, trace in ((0, "2023.json"), (1, "2024.json")):
        with open(os.path.join("testdata/kineto", trace), "rb") as src, \
                gzip.open(os.path.join(root, f"trace_rank{rank}.json.gz"), "wb") as dst:
            shutil.copyfileobj(src, dst)
    with open(os.path.join(root, ".pc", "prof.pc"), "w", encoding="utf-8") as pc:
        pc.write("Name: prof\nDescription: libprof of the build tree\nVersion: 0\n"
                 f"Libs: {os.path.abspath(libprof_a)} -lzstd -lcjson -lpthread -lm\n"
                 f"Cflags: -I{os.path.join(repo, 'include')}\n")
    return root


def missing(words):
    for w in words.split():
        if w.startswith("/"):
            if not os.access(w, os.W_OK if w.startswith("/dev/") else os.R_OK):
                return w
        elif w.startswith("python3:"):
            if subprocess.run(["python3", "-c", "import " + w[8:]], capture_output=True,
                              check=False).returncode != 0:
                return "Python's " + w[8:]
        elif not shutil.which(w):
            return w
    return None


# ---- running a session -------------------------------------------------------------------

def script(commands):
    """sh runs each command in a subshell with its status before it as $?,
    stderr into stdout, and marks where each one's output ends."""
    parts = ["__status=0"]
    for cmd, _ in commands:
        parts.append(f"(exit $__status); (\n{cmd}\n) 2>&1 </dev/null")
        parts.append(f"__status=$?; printf '\\n{MARK} %d\\n' $__status")
    return "\n".join(parts) + "\n"


def normal(text):
    return " ".join(text.split())


def shows(expected, actual):
    """Whether the output printed is the output shown: the same words in
    the same order, a line "..." standing for any lines."""
    lines = [line.strip() for line in expected]
    lead, trail = lines[0] == "...", lines[-1] == "..."
    chunks, cur = [], []
    for line in lines + ["..."]:
        if line == "...":
            if normal("\n".join(cur)):
                chunks.append(normal("\n".join(cur)))
            cur = []
        else:
            cur.append(line)
    text, at = normal(actual), 0
    for i, c in enumerate(chunks):
        if i == 0 and not lead:
            if not text.startswith(c):
                return False
            j = 0
        else:
            j = text.find(c, at)
            if j < 0:
                return False
        if i == len(chunks) - 1 and not trail:
            # the last part ends the output
            if i == 0 and not lead:
                return text == c
            return text.endswith(c) and len(text) - len(c) >= at
        at = j + len(c)
    return True


def run_session(block, cwd, env):
    exit_status = 0
    for kind, arg in block.markers:
        if kind == "exit":
            exit_status = int(arg.split()[0])
    # a session of its own, so that a command left running (a server) is
    # stopped with the shell
    with subprocess.Popen(["sh", "-c", script(block.commands)], cwd=cwd, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          start_new_session=True) as p:
        try:
            stdout, stderr = p.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return f"timed out after {TIMEOUT} s"
    outputs = stdout.split(f"\n{MARK} ")
    if len(outputs) != len(block.commands) + 1:
        return f"the session stopped early: {stdout[-300:]}{stderr[-300:]}"
    for i, (cmd, expected) in enumerate(block.commands):
        text = outputs[i] if i == 0 else outputs[i].split("\n", 1)[1] if "\n" in outputs[i] \
            else ""
        status = int(outputs[i + 1].split("\n", 1)[0])
        followed = i + 1 < len(block.commands) and block.commands[i + 1][0].strip() == "echo $?"
        want = exit_status if i == len(block.commands) - 1 else 0
        if not followed and status != want:
            return f"'{cmd}' exited with {status}, not {want}: {text.strip()[-400:]}"
        if expected and not shows(expected, text):
            return (f"'{cmd}' printed\n{text.rstrip()[:1500]}\n# where the page shows\n"
                    + "\n".join(expected))
    return None


def run_block(b, cwd, env):
    """The block's line: "ok NAME", "ok NAME # skip WHY", "not ok NAME - WHY",
    or None for a block that is no example (a file it writes, an
    illustration outside EXAMPLES)."""
    if b.file:
        with open(os.path.join(cwd, b.file), "w", encoding="utf-8") as f:
            f.write("\n".join(b.lines) + "\n")
        return None
    for kind, arg in b.markers:
        if kind == "skip":
            return f"ok {b.name} # skip {arg or 'no reason given'}"
    if not b.commands:
        if b.section != "EXAMPLES":
            return None
        return (f"not ok {b.name} - neither commands ($ ...) nor a file (/* NAME */), and not "
                "marked: .\\\" example: skip WHY")
    for kind, arg in b.markers:
        lack = missing(arg) if kind == "needs" else None
        if lack:
            return f"ok {b.name} # skip needs {lack}"
    err = run_session(b, cwd, env)
    return f"not ok {b.name} - " + err.replace("\n", "\n# ") if err else f"ok {b.name}"


def main():
    if len(sys.argv) < 5:
        print("usage: man_examples.py PROF TEST_BIN LIBPROF_A PAGE...", file=sys.stderr)
        return 2
    prof, test_bin, libprof_a, pages = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="prof-man-") as work:
        template = fixtures(work, prof, test_bin, libprof_a)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_")}
        env["PATH"] = os.path.join(template, ".bin") + os.pathsep + env.get("PATH", "")
        env["PKG_CONFIG_PATH"] = os.path.join(template, ".pc")
        env["NO_COLOR"] = "1"
        for page in pages:
            cwd = os.path.join(work, os.path.basename(page))
            shutil.copytree(template, cwd, symlinks=True)
            for b in blocks(page):
                line = run_block(b, cwd, env)
                if line:
                    print(line, flush=True)
                    failed += line.startswith("not ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
