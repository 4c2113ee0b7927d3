#!/usr/bin/env python3
# SPDX-License-Identifier: AGPL-3.0-only
"""Overload: third-party attack tools against splitkd on loopback, while an
honest client asks the seed's question from another address.

splitkd runs with --max-connections 256 on 127.0.0.1. Each attack comes from
127.0.0.1; the probes come from 127.0.0.2 (a distinct client to splitkd),
PROBE_HZ new connections a second, each asking
GET /v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16 and
checking the answer is the seed's (11 splits, 4224 slots). A probe that is
not answered correctly within PROBE_TIMEOUT seconds counts as unanswered.

  slowhttptest -H (slowloris), -B (slow body), 400 connections:
      >= 99% of probes answered correctly, p99 latency <= 100 ms
  slowhttptest -X (slow read), 400 connections, three floods one after
      another: each >= 99% answered, p99 and the slowest probe <= 100 ms;
      splitkd's CPU in each flood printed (what a regression looks like:
      see slow_read)
  wrk -c 1000: >= 95% answered (latency printed, not judged)
  change streams (GET /v1/events) opened from one address up to and past
      --max-streams (128, given), held, and refused ones retried:
      >= 99% of probes answered, p99 <= 100 ms; the cap holds (never more
      open) and every refusal is a 503 with Retry-After
  250 connections each sending a 999,999-byte body (all but its last
  byte, so that it stays buffered) and holding the connection: resident memory stays under --body-budget + 32 MiB, and is
  back under 32 MiB within 5 s after they close

Then the same again over TLS (a second splitkd with --tls-cert, a test PKI
from tests/tls/make-certs.sh, probes over TLS trusting its CA):
  slowhttptest -H and -B against https://: >= 99% answered, p99 <= 500 ms
  (the attack's own handshakes cost CPU a plain connect does not)
  400 connections that send the first bytes of a TLS ClientHello and
  stall (a slow handshake) against --header-timeout 2: >= 99% answered
  (p99 <= 500 ms),
  and the stalled handshakes closed by the header deadline

The latency bound is the behaviour asked for (a probe answered under
attack), so it is asserted; it is 100 ms on a path that takes well under
1 ms unloaded, a wide margin on a shared 2-core machine. Every process the
test starts is stopped by it, also on failure. Bounded: ATTACK_SECONDS per
attack, about two minutes in all.

usage: tests/overload/overload.py path/to/splitkd
"""
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/splitkd"
ATTACK_SECONDS = int(os.environ.get("ATTACK_SECONDS", "20"))
PROBE_HZ = 10
PROBE_TIMEOUT = 2.0
BUDGET = 64 << 20  # the default --body-budget
QUERY = "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16"
procs = []


def start(argv, **kw):
    p = subprocess.Popen(argv, **kw)
    procs.append(p)
    return p


def stop_all():
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 10
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_answer(s):
    """Reads one HTTP answer; returns (status, body) or raises."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed before an answer")
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    m = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
    length = int(m.group(1)) if m else 0
    while len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed mid-answer")
        body += chunk
    return int(head.split(b" ", 2)[1]), body


def connect(port, timeout, tls):
    """A connection from 127.0.0.2; over TLS when tls is an SSLContext."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                 source_address=("127.0.0.2", 0))
    # Over TLS the client's Finished and its request are two small writes:
    # with Nagle the second waits for the server's delayed ACK (~40 ms)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return tls.wrap_socket(s, server_hostname="localhost") if tls else s


def probe_once(port, tls=None):
    """One honest client: a new connection from 127.0.0.2, the seed's question."""
    t0 = time.monotonic()
    try:
        s = connect(port, PROBE_TIMEOUT, tls)
        with s:
            s.settimeout(max(0.05, PROBE_TIMEOUT - (time.monotonic() - t0)))
            s.sendall(f"GET {QUERY} HTTP/1.1\r\nHost: splitkd\r\nConnection: close\r\n\r\n".encode())
            status, body = read_answer(s)
        ok = (status == 200 and b'"num_splits":11,' in body and b'"workspace_slots":4224,' in body)
    except OSError:
        ok = False
    return ok, time.monotonic() - t0


class Prober(threading.Thread):
    def __init__(self, port, tls=None):
        super().__init__(daemon=True)
        self.port, self.tls, self.results, self.stop = port, tls, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            t = time.monotonic()
            self.results.append(probe_once(self.port, self.tls))
            self.stop.wait(max(0.0, 1.0 / PROBE_HZ - (time.monotonic() - t)))


