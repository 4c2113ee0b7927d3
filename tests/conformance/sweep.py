#!/usr/bin/env python3
# SPDX-License-Identifier: AGPL-3.0-only
"""The size sweep: every request size gets a whole HTTP answer, and SIGTERM
drains at once afterwards.

For each configuration (default flags, then --max-header 16384) this starts
splitkd on a free loopback port and sends, each on its own connection, over
raw sockets:
  - request targets of 1 byte to --max-header + 8 KiB,
  - request heads (request line and header lines) up to the same size, padded
    with one long header,
  - the same, padded with many header lines of about 64 bytes,
in steps of 64 bytes (a target's size is its own length; a head's is the
request line and header lines with the blank line that ends them, from the
smallest well-formed one up). Every request must get a complete answer: a status
line, header lines, and exactly the body its Content-Length announces. Then
SIGTERM, and splitkd must exit 0 in under 1 s, measured from the kill.

Prints, per configuration and kind, which status and Content-Type answered
which size range, and `N passed, M failed`. Exit 0 only when every request was
answered and every drain was fast.

usage: python3 tests/conformance/sweep.py [path/to/splitkd]
Standard library only.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import time

STEP = 64
# A healthy answer takes well under a millisecond here; 3 s per request
# allows for a loaded CI machine, and a sweep gives up after
# MAX_FAILURES unanswered requests so a server that hangs on every request
# still ends the test within minutes.
REQUEST_TIMEOUT = 3.0
MAX_FAILURES = 40
# The bound for the drain after the sweep. A drain with no
# connection left takes ~10-20 ms here, so 1 s is a wide margin; the failure
# it catches waits the whole --drain-timeout (10 s by default).
DRAIN_LIMIT = 1.0
START_TIMEOUT = 10.0

BASE_HEAD = "GET {target} HTTP/1.1\r\nHost: t\r\n"


class NoAnswer(Exception):
    pass


def read_answer(sock):
    """One whole answer: (status, content-type), or NoAnswer with why."""
    buf = b""
    deadline = time.monotonic() + REQUEST_TIMEOUT
    while b"\r\n\r\n" not in buf:
        buf += recv_some(sock, deadline, buf)
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"^HTTP/1\.[01] (\d{3})( .*)?$", lines[0])
    if not m:
        raise NoAnswer("not a status line: %r" % lines[0][:60])
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise NoAnswer("malformed header line: %r" % line[:60])
        headers[name.strip().lower()] = value.strip()
    if "content-length" not in headers:
        raise NoAnswer("status %s without Content-Length" % m.group(1))
    want = int(headers["content-length"])
    while len(body) < want:
        body += recv_some(sock, deadline, buf + body, "body %d of %d bytes" % (len(body), want))
    if len(body) > want:
        raise NoAnswer("%d bytes past Content-Length" % (len(body) - want))
    ctype = headers.get("content-type", "(none)").split(";")[0]
    return int(m.group(1)), ctype


def recv_some(sock, deadline, seen, what="head"):
    left = deadline - time.monotonic()
    if left <= 0:
        raise NoAnswer("timeout after %d bytes (%s)" % (len(seen), what))
    sock.settimeout(left)
    try:
        data = sock.recv(65536)
    except socket.timeout:
        raise NoAnswer("timeout after %d bytes (%s)" % (len(seen), what))
    except ConnectionResetError:
        raise NoAnswer("reset after %d bytes" % len(seen))
    if not data:
        raise NoAnswer("closed after %d bytes" % len(seen))
    return data


def exchange(port, request):
    with socket.create_connection(("127.0.0.1", port), timeout=REQUEST_TIMEOUT) as sock:
        try:
            sock.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before reading it all
        return read_answer(sock)


def target_request(size):
    """A request whose target is exactly `size` bytes."""
    if size < 12:
        target = "/" + "x" * (size - 1)
    else:
        target = "/healthz?p=" + "a" * (size - 11)
    return (BASE_HEAD.format(target=target) + "\r\n").encode()


def padding_lines(total, width):
    """Header lines adding exactly `total` bytes, each about `width` bytes
    (one line when width is None)."""
    out = []
    n = 0
    while total > 0:
        name = "X-Pad-%04d: " % n
        if width is None or total < 2 * width:
            value_len = total - len(name) - 2
        else:
            value_len = width - len(name) - 2
        out.append(name + "v" * value_len + "\r\n")
        total -= len(out[-1])
        n += 1
    return "".join(out)


def head_request(size, width):
    """A request whose request line and headers come to `size` bytes."""
    base = BASE_HEAD.format(target="/healthz")
    pad = size - len(base) - 2
    head = (base + (padding_lines(pad, width) if pad > 0 else "") + "\r\n").encode()
    assert len(head) == size, (size, len(head))
    return head


def sizes(lo, hi):
    out = list(range(lo, hi + 1, STEP))
    if out[-1] != hi:
        out.append(hi)
    return out


def start(binary, flags, log_path):
    """Starts splitkd with its stderr (access log included) in a file, so no
    pipe fills up, and reads its port from there."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([binary, "--listen", "127.0.0.1:0"] + flags,
                                stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        with open(log_path, "rb") as log:
            m = re.search(rb"listening on http://127\.0\.0\.1:(\d+)", log.read())
        if m:
            return proc, int(m.group(1))
        time.sleep(0.02)
    proc.kill()
    proc.wait()
    raise RuntimeError("splitkd did not start (see %s)" % log_path)


