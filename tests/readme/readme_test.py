#!/usr/bin/env python3
# SPDX-License-Identifier: AGPL-3.0-only
#
# make readme-test: every ```sh block of README.md and of the guides in
# docs/ runs as pasted, and what a page says it prints is what it printed.
#
# Why a small extractor of our own and not Debian's python3-cram: cram wants
# a transcript (every output line, "  $ " prompts), which would make the
# README a test file to read; the pages show outputs as `# -> ...` lines
# beside commands a reader pastes, and this script reads exactly that.
#
# How it runs:
#   - In a network namespace of its own (unshare -n, loopback up), so that
#     127.0.0.1:8080 and :8443 are always free: the blocks say
#     `localhost:8080` and are run with nothing rewritten, beside whatever
#     else runs on the machine.
#   - In a scratch directory holding a symbolic link to each top-level entry
#     of the repository (so `build/splitkd` and `tests/tls/make-certs.sh`
#     resolve as in a checkout); what the blocks write stays in the scratch.
#   - A fresh daemon, started as `make run` starts it (`build/splitkd
#     --listen 127.0.0.1:8080`), for all the pages; README.md first, then
#     the guides in SH_ORDER (then any other docs/*.md, by name). Blocks run
#     in order, each command group in its own bash with the variables of
#     the earlier ones (set -a, carried in a file), so a block takes a
#     placeholder from a variable an earlier block set. A guide's blocks
#     lean on nothing but that daemon and the guide's own earlier blocks,
#     so a reader can paste one guide from its top.
#
# What a block says:
#   - A step is a run of consecutive lines that are neither blank nor
#     comments (a pipeline or `\` continuation stays whole).
#   - `# -> TEXT` after a step: TEXT occurs in the step's standard output
#     (several such lines: each occurs, in order).
#   - `# -> exit N`: the step's exit status is N (`exit N or M`: either,
#     for what the network decides, as a refused handshake's close that
#     curl reads as an empty reply or as a reset). Without it a step must
#     exit 0.
#   - Any `…` in a command fails the test: placeholders come from variables.
#   - The figures a page quotes for the page's files (`index.html` N
#     bytes, ...) are compared with the files.
#   - Every fenced block of README.md and docs/*.md names its language (one
#     of LANGUAGES), and each `json` block is JSON (no repeated member); a
#     schematic one says `text`. The blocks in other languages, and the sh
#     blocks of SH_ELSEWHERE, are run by make readme-blocks
#     (tests/readme/blocks_test.py, in make check-extra: it needs Node.js,
#     promtool and Go), which uses this file's helpers.
# Blocks not run are listed in SKIP below, each with its reason.
#
# usage: readme_test.py REPO

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# First command line of a block not run here -> why.
SKIP = {
    "make run":
        "the set-up itself: make test has already installed and built, and "
        "make run serves in the foreground (this script starts the same "
        "command, build/splitkd --listen 127.0.0.1:8080)",
    "kubectl get pods":
        "needs a Kubernetes cluster; make image-test plays the manifest "
        "with podman kube play instead",
    "make image":
        "needs podman (make check-extra's make image-test runs the image, "
        "compose and kube play the same way)",
    "make deb":
        "installs a package on this machine as root; make check-extra's "
        "make deb-test builds it and installs it in a clean container",
    "journalctl -u splitkd":
        "needs the installed package under systemd; make deb-test runs "
        "the unit, its reload and its logs in a container",
}

# First command line -> seconds after which the step is stopped and that
# counts as success (a stream that never ends by itself).
UNTIL_TIMEOUT = {
    "curl -sN localhost:8080/v1/events": 2,
}

STEP_TIMEOUT = 60

# The order the pages' sh blocks run in, after README.md: the guides the
# README's map points to. A docs/*.md not listed runs after them, by name.
SH_ORDER = ["docs/api.md", "docs/catalogs.md", "docs/streams.md", "docs/engines.md",
            "docs/ofrep.md", "docs/operations.md"]

# Pages whose sh blocks are not steps for this script: make readme-blocks
# runs each as a request and holds it to the `http` block after it.
SH_ELSEWHERE = {"docs/ofrep-design.md"}


# The languages a fenced block may name: each has a runner (sh here, the
# others in blocks_test.py) or is shown only (text: a schematic or a
# transcript no runner checks).
LANGUAGES = {"sh", "js", "go", "c", "json", "yaml", "http", "text"}

FENCE = re.compile(r"^\s*```(.*)$")


def fences(text):
    """Yield (line number of the first body line, language, [lines], heading)
    of every fenced block, the heading being the nearest one above it."""
    lines = text.split("\n")
    heading = ""
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            lang = m.group(1).strip()
            start = i + 2
            body = []
            i += 1
            while i < len(lines) and not FENCE.match(lines[i]):
                body.append(lines[i])
                i += 1
            yield start, lang, body, heading
        elif lines[i].startswith("#"):
            heading = lines[i].lstrip("#").strip()
        i += 1


