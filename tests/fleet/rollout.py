#!/usr/bin/python3
# SPDX-License-Identifier: AGPL-3.0-only
"""Rollout: three splitkd replicas behind haproxy on loopback, a new catalog
rolled across them one replica at a time (the file rewritten, SIGHUP, as a
ConfigMap update lands), while three clients query through haproxy: one
pinned to the old revision, one pinned to the new one, one unpinned.

Passes when the old-pinned client had no failure and every answer it got
names the old revision; the new-pinned client got the new revision or a 409
revision-unavailable (from a replica not reached yet), never an old answer;
the unpinned client had no failure; and once the rollout ends every replica
answers the new revision unpinned, directly and through haproxy. Bounded:
about 15 s; everything it starts is stopped on exit. Prints the counts and
"rollout: N passed, N failed".

usage: tests/fleet/rollout.py path/to/splitkd
"""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/splitkd"
procs = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_replica(port, catalog):
    p = subprocess.Popen([BIN, "--listen", f"127.0.0.1:{port}", "--catalog", catalog,
                          "--access-log", "off", "--drain-timeout", "5"], stderr=subprocess.DEVNULL)
    procs.append(p)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return p
        except OSError:
            time.sleep(0.02)
    raise SystemExit(f"rollout: replica on {port} did not start")


