#!/usr/bin/env python3
# SPDX-License-Identifier: AGPL-3.0-only
"""Exec to first answered request: starts BIN on a free loopback port N
times and times, from just before exec, until a GET /healthz is answered
200 on a fresh connection. Prints the median and the spread in ms."""
import socket
import statistics
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_answer(port, deadline):
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: b\r\nConnection: close\r\n\r\n")
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    return True
        except OSError:
            time.sleep(0.0002)
    return False


def main():
    binary, runs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 15
    times = []
    for _ in range(runs):
        port = free_port()
        t0 = time.monotonic()
        p = subprocess.Popen([binary, "--listen", f"127.0.0.1:{port}", "--access-log", "off"],
                             stderr=subprocess.DEVNULL)
        ok = first_answer(port, t0 + 5)
        t1 = time.monotonic()
        p.terminate()
        p.wait(timeout=10)
        if not ok:
            print("startup: no answer within 5 s", file=sys.stderr)
            sys.exit(1)
        times.append((t1 - t0) * 1000)
    times.sort()
    print(f"{statistics.median(times):.2f} {times[0]:.2f} {times[-1]:.2f}")


main()
