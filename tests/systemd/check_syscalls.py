#!/usr/bin/python3
# SPDX-License-Identifier: AGPL-3.0-only
"""Every system call splitkd makes is allowed by its unit's SystemCallFilter=.

`make syscall-check` runs the integration suites (HTTP, TLS, the watch, the
change streams, signals and drains, hostile clients...) with the daemon
under strace (scripts/strace-splitkd), collects the name of every call any
splitkd thread made after its exec, and expands the unit's filter with
`systemd-analyze syscall-filter` as systemd reads it:

  - the first SystemCallFilter= line without "~" makes an allow list, and
    systemd then adds @default to it itself;
  - a later line adds its calls to the list, a "~" line takes them away;
  - a group (@name) is expanded recursively.

A call made but not allowed would fail with EPERM (SystemCallErrorNumber=)
once the unit runs: that is a build failure here, named.

usage:
  check_syscalls.py --unit FILE --collect DIR TEST...  run the tests, then check
  check_syscalls.py --unit FILE --traces DIR           check traces already collected
      [--without GROUP]   the filter with GROUP taken away (~GROUP): must fail
                          for a group splitkd needs (the check's own test)
      [--names FILE]      write the calls seen, one a line
Exit status 0 all allowed, 1 some not (or no trace), 2 usage.
"""

import argparse
import os
import re
import subprocess
import sys
import time

# A call of each thing the suites must have exercised, or the traces
# cover less than they claim: the listener, libmicrohttpd's poll loop, the watch,
# TLS's randomness, the signals, a thread's exit.
EXPECTED = ["accept4", "poll", "inotify_init1", "inotify_add_watch",
            "getrandom", "rt_sigtimedwait", "clone3", "exit_group"]

CALL = re.compile(r"^(\d+) +([a-z0-9_]+)\(")
EXECVE = re.compile(r'^(\d+) +execve\(.* = 0$')


def expand(token, cache):
    """The system calls of a group or a name, as systemd-analyze lists them."""
    if not token.startswith("@"):
        return {token}
    if token in cache:
        return cache[token]
    out = subprocess.run(["systemd-analyze", "syscall-filter", token],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"check_syscalls: systemd-analyze syscall-filter {token} failed: {out.stderr.strip()}")
    calls = set()
    for line in out.stdout.splitlines()[1:]:
        word = line.strip()
        if not word or word.startswith("#"):
            continue
        calls |= expand(word, cache)
    if not calls:
        sys.exit(f"check_syscalls: systemd-analyze knows no calls in {token}")
    cache[token] = calls
    return calls


def filter_lines(unit):
    lines = []
    with open(unit, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("SystemCallFilter="):
                lines.append(line[len("SystemCallFilter="):])
    return lines


def allowed_calls(lines):
    """The allow list systemd builds from the unit's SystemCallFilter= lines."""
    cache = {}
    if not lines:
        sys.exit("check_syscalls: the unit has no SystemCallFilter=: nothing to check")
    if lines[0].startswith("~"):
        sys.exit("check_syscalls: the unit's filter is a deny list; this check reads allow lists")
    allowed = set(expand("@default", cache))
    for value in lines:
        deny = value.startswith("~")
        for token in value.lstrip("~").split():
            # an errno suffix (name:EPERM) changes the answer, not the list
            calls = expand(token.split(":")[0], cache)
            allowed = allowed - calls if deny else allowed | calls
    return allowed


def made_calls(trace):
    """The calls in one strace -f file, from the successful exec on."""
    seen = set()
    started = False
    with open(trace, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not started:
                started = EXECVE.match(line) is not None
                continue
            m = CALL.match(line)
            if m:
                seen.add(m.group(2))
    return seen if started else None


def wait_strace(directory, seconds=60):
    """strace writes the last of its file as it exits, after the daemon."""
    pids = []
    for name in os.listdir(directory):
        if name.startswith("strace.") and name[7:].isdigit():
            with open(os.path.join(directory, name), encoding="ascii") as f:
                pids.append(int(f.read().strip()))
    deadline = time.monotonic() + seconds
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            sys.exit(f"check_syscalls: strace {pid} still running after {seconds} s")


def collect(directory, tests, real_bin):
    os.makedirs(directory, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    wrapper = os.path.join(here, "..", "..", "scripts", "strace-splitkd")
    env = dict(os.environ, SPLITKD_BIN=os.path.abspath(wrapper),
               SPLITKD_REAL_BIN=os.path.abspath(real_bin),
               SPLITKD_STRACE_DIR=os.path.abspath(directory))
    for test in tests:
        t0 = time.monotonic()
        print(f"== {test} (daemon under strace -f)", flush=True)
        rc = subprocess.run([test, "--jobs", "2"], env=env, check=False).returncode
        if rc != 0:
            sys.exit(f"check_syscalls: {test} failed under strace (exit {rc}): its calls are not all seen")
        print(f"   {time.monotonic() - t0:.1f} s", flush=True)
    wait_strace(directory)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--unit", required=True)
    ap.add_argument("--collect", metavar="DIR")
    ap.add_argument("--traces", metavar="DIR")
    ap.add_argument("--bin", default="build/splitkd")
    ap.add_argument("--without", metavar="GROUP")
    ap.add_argument("--names", metavar="FILE")
    ap.add_argument("tests", nargs="*")
    args = ap.parse_args()
    directory = args.collect or args.traces
    if directory is None or (args.collect and not args.tests):
        ap.print_usage(sys.stderr)
        return 2
    if args.collect:
        collect(directory, args.tests, args.bin)

    traces = sorted(n for n in os.listdir(directory) if n.startswith("trace."))
    made, daemons, empty = set(), 0, []
    for name in traces:
        calls = made_calls(os.path.join(directory, name))
        if calls is None:
            empty.append(name)
            continue
        daemons += 1
        made |= calls
    if daemons == 0:
        print(f"check_syscalls: FAILED: no trace of a splitkd exec in {directory}", file=sys.stderr)
        return 1
    errors = os.path.join(directory, "strace-errors")
    if empty:
        # the wrapper waits until strace traces before it execs: a trace
        # without the exec lost the start of a run (strace says why)
        said = open(errors, encoding="utf-8").read().strip() if os.path.exists(errors) else ""
        print(f"check_syscalls: FAILED: {len(empty)} trace(s) without splitkd's exec "
              f"({' '.join(empty[:5])}): {said or 'strace said nothing'}", file=sys.stderr)
        return 1
    missing = [c for c in EXPECTED if c not in made]
    if missing:
        print(f"check_syscalls: FAILED: the traces lack {' '.join(missing)}: the suites "
              "did not run what they should under strace", file=sys.stderr)
        return 1
    if args.names:
        with open(args.names, "w", encoding="ascii") as f:
            f.write("".join(c + "\n" for c in sorted(made)))

    lines = filter_lines(args.unit)
    if args.without:
        lines.append("~" + args.without)
    allowed = allowed_calls(lines)
    denied = sorted(made - allowed)
    what = args.unit + (f" with {args.without} taken away" if args.without else "")
    print(f"syscalls: {len(made)} distinct calls made by {daemons} splitkd runs; "
          f"{len(allowed)} allowed by {what}")
    print("  made: " + " ".join(sorted(made)))
    if denied:
        print(f"check_syscalls: FAILED: {what} does not allow {len(denied)} call(s) splitkd makes: "
              + " ".join(denied), file=sys.stderr)
        return 1
    print(f"syscalls: ok, every call is allowed by {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
