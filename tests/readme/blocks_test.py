#!/usr/bin/env python3
# SPDX-License-Identifier: AGPL-3.0-only
#
# make readme-blocks: every fenced block of README.md and docs/*.md that is
# not a `sh` block of a page make readme-test runs (rt.sh_files: the README
# and the guides; it runs those, and
# checks that every block names its language), run as pasted and held to
# what it says it prints. A block is found by the heading above it, its
# language and its rank among that heading's blocks of that language (RUNNERS
# below); a block no runner claims fails the test, so a new one is run or
# says here why not.
#
# Where: in readme_test.py's network namespace (127.0.0.1:8080 and :8443
# free) and a scratch directory linked to the checkout, plus node_modules
# linked to tests/ofrep's (the packages `make ofrep-test` pins in its
# package-lock.json; the Makefile runs `npm ci` there first).
#
# What each runner does:
#   js    The block's first line, `// $ COMMAND`, is how a reader runs it:
#         the block is written to the file COMMAND names and COMMAND runs in
#         bash. Its `// -> TEXT` lines are what it prints, one per step of
#         its scenario, in order:
#           server SDK  splitkd up; then nothing listening (the defaults,
#                       exit 0)
#           web SDK     nothing listening (the default; the process stays up
#                       past its retry); splitkd started (its answer, then
#                       its stream open or a poll answered 304); splitkd
#                       stopped (no crash, the last answer); started again
#                       with hopper at 100 SMs (the new answer). Over SSE and
#                       over polling, one block each.
#           HTTPS       splitkd on :8443 with tests/tls/make-certs.sh's
#                       certificate, as docs/operations.md's TLS section starts it
#   go    Not run: the OpenFeature Go SDK and its OFREP provider are not
#         Debian packages and the Go module proxy is not reachable here (nor
#         would Debian 12's Go 1.19 build them: their go.mod files ask for
#         1.24). tests/readme/gocheck.go holds it to what needs no import:
#         it parses, it is a program, every package it names is imported and
#         every import used.
#   yaml  prometheus.yml written beside a copy of
#         docker/prometheus/splitkd-rules.yaml, as docs/operations.md says to put
#         it, and `promtool check config` on it (which checks the rules too).
#   json  docs/catalogs.md's catalog: `build/splitkd --check-catalog`, then served:
#         the split count the sentence after it gives. docs/ofrep-design.md's
#         answers: equal, member for member and in order, to what splitkd
#         answers the request named here.
#   sh + http  docs/ofrep-design.md's examples: each `sh` block is a
#         `curl -si` request and the `http` block after it its answer as
#         splitkd gives it (Date, Cache-Control and Content-Length removed),
#         byte for byte, and, where the line before names a golden file
#         (`ofrep-x`), its status, type, ETag and body are the golden's too;
#         `--write` rewrites those `http` blocks from the live answers.
#   c     `make contract` (in make test) compiles and runs it.
# Then the self-test: each runner again on its block broken (the first
# import removed, a path misspelt, a member dropped from an answer) must
# fail, so a runner that would pass anything is caught.
#
# usage: blocks_test.py REPO [--write] [--gocheck PATH]

import dataclasses
import difflib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readme_test as rt  # noqa: E402  (the helpers beside this file)

SEED = {"target": "h100", "model": "qwen3.8-27b", "max_batch_size": 16}
STEP_S = 20  # one step of a scenario: many times what it takes idle
DOWN_HOLD_S = 3  # nothing listening: longer than the web blocks' 2 s retry
RUN_S = 60  # one run of a one-shot block


class Failure(Exception):
    pass


class BreakError(Exception):
    """The self-test could not break a block: its own fault, never a pass."""