def blocks(text):
    """Yield (line number, [lines]) of each ```sh block."""
    for start, lang, body, _ in fences(text):
        if lang == "sh":
            yield start, body


def no_repeats(pairs):
    """json.loads' object hook: a member named twice is an error, as in
    splitkd's own reader."""
    names = [k for k, _ in pairs]
    for k in names:
        if names.count(k) > 1:
            raise ValueError(f"member {k!r} given twice")
    return dict(pairs)


def markdown_files(repo):
    """README.md and every docs/*.md, as paths relative to REPO."""
    docs = sorted(f for f in os.listdir(os.path.join(repo, "docs")) if f.endswith(".md"))
    return ["README.md"] + [f"docs/{f}" for f in docs]


def sh_files(repo):
    """The pages whose sh blocks run here, in the order they run."""
    docs = [f for f in markdown_files(repo) if f != "README.md" and f not in SH_ELSEWHERE]
    rank = {f: i for i, f in enumerate(SH_ORDER)}
    return ["README.md"] + sorted(docs, key=lambda f: (rank.get(f, len(SH_ORDER)), f))


def lint_fences(repo, failures):
    """Every fenced block names a known language; every json block parses."""
    count = 0
    for rel in markdown_files(repo):
        text = open(os.path.join(repo, rel), encoding="utf-8").read()
        for start, lang, body, _ in fences(text):
            count += 1
            if lang not in LANGUAGES:
                failures.append(f"{rel}:{start - 1}: a fenced block names "
                                f"{lang or 'no language'!r}, not one of {', '.join(sorted(LANGUAGES))}")
            elif lang == "json":
                try:
                    json.loads("\n".join(body), object_pairs_hook=no_repeats)
                except ValueError as e:
                    failures.append(f"{rel}:{start - 1}: a json block that is not JSON ({e}); "
                                    "a schematic one is `text`")
    return count


def steps(start, body, rel="README.md"):
    """Split a block into steps: (line, command text, [expectations])."""
    out = []
    cur = None
    for n, line in enumerate(body, start):
        s = line.strip()
        if s.startswith("# ->"):
            if cur is None:
                raise SystemExit(f"{rel}:{n}: '# ->' before any command")
            cur[2].append((n, s[4:].strip()))
            continue
        if not s or s.startswith("#"):
            if cur is not None and cur[1] and not cur[1][-1].rstrip().endswith(("\\", "|")):
                out.append(cur)
                cur = None
            continue
        if cur is None or cur[2]:
            if cur is not None:
                out.append(cur)
            cur = [n, [], []]
        cur[1].append(line)
    if cur is not None:
        out.append(cur)
    return [(n, "\n".join(cmd), exp) for n, cmd, exp in out]


def check_sizes(repo, failures):
    """The page's file sizes, as the page quoting them (README.md) says."""
    text = "\n".join(open(os.path.join(repo, rel), encoding="utf-8").read() for rel in markdown_files(repo))
    m = re.search(r"`index\.html` ([\d,]+) bytes, `app\.js` ([\d,]+) and\s+"
                  r"`style\.css` ([\d,]+) \(([\d,]+) in all", text)
    if not m:
        failures.append("README.md and docs/: the page's file sizes sentence is gone")
        return
    said = [int(g.replace(",", "")) for g in m.groups()]
    real = [os.path.getsize(os.path.join(repo, "api/ui", f))
            for f in ("index.html", "app.js", "style.css")]
    real.append(sum(real))
    for name, a, b in zip(("index.html", "app.js", "style.css", "in all"), said, real):
        if a != b:
            failures.append(f"README.md and docs/: the page's {name} is said to be {a:,} bytes, it is {b:,}")


