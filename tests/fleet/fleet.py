#!/usr/bin/python3
# SPDX-License-Identifier: AGPL-3.0-only
"""Fleet: three splitkd replicas behind haproxy on loopback, under steady
load, while one replica is killed (SIGKILL) and restarted, and another is
drained (SIGTERM) and restarted. haproxy health-checks /readyz and retries
idempotent requests, as docker/kubernetes.yaml's Service and probes do for a
fleet. Passes when the client saw no failed request and every answer to the
same question was the same bytes with the same ETag, whichever replica
served it. Bounded: about 25 s; everything it starts is stopped on exit.
Prints "fleet: N passed, N failed".

usage: tests/fleet/fleet.py path/to/splitkd
"""
import http.client
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/splitkd"
QUERIES = [
    "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16",
    "/v1/splits?target=gb10&model=llama-3.1-70b&max_batch_size=8&override=auto",
    "/v1/splits?target=b200&model=gemma-2-9b&explain=1",
    "/v1/matrix?max_batch_size=4",
    "/v1/targets/h100",
]
procs = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_replica(port):
    p = subprocess.Popen([BIN, "--listen", f"127.0.0.1:{port}", "--access-log", "off",
                          "--drain-timeout", "5"], stderr=subprocess.DEVNULL)
    procs.append(p)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return p
        except OSError:
            time.sleep(0.02)
    raise SystemExit(f"fleet: replica on {port} did not start")


def main():
    tmp = tempfile.mkdtemp(prefix="splitkd-fleet-")
    ports = [free_port() for _ in range(3)]
    front = free_port()
    replicas = [start_replica(p) for p in ports]
    cfg = os.path.join(tmp, "haproxy.cfg")
    with open(cfg, "w") as f:
        f.write(f"""global
    maxconn 2000
defaults
    mode http
    timeout connect 500ms
    timeout client 10s
    timeout server 5s
    retries 3
    option redispatch 1
    retry-on all-retryable-errors
frontend fe
    bind 127.0.0.1:{front}
    default_backend be
backend be
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 100ms fall 1 rise 2
""" + "".join(f"    server r{i} 127.0.0.1:{p} check\n" for i, p in enumerate(ports)))
    hap = subprocess.Popen(["haproxy", "-f", cfg, "-db"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    procs.append(hap)
    time.sleep(1.0)

    stop = threading.Event()
    lock = threading.Lock()
    seen = {}  # query -> (body, etag)
    counts = {"passed": 0, "failed": 0}
    errors = []

    def client(n):
        conn = None
        i = n
        while not stop.is_set():
            q = QUERIES[i % len(QUERIES)]
            i += 1
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", front, timeout=10)
                conn.request("GET", q)
                r = conn.getresponse()
                body = r.read()
                etag = r.getheader("ETag")
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
                ok = r.status == 200
            except (OSError, http.client.HTTPException) as e:
                # the connection to haproxy itself never goes down here:
                # any failure is a request the fleet failed
                ok, body, etag = False, str(e).encode(), None
                conn = None
            with lock:
                if ok:
                    first = seen.setdefault(q, (body, etag))
                    if first != (body, etag):
                        ok = False
                        errors.append(f"different answer for {q}")
                if ok:
                    counts["passed"] += 1
                else:
                    counts["failed"] += 1
                    if len(errors) < 10:
                        errors.append(f"{q}: {body[:120]!r}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    try:
        time.sleep(3)
        replicas[0].send_signal(signal.SIGKILL)        # a replica dies
        replicas[0].wait()
        time.sleep(4)
        replicas[0] = start_replica(ports[0])          # and comes back
        time.sleep(4)
        replicas[1].send_signal(signal.SIGTERM)        # a replica drains
        rc = replicas[1].wait(timeout=15)
        if rc != 0:
            errors.append(f"drained replica exited {rc}")
            counts["failed"] += 1
        time.sleep(2)
        replicas[1] = start_replica(ports[1])
        time.sleep(4)
    finally:
        stop.set()
        for t in threads:
            t.join()
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
    for e in errors:
        print("fleet:", e)
    print(f"fleet: {len(seen)} distinct questions, each answered with one body and one ETag")
    print(f"fleet: {counts['passed']} passed, {counts['failed']} failed")
    return 0 if counts["failed"] == 0 and counts["passed"] > 0 and len(seen) == len(QUERIES) else 1


if __name__ == "__main__":
    sys.exit(main())