@dataclasses.dataclass(frozen=True)
class Block:
    rel: str  # README.md, docs/x.md
    line: int  # its first body line
    lang: str
    body: tuple  # its lines
    heading: str
    rank: int  # among this heading's blocks of this language, from 1
    before: str  # the paragraph before it
    after: str  # the paragraph after it

    @property
    def text(self):
        return "\n".join(self.body) + "\n"

    @property
    def where(self):
        return f"{self.rel}:{self.line - 1}"

    def with_text(self, text):
        return dataclasses.replace(self, body=tuple(text.rstrip("\n").split("\n")))


def collect(repo):
    out = []
    for rel in rt.markdown_files(repo):
        text = open(os.path.join(repo, rel), encoding="utf-8").read()
        lines = text.split("\n")
        ranks = {}
        for start, lang, body, heading in rt.fences(text):
            ranks[(heading, lang)] = ranks.get((heading, lang), 0) + 1
            before = paragraph(reversed(lines[:start - 2]))[::-1]
            after = paragraph(lines[start + len(body):])
            out.append(Block(rel, start, lang, tuple(body), heading, ranks[(heading, lang)],
                             " ".join(before), " ".join(after)))
    return out


def paragraph(lines):
    """The first run of non-blank lines of LINES (past blank ones)."""
    para = []
    for line in lines:
        if para and not line.strip():
            break
        if line.strip():
            para.append(line)
    return para


# ---------------------------------------------------------------- processes

class Daemon:
    """build/splitkd on 127.0.0.1:PORT, started in the scratch."""

    def __init__(self, ctx, port, args=()):
        self.path = os.path.join(ctx.scratch, f".splitkd-{port}.log")
        self.log = open(self.path, "a")
        self.since = self.log.tell()
        self.proc = subprocess.Popen([ctx.bin, "--listen", f"127.0.0.1:{port}", *args], cwd=ctx.scratch,
                                     stdout=self.log, stderr=self.log, start_new_session=True)
        if not rt.wait_port(port, self.proc):
            self.stop()
            raise Failure(f"build/splitkd {' '.join(args)} did not listen on 127.0.0.1:{port}")

    def logged(self, pattern, seconds):
        """Whether this run's log has a line matching PATTERN within SECONDS."""
        end = time.time() + seconds
        while time.time() < end:
            with open(self.path) as f:
                f.seek(self.since)
                if re.search(pattern, f.read(), re.M):
                    return True
            time.sleep(0.05)
        return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Program:
    """A block's command, running; its standard output read line by line."""

    def __init__(self, ctx, command):
        self.proc = subprocess.Popen(["bash", "-c", command], cwd=ctx.scratch, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.lines, self.err = [], []
        self.cond = threading.Condition()
        self.readers = [threading.Thread(target=self._read, args=(s, l), daemon=True)
                        for s, l in ((self.proc.stdout, self.lines), (self.proc.stderr, self.err))]
        for t in self.readers:
            t.start()

    def _read(self, stream, into):
        for line in stream:
            with self.cond:
                into.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def running(self):
        return self.proc.poll() is None

    def wait_for(self, text, start, seconds):
        """The index of the first line from START on that holds TEXT; None
        when the program exits or SECONDS pass first."""
        end = time.time() + seconds
        with self.cond:
            while True:
                for i in range(start, len(self.lines)):
                    if text in self.lines[i]:
                        return i
                if self.proc.poll() is not None and not any(t.is_alive() for t in self.readers):
                    return None
                left = end - time.time()
                if left <= 0:
                    return None
                self.cond.wait(min(left, 0.2))

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for t in self.readers:
            t.join(5)

    def said(self):
        out = "\n".join(self.lines[-20:]) or "(nothing)"
        err = "\n".join(self.err[-10:])
        state = "running" if self.running() else f"exited {self.proc.returncode}"
        return f"it printed ({state}):\n{out}" + (f"\nstderr:\n{err}" if err else "")


def run_once(ctx, command):
    try:
        return subprocess.run(["bash", "-c", command], cwd=ctx.scratch, capture_output=True, text=True,
                              timeout=RUN_S)
    except subprocess.TimeoutExpired:
        raise Failure(f"`{command}` ran for more than {RUN_S} s")


def live(method, port, path, body=None):
    """(status, headers, body) of a request to splitkd, no proxy asked."""
    data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=10) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