def sweep_kind(port, kind, builder, size_list):
    """[(size, outcome)]; outcome is 'STATUS content-type' or 'NO ANSWER: why'."""
    results = []
    failures = 0
    for size in size_list:
        try:
            status, ctype = exchange(port, builder(size))
            results.append((size, "%d %s" % (status, ctype)))
        except NoAnswer as e:
            results.append((size, "NO ANSWER: " + str(e)))
            failures += 1
        except OSError as e:
            results.append((size, "NO ANSWER: %s" % e))
            failures += 1
        if failures >= MAX_FAILURES:
            results.append((None, "gave up after %d unanswered requests" % failures))
            break
    return results


def ranges(results):
    """Runs of consecutive sizes with the same outcome."""
    out = []
    for size, outcome in results:
        key = outcome
        if out and out[-1][2] == key and size is not None:
            out[-1][1] = size
        else:
            out.append([size, size, key])
    return out


def run_config(binary, label, flags, max_header, log_path):
    print("== %s: sizes in steps of %d bytes" % (label, STEP))
    proc, port = start(binary, flags, log_path)
    passed = failed = 0
    try:
        top = max_header + 8192
        head_lo = len(BASE_HEAD.format(target="/healthz")) + 2
        kinds = [
            ("request target", target_request, sizes(1, top)),
            ("head, one long header", lambda s: head_request(s, None), sizes(head_lo, top)),
            ("head, ~64-byte lines", lambda s: head_request(s, 64), sizes(head_lo, top)),
        ]
        for kind, builder, size_list in kinds:
            results = sweep_kind(port, kind, builder, size_list)
            bad = [r for r in results if r[1].startswith("NO ANSWER") or r[0] is None]
            passed += len(results) - len(bad)
            failed += len(bad)
            print("  %s: %d sizes, %d answered" % (kind, len(size_list), len(results) - len(bad)))
            for lo, hi, outcome in ranges(results):
                span = "" if lo is None else ("%6d" % lo if lo == hi else "%6d..%-6d" % (lo, hi))
                print("    %-15s %s" % (span, outcome))
    finally:
        start_kill = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        took = time.monotonic() - start_kill
    ok = code == 0 and took < DRAIN_LIMIT
    print("  SIGTERM to exit: %.3f s, exit %s (%s: under %.1f s, exit 0)" %
          (took, code, "ok" if ok else "FAIL", DRAIN_LIMIT))
    return passed + (1 if ok else 0), failed + (0 if ok else 1)


def main():
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "splitkd"))
    if not os.access(binary, os.X_OK):
        print("sweep: %s is not an executable: build it first (make all)" % binary)
        return 2
    logdir = os.path.join(root, "build", "conformance")
    os.makedirs(logdir, exist_ok=True)
    started = time.monotonic()
    passed = failed = 0
    configs = [("default flags (--max-header 4096)", [], 4096, "sweep-default.log"),
               ("--max-header 16384", ["--max-header", "16384"], 16384, "sweep-16384.log")]
    for label, flags, max_header, log_name in configs:
        p, f = run_config(binary, label, flags, max_header, os.path.join(logdir, log_name))
        passed += p
        failed += f
    print("sweep took %.1f s (splitkd's logs in %s)" % (time.monotonic() - started,
                                                       os.path.relpath(logdir, root)))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