def summary(results):
    answered = [lat for ok, lat in results if ok]
    lats = sorted(lat for _, lat in results)
    p50 = lats[len(lats) // 2] if lats else float("nan")
    p99 = lats[min(len(lats) - 1, int(len(lats) * 0.99))] if lats else float("nan")
    worst = lats[-1] if lats else float("nan")
    return len(answered), len(results), p50 * 1000, p99 * 1000, worst * 1000


def metrics(port, tls=None):
    s = connect(port, 5, tls)
    with s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: m\r\nConnection: close\r\n\r\n")
        _, body = read_answer(s)
    return {m.group(1): float(m.group(2))
            for m in re.finditer(rb"^(splitkd_[a-z_]+(?:\{[^}]*\})?) (\S+)$", body, re.M)}


def closed_counts(port, tls=None):
    return {k.decode().split('"')[1]: int(v) for k, v in metrics(port, tls).items()
            if k.startswith(b"splitkd_connections_closed_total")}


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def cpu_seconds(pid):
    """User and system CPU a process has used, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def attack(name, argv, port, min_ratio, judge_latency, tls=None, need_closed=None, max_p99=100.0,
           max_worst=None, pid=None):
    """One flood with probes beside it. max_worst: the slowest probe is
    judged too, not only p99. pid: splitkd's CPU during the flood is printed."""
    before = closed_counts(port, tls)
    cpu_before = cpu_seconds(pid) if pid else 0.0
    prober = Prober(port, tls)
    prober.start()
    time.sleep(1)  # probes on a quiet server first, then the attack
    if callable(argv):
        argv()
    else:
        tool = start(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            tool.wait(ATTACK_SECONDS + 15)
        except subprocess.TimeoutExpired:
            tool.terminate()
            tool.wait()
    prober.stop.set()
    prober.join()
    cpu = cpu_seconds(pid) - cpu_before if pid else None
    after = closed_counts(port, tls)
    got, n, p50, p99, worst = summary(prober.results)
    closed = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    ok = got >= min_ratio * n and (not judge_latency or p99 <= max_p99)
    ok = ok and (max_worst is None or worst <= max_worst)
    if need_closed is not None:
        ok = ok and closed.get(need_closed[0], 0) >= need_closed[1]
    print(f"{name:<34} probes {got}/{n} answered ({100.0 * got / max(n, 1):.1f}%, need "
          f"{100 * min_ratio:.0f}%), p50 {p50:.1f} ms, p99 {p99:.1f} ms"
          f"{f' (need <= {max_p99:.0f})' if judge_latency else ''}, worst {worst:.1f} ms"
          f"{f' (need <= {max_worst:.0f})' if max_worst is not None else ''}"
          f"{f', splitkd CPU {cpu:.2f} s' if cpu is not None else ''}  closed by splitkd: {closed or 'none'}"
          f"  {'ok' if ok else 'FAILED'}")
    return ok


STREAM_CAP = 128  # --max-streams, given (the default is 10,000 since issue 32)


def open_stream(port):
    """A change stream from 127.0.0.1: ("open", socket) or ("503", None)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=PROBE_TIMEOUT)
    s.sendall(b"GET /v1/events HTTP/1.1\r\nHost: a\r\nAccept: text/event-stream\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            s.close()
            raise ConnectionError("closed before an answer")
        buf += chunk
    if buf.startswith(b"HTTP/1.1 200 "):
        return "open", s
    s.close()
    ok = buf.startswith(b"HTTP/1.1 503 ") and re.search(rb"(?i)\r\nretry-after: \d+", buf)
    return "503" if ok else "other", None


def stream_attack(port):
    """Opens streams past the cap from one address, holds them and keeps
    retrying the refused ones, while the probes run from 127.0.0.2."""
    held, tally, peak = [], {"open": 0, "503": 0, "other": 0, "error": 0}, [0]
    stop = threading.Event()

    def attacker():
        while not stop.is_set():
            try:
                kind, s = open_stream(port)
                tally[kind] += 1
                if s is not None:
                    held.append(s)
            except OSError:
                tally["error"] += 1
            stop.wait(0.005)  # ~200 attempts a second

    def watcher():
        while not stop.is_set():
            try:
                peak[0] = max(peak[0], int(metrics(port).get(b"splitkd_streams", 0)))
            except OSError:
                pass
            stop.wait(0.5)
    prober = Prober(port)
    prober.start()
    time.sleep(1)
    threads = [threading.Thread(target=attacker, daemon=True), threading.Thread(target=watcher, daemon=True)]
    for t in threads:
        t.start()
    time.sleep(ATTACK_SECONDS)
    stop.set()
    for t in threads:
        t.join()
    prober.stop.set()
    prober.join()
    for s in held:
        s.close()
    got, n, p50, p99, worst = summary(prober.results)
    ok = (got >= 0.99 * n and p99 <= 100.0 and tally["open"] == STREAM_CAP and tally["503"] > 0
          and tally["other"] == 0 and peak[0] == STREAM_CAP)
    print(f"{'streams past --max-streams 128':<34} probes {got}/{n} answered ({100.0 * got / max(n, 1):.1f}%, "
          f"need 99%), p50 {p50:.1f} ms, p99 {p99:.1f} ms (need <= 100)  streams: {tally['open']} open "
          f"(peak {peak[0]} in /metrics), {tally['503']} refused 503, {tally['other']} other, "
          f"{tally['error']} errors  {'ok' if ok else 'FAILED'}")
    return ok


def hold_bodies(port, n, size):
    """n connections, each sending a size-byte POST body but its last byte,
    then holding: what splitkd takes in stays buffered until they go."""
    head = (f"POST /v1/splits HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n").encode()
    body = b'{"sm_count":132,"num_q_heads":24}'
    body += b" " * (size - len(body))
    socks = []
    for _ in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.setblocking(False)
            socks.append([s, head + body[:-1]])
        except OSError:
            pass
    deadline = time.monotonic() + 20
    while any(rest for _, rest in socks) and time.monotonic() < deadline:
        for item in socks:
            s, rest = item
            if rest:
                try:
                    item[1] = rest[s.send(rest):]
                except BlockingIOError:
                    pass
                except OSError:
                    item[1] = b""
        time.sleep(0.001)
    return [s for s, _ in socks]


def memory(port, pid):
    base = rss_kib(pid)
    peak = [base]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_kib(pid))
            stop.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    socks = hold_bodies(port, 250, 999_999)
    time.sleep(2)  # holding
    shed = metrics(port).get(b"splitkd_requests_shed_total", 0)
    for s in socks:
        s.close()
    closed_at = time.monotonic()
    back = None
    while time.monotonic() - closed_at < 5:
        if rss_kib(pid) < 32 * 1024:
            back = time.monotonic() - closed_at
            break
        time.sleep(0.05)
    stop.set()
    sampler.join()
    limit = BUDGET // 1024 + 32 * 1024
    ok = peak[0] < limit and back is not None
    print(f"{'250 x 999,999-byte bodies, held':<34} RSS {base / 1024:.1f} MiB before, peak "
          f"{peak[0] / 1024:.1f} MiB (need < {limit / 1024:.0f}), "
          f"{'back under 32 MiB %.2f s after' % back if back is not None else 'NOT back under 32 MiB in 5 s'}"
          f"; {int(shed)} requests shed (503)  {'ok' if ok else 'FAILED'}")
    return ok


def stalled_handshakes(port, n):
    """n connections that send the first 11 bytes of a TLS ClientHello (a
    record header announcing 512 bytes) and then nothing, held for
    ATTACK_SECONDS: only the header deadline can end them."""
    hello = bytes([22, 3, 1, 2, 0, 1, 0, 1, 252, 3, 3])

    def run():
        socks = []
        for _ in range(n):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                s.sendall(hello)
                socks.append(s)
            except OSError:
                pass
        time.sleep(ATTACK_SECONDS)
        for s in socks:
            s.close()
    return run


def tls_phase(pki):
    """The daemon again with --tls-cert; slowloris, slow body and stalled
    handshakes against it, probes over TLS."""
    subprocess.run(["sh", "tests/tls/make-certs.sh", pki], check=True)
    ctx = ssl.create_default_context(cafile=f"{pki}/ca.pem")
    port = free_port()
    log = open(os.environ.get("OVERLOAD_LOG", "/dev/null"), "a")
    daemon = start([BIN, "--listen", f"127.0.0.1:{port}", "--max-connections", "256",
                    "--threads", "2", "--access-log", "off", "--header-timeout", "2",
                    "--tls-cert", f"{pki}/server.pem", "--tls-key", f"{pki}/server-key.pem"],
                   stderr=log)
    deadline = time.monotonic() + 5
    while not probe_once(port, ctx)[0]:
        if time.monotonic() > deadline or daemon.poll() is not None:
            sys.exit("overload: splitkd did not start with TLS")
        time.sleep(0.05)
    url = f"https://localhost:{port}"
    # p99 within 500 ms, not 100: each attack connection begins with a
    # handshake (an ECDHE and an ECDSA signature on the server, about 1 ms
    # of CPU), 400 of them in the attack's first second on 2 shared cores,
    # and a probe (a full handshake itself) caught behind that burst waits
    # for it. The answered ratio is the bound and stays 99%.
    tls_p99 = 500.0
    slow = ["slowhttptest", "-c", "400", "-r", "400", "-i", "10", "-l", str(ATTACK_SECONDS), "-p", "3"]
    results = [
        attack("TLS: slowhttptest -H, 400", slow + ["-H", "-u", url + QUERY], port, 0.99, True, ctx,
               max_p99=tls_p99),
        attack("TLS: slowhttptest -B, 400", slow + ["-B", "-u", url + "/v1/splits"], port, 0.99, True,
               ctx, max_p99=tls_p99),
        attack("TLS: 400 stalled handshakes", stalled_handshakes(port, 400), port, 0.99, True, ctx,
               need_closed=("header_timeout", 1), max_p99=tls_p99),
    ]
    daemon.send_signal(signal.SIGTERM)
    rc = daemon.wait(15)
    print(f"splitkd (TLS) exit status {rc}")
    return all(results) and rc == 0


SLOW_READ_FLOODS = 3


def slow_read(port, pid):
    """slowhttptest -X three times, each flood on fresh connections once the
    last one's are gone: 400 clients (256 admitted) asking for
    /openapi.json (170 KiB) and reading 8 bytes a second through a window
    of at most 32 bytes. The probe's wait is judged by p99 and by the
    slowest probe of each flood (<= 100 ms, against about 2 ms unloaded
    and under 20 ms seen under this flood; the bound is the behaviour, a
    probe answered under attack). A regression shows as a flood whose
    slowest probes wait 100-350 ms in its first two seconds with splitkd's
    CPU over 1 s (the engines pushing whole answers into 256 send buffers,
    httpd.c UNSENT_MAX); fixed, the CPU stays near 0.2 s. Without the bound
    the cost grows with the document: the same code serving a 79 KiB,
    122 KiB and 174 KiB openapi.json spent 0.6-0.9 s, 1.0-2.0 s and
    1.4-1.7 s of CPU in a flood, its slowest probe 3-18, 27-64 and
    73-125 ms (issue 33)."""
    results = []
    for flood in range(1, SLOW_READ_FLOODS + 1):
        deadline = time.monotonic() + 15
        while metrics(port).get(b"splitkd_connections", 0) > 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        results.append(attack(f"slowhttptest -X (slow read), 400, flood {flood}/{SLOW_READ_FLOODS}",
                              ["slowhttptest", "-c", "400", "-r", "400", "-i", "10", "-l",
                               str(max(8, ATTACK_SECONDS // 2)), "-p", "3", "-X", "-k", "8", "-n", "1",
                               "-w", "1", "-y", "32", "-z", "8", "-u",
                               f"http://127.0.0.1:{port}/openapi.json"],
                              port, 0.99, True, max_worst=100.0, pid=pid))
    return results


def main():
    for tool in ("slowhttptest", "wrk"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], stdout=subprocess.DEVNULL).returncode:
            sys.exit(f"overload: {tool} is not installed (scripts/deps.sh overload)")
    port = free_port()
    log = open(os.environ.get("OVERLOAD_LOG", "/dev/null"), "w")
    daemon = start([BIN, "--listen", f"127.0.0.1:{port}", "--max-connections", "256",
                    "--threads", "2", "--access-log", "off", "--max-streams", str(STREAM_CAP)], stderr=log)
    deadline = time.monotonic() + 5
    while not probe_once(port)[0]:
        if time.monotonic() > deadline or daemon.poll() is not None:
            sys.exit("overload: splitkd did not start")
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}{QUERY}"
    slow = ["slowhttptest", "-c", "400", "-r", "400", "-i", "10", "-l", str(ATTACK_SECONDS), "-p", "3"]
    results = [
        attack("slowhttptest -H (slowloris), 400", slow + ["-H", "-u", url], port, 0.99, True),
        attack("slowhttptest -B (slow body), 400", slow + ["-B", "-u", f"http://127.0.0.1:{port}/v1/splits"],
               port, 0.99, True),
        *slow_read(port, daemon.pid),
        attack("wrk -c 1000", ["wrk", "-t", "2", "-c", "1000", "-d", f"{ATTACK_SECONDS}s", url],
               port, 0.95, False),
        stream_attack(port),
        memory(port, daemon.pid),
    ]
    daemon.send_signal(signal.SIGTERM)
    rc = daemon.wait(15)
    print(f"splitkd exit status {rc}")
    with tempfile.TemporaryDirectory(prefix="splitkd-overload-tls-") as pki:
        tls_ok = tls_phase(pki)
    return 0 if all(results) and rc == 0 and tls_ok else 1


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        code = main()
    finally:
        stop_all()
    print("overload: ok" if code == 0 else "overload: FAILED")
    sys.exit(code)