# ---------------------------------------------------------------- js

def js_setup(ctx, block, steps):
    """Writes the block where its `// $ COMMAND` line says; returns COMMAND
    and its `// -> TEXT` lines, which must be one per step."""
    m = re.fullmatch(r"// \$ (.+)", block.body[0]) if block.body else None
    if not m:
        raise Failure("its first line is not `// $ COMMAND` (how to run it)")
    command = m.group(1)
    files = [w for w in command.split() if re.fullmatch(r"[\w./-]+\.m?js", w)]
    if len(files) != 1:
        raise Failure(f"`{command}` names no single .mjs file to write the block to")
    with open(os.path.join(ctx.scratch, files[0]), "w") as f:
        f.write(block.text)
    want = [m.group(1) for m in (re.fullmatch(r"\s*// -> (.+)", l) for l in block.body) if m]
    if len(want) != steps:
        raise Failure(f"{len(want)} `// ->` lines, and its scenario has {steps} steps")
    return command, want


def run_server_sdk(ctx, block):
    command, want = js_setup(ctx, block, 2)
    daemon = Daemon(ctx, 8080)
    try:
        up = run_once(ctx, command)
    finally:
        daemon.stop()
    down = run_once(ctx, command)  # nothing listening now
    for name, r, w in (("with splitkd up", up, want[0]), ("with nothing listening", down, want[1])):
        if r.returncode != 0 or w not in r.stdout:
            raise Failure(f"{name}, `{command}` exited {r.returncode} and printed:\n{r.stdout}{r.stderr[-1500:]}"
                          f"\nnot '{w}'")
    return f"'{want[0]}', then with nothing listening '{want[1]}'"


def run_web(ctx, block):
    command, want = js_setup(ctx, block, 4)
    prog = Program(ctx, command)
    daemon = None

    def expect(i, start, step):
        at = prog.wait_for(want[i], start, STEP_S)
        if at is None:
            when = "before it exited" if not prog.running() else f"within {STEP_S} s"
            raise Failure(f"{step}: no '{want[i]}' {when}; {prog.said()}")
        return at

    try:
        at = expect(0, 0, "nothing listening")
        time.sleep(DOWN_HOLD_S)
        if not prog.running():
            raise Failure(f"nothing listening: it did not stay up; {prog.said()}")
        other = [l for l in prog.lines if want[0] not in l]
        if other:
            raise Failure(f"nothing listening: it printed more than its default; {prog.said()}")
        daemon = Daemon(ctx, 8080)
        at = expect(1, at + 1, "splitkd started")
        # A scheduler runs a while before splitkd goes: its stream open, or a
        # poll answered. (A stream first opened after a change it missed hears
        # `hello` only, and the provider does not refetch on that.)
        if not daemon.logged(r'access (GET "/v1/events" 200|POST "/ofrep/v1/evaluate/flags" 304)', STEP_S):
            raise Failure(f"splitkd started: neither a stream opened nor a poll answered 304; {prog.said()}")
        daemon.stop()
        daemon = None
        at = expect(2, at + 1, "splitkd stopped")
        daemon = Daemon(ctx, 8080, ["--catalog", ctx.hopper_100])
        at = expect(3, at + 1, "splitkd back with hopper at 100 SMs")
        if not prog.running():
            raise Failure(f"it exited; {prog.said()}")
    finally:
        prog.stop()
        if daemon:
            daemon.stop()
    return " -> ".join(f"'{w}'" for w in want)


