#!/usr/bin/python3
# SPDX-License-Identifier: AGPL-3.0-only
"""A reconnect storm in one burst, on loopback (issue 52).

usage: tests/storm/burst.py path/to/splitkd [--streams N[,N...]] [--runs R]

For each N (default 5000,10000), one splitkd at its defaults
(--max-connections 1024, --max-streams 10000) and R runs in a row
(default 10). A run opens N change streams in one burst from one client
(127.0.0.1): N non-blocking sockets connect at once, each sends
GET /v1/events as soon as it is connected. Every one must get 200: none
reset, none closed unanswered, none refused, none still waiting after
DEADLINE s. Meanwhile a prober on another address (127.0.0.2) asks
/healthz, /readyz and a decision in turn, a fresh connection every 20 ms,
each answered 200 within PROBE_TIMEOUT s. When N is --max-streams, one
stream more must then get 503 with Retry-After. Then every stream is
closed and the next run waits for splitkd's streams gauge to be back at
0 (bounded).

Prints a line a run: opened (200), reset, closed unanswered, refused
(any other status), the time from the burst's first connect to its last
200, and the probes answered with their median, p99 and slowest wait.
Exits 1 when any run falls short. Every wait is bounded; the daemon it
starts is stopped, also on failure.
"""
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import threading
import time

DEADLINE = 60.0
PROBE_TIMEOUT = 2.0
PROBE_GAP = 0.02
MAX_STREAMS = 10000
PROBES = ["/healthz", "/readyz", "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16"]
REQUEST = b"GET /v1/events HTTP/1.1\r\nHost: storm\r\nAccept: text/event-stream\r\n\r\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path, source="127.0.0.2", timeout=PROBE_TIMEOUT):
    """One request on a fresh connection: (status, head), or (None, error)."""
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                      source_address=(source, 0)) as s:
            s.sendall(b"GET %s HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n" % path.encode())
            data = b""
            while b"\r\n\r\n" not in data:
                s.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            if b"\r\n\r\n" not in data:
                return None, "closed"
            head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
            return int(head.split(" ", 2)[1]), head
    except OSError as e:
        return None, str(e)


def streams_open(port):
    status, _ = get(port, "/readyz")
    if status is None:
        return None
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5,
                                      source_address=("127.0.0.2", 0)) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    for line in data.decode("latin-1").splitlines():
        if line.startswith("splitkd_streams "):
            return int(float(line.split()[1]))
    return None


class Prober(threading.Thread):
    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.stop = threading.Event()
        self.results = []  # (ok, seconds)

    def run(self):
        i = 0
        while not self.stop.is_set():
            t0 = time.monotonic()
            status, _ = get(self.port, PROBES[i % len(PROBES)])
            self.results.append((status == 200, time.monotonic() - t0))
            i += 1
            self.stop.wait(PROBE_GAP)


def burst(port, n):
    """N streams at once from 127.0.0.1; returns the counts and the sockets."""
    ep = select.epoll()
    socks, state = {}, {}
    counts = {"opened": 0, "reset": 0, "closed": 0, "refused": 0}
    last_200 = None
    t0 = time.monotonic()
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            counts["reset"] += 1
            s.close()
            continue
        socks[s.fileno()] = s
        state[s.fileno()] = [b"", False]  # what came back, request sent
        ep.register(s.fileno(), select.EPOLLOUT | select.EPOLLIN | select.EPOLLRDHUP)
    pending = len(socks)
    while pending > 0 and time.monotonic() - t0 < DEADLINE:
        for fd, ev in ep.poll(0.5):
            s, st = socks[fd], state[fd]
            if not st[1] and ev & select.EPOLLOUT and not ev & (select.EPOLLERR | select.EPOLLHUP):
                try:
                    s.send(REQUEST)  # 71 bytes: a new socket takes them whole
                    st[1] = True
                    ep.modify(fd, select.EPOLLIN | select.EPOLLRDHUP)
                except OSError:
                    counts["reset"] += 1
                    pending -= 1
                    ep.unregister(fd)
                    continue
            if ev & (select.EPOLLIN | select.EPOLLRDHUP | select.EPOLLERR | select.EPOLLHUP):
                try:
                    data = s.recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    counts["reset"] += 1
                    pending -= 1
                    ep.unregister(fd)
                    continue
                if not data:
                    counts["closed"] += 1
                    pending -= 1
                    ep.unregister(fd)
                    continue
                st[0] += data
                if b"\r\n" in st[0]:
                    status = int(st[0].split(b" ", 2)[1])
                    if status == 200:
                        counts["opened"] += 1
                        last_200 = time.monotonic()
                    else:
                        counts["refused"] += 1
                    pending -= 1
                    ep.unregister(fd)  # a stream: held open, not read further
    counts["waiting"] = pending
    ep.close()
    took = (last_200 - t0) if last_200 is not None else float("nan")
    return counts, took, list(socks.values())


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def one_run(port, n, label):
    prober = Prober(port)
    prober.start()
    time.sleep(0.1)
    counts, took, socks = burst(port, n)
    prober.stop.set()
    prober.join()
    over_ok, over = True, ""
    if n >= MAX_STREAMS:
        status, head = get(port, "/v1/events", source="127.0.0.1", timeout=5)
        over_ok = status == 503 and "retry-after:" in head.lower()
        over = ", one more: %s%s" % (status, " with Retry-After" if over_ok else " (want 503 with Retry-After)")
    for s in socks:
        s.close()
    oks = [t for ok, t in prober.results if ok]
    answered = len(oks)
    probes = len(prober.results)
    ok = (counts["opened"] == n and counts["reset"] == 0 and counts["closed"] == 0 and
          counts["refused"] == 0 and counts["waiting"] == 0 and answered == probes and
          probes > 0 and over_ok)
    print("%s: %d streams in one burst: %d opened (200), %d reset, %d closed unanswered, "
          "%d refused, %d still waiting; last 200 after %.2f s; probes from 127.0.0.2 %d/%d "
          "answered, median %.1f ms, p99 %.1f ms, slowest %.1f ms%s%s" % (
              label, n, counts["opened"], counts["reset"], counts["closed"], counts["refused"],
              counts["waiting"], took, answered, probes, 1000 * percentile(oks, 0.5),
              1000 * percentile(oks, 0.99), 1000 * max(oks, default=float("nan")), over,
              "" if ok else "  FAILED"), flush=True)
    return ok


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    binary = args[0]
    sizes, runs = [5000, 10000], 10
    if "--streams" in args:
        sizes = [int(x) for x in args[args.index("--streams") + 1].split(",")]
    if "--runs" in args:
        runs = int(args[args.index("--runs") + 1])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = max(sizes) + 256
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(need, soft)), hard))
    failures = 0
    for n in sizes:
        port = free_port()
        proc = subprocess.Popen([binary, "--listen", "127.0.0.1:%d" % port, "--access-log", "off"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while get(port, "/readyz", timeout=1)[0] != 200:
                if time.monotonic() > deadline or proc.poll() is not None:
                    sys.exit("burst: splitkd did not start")
                time.sleep(0.05)
            for r in range(runs):
                if not one_run(port, n, "run %d/%d" % (r + 1, runs)):
                    failures += 1
                t0, deadline = time.monotonic(), time.monotonic() + 30
                while streams_open(port) != 0 and time.monotonic() < deadline:
                    time.sleep(0.1)
                print("  (streams back to %s after %.1f s)" % (streams_open(port), time.monotonic() - t0))
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
    total = runs * len(sizes)
    print("%d passed, %d failed" % (total - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main())