def request(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        return r.status, json.loads(data) if data else None
    finally:
        conn.close()


def write_atomically(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)  # never a half file, as a ConfigMap's symlink swap


def main():
    tmp = tempfile.mkdtemp(prefix="splitkd-rollout-")
    old_text = subprocess.run([BIN, "--dump-catalog"], check=True, stdout=subprocess.PIPE).stdout
    new = json.loads(old_text)
    for t in new["targets"]:
        if t["name"] == "gb10":
            t["attn_decode_splitk"] = "auto"   # a policy flip: gb10's answers move
        if t["name"] == "b200":
            t["sm_count"] = 160                # and an SM count
    new_text = json.dumps(new).encode()
    ports = [free_port() for _ in range(3)]
    files = [os.path.join(tmp, f"catalog-{i}.json") for i in range(3)]
    for f in files:
        write_atomically(f, old_text)
    front = free_port()
    for p, f in zip(ports, files):
        start_replica(p, f)
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

    _, revs = request(ports[0], "GET", "/v1/revisions")
    old_rev = revs["current"]
    # the candidate's digest before any replica loads it: what a pipeline knows
    _, d = request(ports[0], "POST", "/v1/catalog/diff?max_batch_size=16", new_text)
    new_rev = d["to"]
    errors = []
    if old_rev == new_rev or not d["cells"]:
        errors.append("the new catalog changes no decision: nothing to roll out")

    stop = threading.Event()
    lock = threading.Lock()
    counts = {k: 0 for k in ("old_ok", "old_failed", "new_ok", "new_409", "new_failed",
                             "any_old", "any_new", "any_failed")}
    asks = [("GET", "/v1/splits?target=gb10&model=qwen3-8b&max_batch_size=16{pin}", None),
            ("POST", "/v1/splits", '{{"target":"b200","model":"llama-3.1-70b"{pin}}}'),
            ("GET", "/v1/matrix?max_batch_size=16{pin}", None)]

    def ask(conn, i, rev):
        method, path, body = asks[i % len(asks)]
        if body is None:
            path = path.format(pin=f"&revision={rev}" if rev else "")
        else:
            body = body.format(pin=f',"revision":"{rev}"' if rev else "")
        conn.request(method, path, body=body,
                     headers={"Content-Type": "application/json"} if body else {})
        r = conn.getresponse()
        data = r.read()
        if r.getheader("Connection", "").lower() == "close":
            conn.close()
        return r.status, json.loads(data)

    def client(kind):
        conn = http.client.HTTPConnection("127.0.0.1", front, timeout=10)
        i = 0
        pin = {"old": old_rev, "new": new_rev, "any": None}[kind]
        while not stop.is_set():
            i += 1
            try:
                status, j = ask(conn, i, pin)
            except (OSError, http.client.HTTPException, ValueError) as e:
                status, j = -1, {"error": str(e)}
                conn = http.client.HTTPConnection("127.0.0.1", front, timeout=10)
            served = j.get("catalog") if status == 200 else None
            with lock:
                if kind == "old":
                    good = status == 200 and served == old_rev
                    counts["old_ok" if good else "old_failed"] += 1
                elif kind == "new":
                    unavailable = (status == 409 and j.get("type") == "/problems/revision-unavailable"
                                   and j.get("current") == old_rev and old_rev in j.get("held", []))
                    if status == 200 and served == new_rev:
                        counts["new_ok"] += 1
                    elif unavailable:
                        counts["new_409"] += 1
                    else:
                        counts["new_failed"] += 1
                else:
                    if status == 200 and served in (old_rev, new_rev):
                        counts["any_old" if served == old_rev else "any_new"] += 1
                    else:
                        counts["any_failed"] += 1
                bad = (kind == "old" and not good) or (kind == "new" and not (
                    (status == 200 and served == new_rev) or unavailable)) or (
                    kind == "any" and status != 200)
                if bad and len(errors) < 10:
                    errors.append(f"{kind}-pinned: {status} {str(j)[:160]}")

    threads = [threading.Thread(target=client, args=(k,)) for k in ("old", "new", "any")]
    for t in threads:
        t.start()
    try:
        time.sleep(1.5)
        for i, (p, f) in enumerate(zip(ports, files)):   # one replica at a time
            write_atomically(f, new_text)
            procs[i].send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 5
            while request(p, "GET", "/v1/revisions")[1]["current"] != new_rev:
                if time.monotonic() > deadline:
                    errors.append(f"replica {i} did not take the new catalog within 5 s")
                    break
                time.sleep(0.02)
            time.sleep(1.5)
    finally:
        stop.set()
        for t in threads:
            t.join()
    try:
        # once the rollout ends: every replica answers the new revision unpinned
        unpinned = [request(p, "GET", "/v1/splits?target=gb10&model=qwen3-8b")[1]["catalog"] for p in ports]
        unpinned += [request(front, "GET", "/v1/splits?target=gb10&model=qwen3-8b")[1]["catalog"] for _ in range(6)]
        if any(r != new_rev for r in unpinned):
            errors.append(f"after the rollout, unpinned answers name {sorted(set(unpinned))}")
        # and still answers the old revision pinned
        for p in ports:
            status, j = request(p, "GET", f"/v1/splits?target=gb10&model=qwen3-8b&revision={old_rev}")
            if status != 200 or j["catalog"] != old_rev:
                errors.append(f"replica {p} lost the old revision: {status}")
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    for e in errors:
        print("rollout:", e)
    print(f"rollout: {old_rev} -> {new_rev} across 3 replicas, one at a time")
    print(f"rollout: old-pinned {counts['old_ok']} answered (all {old_rev}), {counts['old_failed']} failed")
    print(f"rollout: new-pinned {counts['new_ok']} answered {new_rev}, {counts['new_409']} 409 "
          f"revision-unavailable, {counts['new_failed']} failed (an old answer or an error)")
    print(f"rollout: unpinned {counts['any_old']} old, {counts['any_new']} new, {counts['any_failed']} failed")
    failed = counts["old_failed"] + counts["new_failed"] + counts["any_failed"] + len(errors)
    enough = counts["old_ok"] > 0 and counts["new_ok"] > 0 and counts["new_409"] > 0
    if not enough:
        print("rollout: too few answers of each kind to judge the rollout")
    passed = counts["old_ok"] + counts["new_ok"] + counts["new_409"] + counts["any_old"] + counts["any_new"]
    print(f"rollout: {passed} passed, {failed} failed")
    return 0 if failed == 0 and enough else 1


if __name__ == "__main__":
    sys.exit(main())