def run_https(ctx, block):
    command, want = js_setup(ctx, block, 1)
    if not os.path.exists(os.path.join(ctx.scratch, "tls", "ca.pem")):
        subprocess.run(["sh", "tests/tls/make-certs.sh", "tls"], cwd=ctx.scratch, check=True,
                       stdout=subprocess.DEVNULL)
    daemon = Daemon(ctx, 8443, ["--tls-cert", "tls/server.pem", "--tls-key", "tls/server-key.pem"])
    try:
        r = run_once(ctx, command)
    finally:
        daemon.stop()
    if r.returncode != 0 or want[0] not in r.stdout:
        raise Failure(f"`{command}` exited {r.returncode} and printed:\n{r.stdout}{r.stderr[-1500:]}\nnot '{want[0]}'")
    return f"'{want[0]}' from splitkd on https://localhost:8443"


def misspell_ca(block):
    return block.with_text(block.text.replace("tls/ca.pem", "tls/ca-missing.pem", 1))


misspell_ca.what = "the CA's path misspelt"


def drop_first_import(block):
    """A reader's slip: the first import line gone (JavaScript's `import ...
    from`, a Go import block's first path)."""
    lines = list(block.body)
    pattern = r'\s*"[\w./-]+"$' if block.lang == "go" else r"\s*import\s"
    at = next(i for i, l in enumerate(lines) if re.match(pattern, l))
    del lines[at]
    return block.with_text("\n".join(lines))


drop_first_import.what = "its first import removed"


# ---------------------------------------------------------------- go

def run_go(ctx, block):
    m = re.fullmatch(r"// \$ (.+)", block.body[0]) if block.body else None
    if not m:
        raise Failure("its first line is not `// $ COMMAND` (how to run it)")
    path = os.path.join(ctx.scratch, "scheduler.go")
    with open(path, "w") as f:
        f.write(block.text)
    if not ctx.gocheck:
        raise Failure("no --gocheck: the Makefile builds tests/readme/gocheck.go")
    r = subprocess.run([ctx.gocheck, path], capture_output=True, text=True, timeout=RUN_S)
    if r.returncode != 0:
        raise Failure(f"gocheck:\n{r.stderr}")
    ctx.shown.append(block)
    return ("parsed, a program, every package named imported and every import used; NOT RUN: the "
            "OpenFeature Go SDK and OFREP provider are no Debian packages and the Go module proxy is "
            "not reachable here")


# ---------------------------------------------------------------- yaml

def run_prometheus_yml(ctx, block):
    if block.body[0].strip() != "# prometheus.yml":
        raise Failure("its first line is not `# prometheus.yml`")
    d = os.path.join(ctx.scratch, "prometheus")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "prometheus.yml"), "w") as f:
        f.write(block.text)
    # as docs/operations.md says: a copy of the rules beside prometheus.yml
    shutil.copy(os.path.join(ctx.repo, "docker/prometheus/splitkd-rules.yaml"), d)
    r = subprocess.run(["promtool", "check", "config", "prometheus/prometheus.yml"], cwd=ctx.scratch,
                       capture_output=True, text=True, timeout=RUN_S)
    out = r.stdout + r.stderr
    if r.returncode != 0 or "SUCCESS: 1 rule files found" not in out or "rules found" not in out:
        raise Failure(f"promtool check config exited {r.returncode}:\n{out}")
    return "promtool check config: " + "; ".join(l.strip() for l in out.splitlines() if "SUCCESS" in l)


def misspell_rules(block):
    return block.with_text(block.text.replace("splitkd-rules.yaml", "splitkd-rule.yaml"))


misspell_rules.what = "the rules' path misspelt"


# ---------------------------------------------------------------- json