def wait_port(port, proc, seconds=10):
    import socket
    end = time.time() + seconds
    while time.time() < end:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def stop_strays(scratch):
    """SIGTERM what the blocks left running in the background (a second
    daemon, a stream): the processes whose working directory is the
    scratch, all started by this run."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{pid}/cwd") == scratch and int(pid) != os.getpid():
                os.kill(int(pid), 15)
        except OSError:
            pass


def run(repo):
    failures = []
    check_sizes(repo, failures)
    fenced = lint_fences(repo, failures)
    print(f"readme-test: {fenced} fenced blocks of README.md and docs/ checked for a language (and json for JSON)")

    scratch = make_scratch(repo, "splitkd-readme-")
    env_file = os.path.join(scratch, ".readme-env")
    open(env_file, "w").close()
    log = open(os.path.join(scratch, ".splitkd.log"), "w")
    daemon = subprocess.Popen([os.path.join(repo, "build/splitkd"), "--listen", "127.0.0.1:8080"],
                              cwd=scratch, stdout=log, stderr=log, start_new_session=True)
    ran = skipped = 0
    per_file = []
    try:
        if not wait_port(8080, daemon):
            raise SystemExit("readme-test: build/splitkd did not listen on 127.0.0.1:8080")
        for rel in sh_files(repo):
            text = open(os.path.join(repo, rel), encoding="utf-8").read()
            before = ran
            for start, body in blocks(text):
                r, s = run_block(rel, start, body, scratch, env_file, failures)
                ran += r
                skipped += s
            per_file.append(f"{rel} {ran - before}")
    finally:
        os.killpg(daemon.pid, 15)
        daemon.wait(10)
        stop_strays(scratch)
    for f in failures:
        print("readme-test: FAIL " + f, file=sys.stderr)
    print(f"readme-test: steps by page: {', '.join(per_file)}")
    print(f"readme-test: {ran} steps run, {skipped} blocks not run, {len(failures)} failures")
    if failures:
        print(f"readme-test: scratch kept in {scratch}", file=sys.stderr)
        return 1
    shutil.rmtree(scratch)
    return 0


def run_block(rel, start, body, scratch, env_file, failures):
    """Runs one sh block of REL, step by step; returns (steps run, blocks
    not run)."""
    first = next((l.strip() for l in body if l.strip() and not l.strip().startswith("#")), "")
    reason = next((r for k, r in SKIP.items() if first.startswith(k)), None)
    if reason:
        print(f"readme-test: {rel}:{start}: not run: {reason}")
        return 0, 1
    ran = 0
    for line, cmd, expects in steps(start, body, rel):
        ran += 1
        if "…" in cmd:
            failures.append(f"{rel}:{line}: a literal '…' in a command: {cmd}")
            continue
        limit = next((t for k, t in UNTIL_TIMEOUT.items() if cmd.startswith(k)), None)
        # set -e: a step fails at its first failing command, not
        # only at its last; the variables are kept either way.
        script = (f"set -a\n. {shlex.quote(env_file)}\n"
                  f"trap \"export -p | grep -Ev '^declare -x (PWD|OLDPWD|SHLVL|_)=' > {shlex.quote(env_file)}\" EXIT\n"
                  f"set -e -o pipefail\n{cmd}\n")
        err = ""
        try:
            p = subprocess.run(["bash", "-c", script], cwd=scratch, capture_output=True,
                               text=True, timeout=limit or STEP_TIMEOUT)
            out, rc, err = p.stdout, p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc = 0 if limit else "timeout"
        want_rc = [0]
        pos = 0
        for n, want in expects:
            m = re.fullmatch(r"exit (\d+(?: or \d+)*)", want)
            if m:
                want_rc = [int(x) for x in m.group(1).split(" or ")]
                continue
            at = out.find(want, pos)
            if at < 0:
                failures.append(f"{rel}:{n}: '{want}' is not in what `{cmd}` printed:\n{out[:2000]}")
            else:
                pos = at + len(want)
        if rc not in want_rc:
            failures.append(f"{rel}:{line}: `{cmd}` exited {rc}, the page says "
                            f"{' or '.join(map(str, want_rc))}:\n"
                            f"{out[:1000]}{err[:1000]}")
    return ran, 0


def make_scratch(repo, prefix):
    """A scratch directory holding a symbolic link to each top-level entry
    of REPO, so that build/splitkd and tests/... resolve as in a checkout."""
    scratch = tempfile.mkdtemp(prefix=prefix)
    for name in os.listdir(repo):
        if name != ".git":
            os.symlink(os.path.join(repo, name), os.path.join(scratch, name))
    return scratch


def enter_namespace(name, script, args):
    """Run SCRIPT ARGS again in a network namespace of its own, loopback up,
    so that 127.0.0.1:8080 and :8443 are free; returns its exit status, or
    None when already inside (SPLITKD_README_NS=1)."""
    if os.environ.get("SPLITKD_README_NS") == "1":
        return None
    inner = ("ip link set lo up && SPLITKD_README_NS=1 exec "
             + " ".join(shlex.quote(a) for a in [sys.executable, os.path.abspath(script), *args]))
    if not shutil.which("unshare") or subprocess.call(
            ["unshare", "-n", "sh", "-c", "ip link set lo up"], stderr=subprocess.DEVNULL) != 0:
        print(f"{name}: cannot make a network namespace (unshare -n needs root or "
              "CAP_SYS_ADMIN, and ip from iproute2): the README's localhost:8080 "
              "could collide with another daemon, so this is a failure, not a skip",
              file=sys.stderr)
        return 1
    return subprocess.call(["unshare", "-n", "--kill-child", "sh", "-c", inner])


def main():
    repo = os.path.abspath(sys.argv[1])
    rc = enter_namespace("readme-test", __file__, [repo])
    if rc is not None:
        return rc
    return run(repo)


if __name__ == "__main__":
    sys.exit(main())