def run_catalog(ctx, block):
    path = os.path.join(ctx.scratch, "constants.json")
    with open(path, "w") as f:
        f.write(block.text)
    r = subprocess.run([ctx.bin, "--check-catalog", "constants.json"], cwd=ctx.scratch, capture_output=True,
                       text=True, timeout=RUN_S)
    if r.returncode != 0:
        raise Failure(f"--check-catalog exited {r.returncode}: {r.stdout}{r.stderr}")
    m = re.search(r"`(\w[\w.-]*)` and `(\w[\w.-]*)` get (\d+) splits", block.after)
    if not m:
        raise Failure(f"the paragraph after it says no \"`TARGET` and `MODEL` get N splits\": {block.after}")
    daemon = Daemon(ctx, 8081, ["--catalog", "constants.json"])
    try:
        status, _, body = live("GET", 8081, f"/v1/splits?target={m.group(1)}&model={m.group(2)}")
    finally:
        daemon.stop()
    got = json.loads(body).get("num_splits") if status == 200 else body
    if got != int(m.group(3)):
        raise Failure(f"served, {m.group(1)} and {m.group(2)} get {got} splits, the page says {m.group(3)}")
    return f"{r.stdout.strip()}; served: {m.group(1)} and {m.group(2)} get {got} splits, as the page says"


def break_json(block):
    return block.with_text(block.text.rstrip().rstrip("}"))


break_json.what = "its last brace gone"


def pairs_diff(want, got, path="$"):
    """Where two JSON values, read as ordered member lists, first differ."""
    if isinstance(want, list) and isinstance(got, list):
        objects = all(isinstance(x, tuple) for x in want + got)
        for i, (a, b) in enumerate(zip(want, got)):
            if objects:
                if a[0] != b[0]:
                    return f"{path}: member {i + 1} is {b[0]!r} in the answer, {a[0]!r} here"
                d = pairs_diff(a[1], b[1], f"{path}.{a[0]}")
            else:
                d = pairs_diff(a, b, f"{path}[{i}]")
            if d:
                return d
        if len(want) != len(got):
            extra = got[len(want):] or want[len(got):]
            names = [x[0] if isinstance(x, tuple) else x for x in extra]
            side = "only in the answer" if len(got) > len(want) else "only here"
            return f"{path}: {names} {side}"
        return None
    if want != got:
        return f"{path}: {got!r} in the answer, {want!r} here"
    return None


def live_answer(method, path, body=None):
    """A runner: the block equals, member for member and in order, what
    splitkd (the embedded catalog, on 8080) answers this request."""
    def run(ctx, block):
        pairs = lambda t: json.loads(t, object_pairs_hook=lambda p: [tuple(x) for x in p])  # noqa: E731
        _, _, answer = live(method, 8080, path, body)
        d = pairs_diff(pairs(block.text), pairs(answer))
        if d:
            raise Failure(f"not what splitkd answers {method} {path}: {d}\nsplitkd answers: {answer}")
        return f"equal, member for member, to splitkd's answer to {method} {path}"
    run.needs_daemon = True
    return run


def drop_member(block):
    """The drift issue 42 found: a member the answer has, missing here."""
    return _drop_member(block)


drop_member.what = "a member of the answer dropped"


JSON_VALUE = r'("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null|\[[^\[\]]*\]|\{[^{}]*\})'


def _drop_member(block):
    text = block.text
    for name in ("catalog_name", "eventStreams", "catalog", "key", "name"):
        for form in (f'"{name}":{JSON_VALUE},', f',"{name}":{JSON_VALUE}'):
            m = re.search(form, text)
            if m:
                return block.with_text(text[:m.start()] + text[m.end():])
    m = re.search(r"^ETag: .*\n", text, re.M)  # a 304: no body, its tag
    if m:
        return block.with_text(text[:m.start()] + text[m.end():])
    raise BreakError(f"{block.where}: no member to drop")


# ---------------------------------------------------------------- sh + http

HEADERS_TRIMMED = ("date:", "cache-control:", "content-length:")


def http_pair(ctx, block):
    """The `http` block after BLOCK (a curl -si request) in its file."""
    i = ctx.blocks.index(block)
    nxt = ctx.blocks[i + 1] if i + 1 < len(ctx.blocks) else None
    if nxt is None or nxt.rel != block.rel or nxt.lang != "http":
        raise Failure("a request with no `http` block after it for its answer")
    return nxt


def answer_of(ctx, command):
    r = run_once(ctx, "set -e -o pipefail\n" + command)
    if r.returncode != 0:
        raise Failure(f"`{command}` exited {r.returncode}: {r.stderr}")
    lines = r.stdout.replace("\r\n", "\n").split("\n")
    return "\n".join(l for l in lines if not l.lower().startswith(HEADERS_TRIMMED)).rstrip("\n")


def run_example(ctx, block, answer_block=None):
    if not block.text.lstrip().startswith("curl -si "):
        raise Failure("an example request that is not `curl -si ...`")
    shown = answer_block or http_pair(ctx, block)
    got = answer_of(ctx, block.text)
    want = shown.text.rstrip("\n")
    if got != want:
        if ctx.write and answer_block is None:
            ctx.rewrites.append((shown, got))
            return "rewritten from the live answer (--write)"
        diff = "\n".join(difflib.unified_diff(want.split("\n"), got.split("\n"), "shown", "splitkd", lineterm=""))
        raise Failure(f"the answer shown at {shown.where} is not splitkd's (make readme-blocks "
                      f"README_BLOCKS_WRITE=1 rewrites it):\n{diff}")
    m = re.search(r"\(`(ofrep-[\w-]+)`\)", block.before)
    if not m:
        return f"its answer ({shown.where}) is splitkd's, byte for byte"
    golden_matches(ctx, m.group(1), got)
    return f"its answer ({shown.where}) is splitkd's, byte for byte, and {m.group(1)}.golden's"


def golden_matches(ctx, name, answer):
    """The answer shown against tests/unit/golden/NAME.golden, which the
    unit tests hold the api to: status, type, ETag and body."""
    path = os.path.join(ctx.repo, "tests/unit/golden", name + ".golden")
    if not os.path.exists(path):
        raise Failure(f"it names {name}, and there is no {os.path.relpath(path, ctx.repo)}")
    first, body = open(path, encoding="utf-8").read().rstrip("\n").split("\n", 1)
    status, ctype, _, etag = first.split(" ")
    head, _, shown_body = answer.partition("\n\n")
    headers = dict(l.split(": ", 1) for l in head.split("\n")[1:])
    shown = (head.split(" ")[1], headers.get("Content-Type"), headers.get("ETag", "-"), shown_body)
    if shown != (status, ctype, etag.removeprefix("etag="), body):
        raise Failure(f"the answer shown is not {name}.golden's:\n  shown:  {shown}\n  golden: "
                      f"{(status, ctype, etag.removeprefix('etag='), body)}")


run_example.needs_daemon = True


def break_example(ctx, block):
    """The same request held to its answer with a member dropped."""
    shown = http_pair(ctx, block)
    return lambda: run_example(ctx, block, _drop_member(shown))


def write_rewrites(ctx):
    by_file = {}
    for shown, got in ctx.rewrites:
        by_file.setdefault(shown.rel, []).append((shown, got))
    for rel, items in by_file.items():
        path = os.path.join(ctx.repo, rel)
        lines = open(path, encoding="utf-8").read().split("\n")
        for shown, got in sorted(items, key=lambda x: -x[0].line):
            at = shown.line - 1
            lines[at:at + len(shown.body)] = got.split("\n")
        open(path, "w", encoding="utf-8").write("\n".join(lines))
        print(f"readme-blocks: rewrote {len(items)} answers in {rel}")


# ---------------------------------------------------------------- the table

SCHEDULER = "From a scheduler (OpenFeature, OFREP)"
ANSWERS = "5. Answers"
CONFIG = "7. `GET /ofrep/v1/configuration`"
EXAMPLES = "12. Examples"
BAD_TARGET = {"target": "hoper", "model": "qwen3.8-27b"}

# (file, heading, language, rank or "*") -> (runner, breakers)
RUNNERS = {
    ("docs/ofrep.md", SCHEDULER, "js", 1): (run_server_sdk, [drop_first_import]),
    ("docs/ofrep.md", SCHEDULER, "js", 2): (run_web, [drop_first_import]),
    ("docs/ofrep.md", SCHEDULER, "js", 3): (run_web, [drop_first_import]),
    ("docs/ofrep.md", SCHEDULER, "go", 1): (run_go, [drop_first_import]),
    ("docs/ofrep.md", SCHEDULER, "js", 4): (run_https, [drop_first_import, misspell_ca]),
    ("docs/catalogs.md", "The catalog", "json", 1): (run_catalog, [break_json]),
    ("docs/operations.md", "Dashboard and alerts", "yaml", 1): (run_prometheus_yml, [misspell_rules]),
    ("docs/ofrep-design.md", ANSWERS, "json", 1): (
        live_answer("POST", "/ofrep/v1/evaluate/flags/num_splits", {"context": SEED}), [drop_member]),
    ("docs/ofrep-design.md", ANSWERS, "json", 2): (
        live_answer("POST", "/ofrep/v1/evaluate/flags/num_splits", {"context": BAD_TARGET}), [drop_member]),
    ("docs/ofrep-design.md", CONFIG, "json", 1): (
        live_answer("GET", "/ofrep/v1/configuration"), [drop_member]),
    ("docs/ofrep-design.md", EXAMPLES, "sh", "*"): (run_example, "pair"),
}

# Blocks other targets run, or that are shown only: why.
NOT_HERE = {
    ("README.md", "Embedding the policy without HTTP", "c", 1):
        "make contract (in make test) compiles it against the installed library and runs it",
}


def runner_of(block):
    for key in ((block.rel, block.heading, block.lang, block.rank), (block.rel, block.heading, block.lang, "*")):
        if key in RUNNERS:
            return RUNNERS[key]
        if key in NOT_HERE:
            return NOT_HERE[key]
    return None


class Ctx:
    def __init__(self, repo, scratch, gocheck, write):
        self.repo, self.scratch, self.gocheck, self.write = repo, scratch, gocheck, write
        self.bin = os.path.join(repo, "build/splitkd")
        self.blocks = collect(repo)
        self.shown, self.rewrites = [], []
        # hopper at 100 SMs: ceil(2 * 100 / 24) = 9 splits where 132 give 11
        cat = json.loads(subprocess.run([self.bin, "--dump-catalog"], capture_output=True, text=True,
                                        check=True).stdout)
        for t in cat["targets"]:
            if t["name"] == "hopper":
                t["sm_count"] = 100
        self.hopper_100 = os.path.join(scratch, "hopper-100.json")
        with open(self.hopper_100, "w") as f:
            json.dump(cat, f)


def run(repo, gocheck, write):
    scratch = rt.make_scratch(repo, "splitkd-blocks-")
    os.symlink(os.path.join(repo, "tests/ofrep/node_modules"), os.path.join(scratch, "node_modules"))
    ctx = Ctx(repo, scratch, gocheck, write)
    failures, passed, jobs = [], 0, []
    sh_pages = set(rt.sh_files(repo))

    for b in ctx.blocks:
        if (b.lang == "sh" and b.rel in sh_pages) or b.lang == "http":
            continue  # make readme-test's; a request's answer, claimed below
        r = runner_of(b)
        if r is None:
            failures.append(f"{b.where}: a {b.lang} block (rank {b.rank} under '{b.heading}') that no runner "
                            "claims: add one to RUNNERS in tests/readme/blocks_test.py, or say in NOT_HERE "
                            "which target runs it")
        elif isinstance(r, str):
            print(f"readme-blocks: {b.where} {b.lang}: not run here: {r}")
        else:
            jobs.append((b, r))
    # the http blocks are their requests' answers
    claimed = set()
    for b, (fn, _) in jobs:
        if fn is run_example:
            try:
                claimed.add(http_pair(ctx, b))
            except Failure as e:
                failures.append(f"{b.where}: {e}")
    for b in ctx.blocks:
        if b.lang == "http" and b not in claimed:
            failures.append(f"{b.where}: an http block that answers no `curl -si` request before it")

    def attempt(fn):
        try:
            return True, fn()
        except BreakError:
            raise
        except Failure as e:
            return False, str(e)
        except Exception:  # a fault of this script: failed, and said whole
            return False, traceback.format_exc()

    broken = [0]

    def report(b, ok, said):
        print(f"readme-blocks: {b.where} {b.lang}: {'ok: ' + said if ok else 'FAIL'}")
        if not ok:
            failures.append(f"{b.where}: {said}")
        return ok

    def self_test(b, what, fn):
        """B broken (WHAT) must fail its runner: FN runs it so."""
        try:
            ok, said = attempt(fn)
        except BreakError as e:
            failures.append(f"self-test: {e}")
            return
        broken[0] += 1
        if ok:
            failures.append(f"self-test: {b.where} broken ({what}) still passes: its runner sees nothing")
            return
        lines = [l.strip() for l in said.split("\n") if l.strip()]
        why = lines[0]
        if why.endswith(":"):  # a heading over what was printed: the error in it
            why = next((l for l in lines[1:] if re.search(r"Error|FAIL|undefined|not used|^not |^-", l)), why)
        print(f"readme-blocks: self-test: {b.where} broken ({what}) fails, as it must: {why[:150]}")

    def breakers_of(b, fn, breakers):
        if breakers == "pair":
            return [("a member dropped from its answer", break_example(ctx, b))]
        return [(getattr(br, "what", br.__name__), lambda br=br: fn(ctx, br(b))) for br in breakers]

    # the answers first, against one daemon with the embedded catalog
    on_daemon = [j for j in jobs if getattr(j[1][0], "needs_daemon", False)]
    daemon = Daemon(ctx, 8080)
    try:
        for b, (fn, breakers) in on_daemon:
            if report(b, *attempt(lambda: fn(ctx, b))):
                passed += 1
                for what, bfn in breakers_of(b, fn, breakers):
                    self_test(b, what, bfn)
    finally:
        daemon.stop()

    # then the blocks that start (and stop) their own
    for b, (fn, breakers) in [j for j in jobs if j not in on_daemon]:
        if report(b, *attempt(lambda: fn(ctx, b))):
            passed += 1
            for what, bfn in breakers_of(b, fn, breakers):
                self_test(b, what, bfn)

    if ctx.rewrites:
        write_rewrites(ctx)
    rt.stop_strays(scratch)
    for f in failures:
        print("readme-blocks: FAIL " + f, file=sys.stderr)
    shown = ", ".join(f"{b.where} {b.lang}" for b in ctx.shown)
    print(f"readme-blocks: {len(jobs)} blocks checked, {len(jobs) - len(ctx.shown)} of them run or compared as pasted, "
          f"{len(ctx.shown)} shown but not run ({shown or 'none'})")
    print(f"readme-blocks: self-test: {broken[0]} broken blocks, each failed its runner"
          if not any(f.startswith("self-test") for f in failures) else "readme-blocks: self-test FAILED")
    print(f"readme-blocks: {passed} passed, {len(failures)} failed")
    if failures:
        print(f"readme-blocks: scratch kept in {scratch}", file=sys.stderr)
        return 1
    shutil.rmtree(scratch)
    return 0


def main():
    args = sys.argv[1:]
    write = "--write" in args
    gocheck = None
    if "--gocheck" in args:
        gocheck = os.path.abspath(args[args.index("--gocheck") + 1])
    repo = os.path.abspath(args[0])
    again = [repo] + (["--write"] if write else []) + (["--gocheck", gocheck] if gocheck else [])
    rc = rt.enter_namespace("readme-blocks", __file__, again)
    if rc is not None:
        return rc
    return run(repo, gocheck, write)


if __name__ == "__main__":
    sys.exit(main())
