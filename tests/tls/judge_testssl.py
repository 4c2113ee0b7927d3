#!/usr/bin/python3
# SPDX-License-Identifier: AGPL-3.0-only
"""Judges testssl.sh's JSON (--jsonfile) of a scan of splitkd.

Fails on: a finding rated HIGH or CRITICAL, or reading VULNERABLE (testssl
writes it in capitals; "not vulnerable" is lower case); a protocol other
than TLS 1.2 and 1.3 offered, or either of those not offered; no cipher
found; an offered cipher without an ephemeral key exchange, or missing
from testssl's own list of forward-secret ciphers. Prints the summary.
usage: judge_testssl.py [--self-test] testssl.json
With --self-test, plants each kind of bad finding in a copy of a clean
scan and checks that every one fails the judgement.
"""
import copy
import json
import sys


def judge(findings, quiet=False):
    out = (lambda *a, **k: None) if quiet else print
    by_id = {f["id"]: f for f in findings}
    problems = []
    for f in findings:
        if f["severity"] in ("HIGH", "CRITICAL") or "VULNERABLE" in f["finding"]:
            problems.append(f"{f['id']}: {f['severity']}: {f['finding']}")
    for proto in ("SSLv2", "SSLv3", "TLS1", "TLS1_1"):
        got = by_id.get(proto, {}).get("finding", "(not tested)")
        if not got.startswith("not offered"):
            problems.append(f"{proto}: {got} (only TLS 1.2 and 1.3 may be offered)")
    for proto in ("TLS1_2", "TLS1_3"):
        got = by_id.get(proto, {}).get("finding", "(not tested)")
        if not got.startswith("offered"):
            problems.append(f"{proto}: {got} (must be offered)")
    fs_list = by_id.get("PFS_ciphers", by_id.get("FS_ciphers", {})).get("finding", "").split()
    ciphers = [f for f in findings if f["id"].startswith("cipher_x")]
    if not ciphers:
        problems.append("no cipher found: was -e run?")
    for c in ciphers:
        # "xc02b   ECDHE-ECDSA-AES128-GCM-SHA256     ECDH 256   AESGCM ..."
        cols = c["finding"].split()
        name, kx = cols[1], cols[2]
        if kx not in ("ECDH", "DH") or name not in fs_list:
            problems.append(f"{name}: key exchange {kx}: not forward-secret")
    names = [c["finding"].split()[1] for c in ciphers]
    out(f"testssl: protocols: TLS1_2 {by_id.get('TLS1_2', {}).get('finding')}, "
          f"TLS1_3 {by_id.get('TLS1_3', {}).get('finding')}, older ones not offered")
    out(f"testssl: {len(names)} suites, all forward-secret: {' '.join(names)}")
    counts = {}
    for f in findings:
        counts[f["severity"]] = counts.get(f["severity"], 0) + 1
    out("testssl: findings by severity: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for f in findings:
        if f["severity"] in ("LOW", "MEDIUM", "WARN"):
            out(f"testssl:   {f['severity']}: {f['id']}: {f['finding']}")
    if problems:
        for p in problems:
            out(f"testssl: FAIL: {p}", file=sys.stderr)
        return 1
    out("testssl: ok: nothing rated HIGH, CRITICAL or VULNERABLE")
    return 0


def set_finding(findings, fid, **kw):
    for f in findings:
        if f["id"] == fid:
            f.update(kw)
            return
    raise SystemExit(f"self-test: no {fid} in the scan to plant in")


def self_test(findings):
    """Each planted fault must fail the judgement."""
    if judge(findings, quiet=True) != 0:
        raise SystemExit("self-test needs a clean scan")
    faults = {
        "a HIGH finding": lambda fs: set_finding(fs, "heartbleed", severity="HIGH"),
        "a VULNERABLE finding": lambda fs: set_finding(fs, "ROBOT", finding="VULNERABLE (NOT ok)"),
        "TLS 1.0 offered": lambda fs: set_finding(fs, "TLS1", finding="offered"),
        "TLS 1.3 missing": lambda fs: set_finding(fs, "TLS1_3", finding="not offered"),
        "a suite with RSA key transport": lambda fs: fs.append(
            {"id": "cipher_x9c", "severity": "INFO",
             "finding": "x9c     AES128-GCM-SHA256                 RSA        AESGCM      128      "
                        "TLS_RSA_WITH_AES_128_GCM_SHA256"}),
    }
    for name, plant in faults.items():
        fs = copy.deepcopy(findings)
        plant(fs)
        if judge(fs, quiet=True) == 0:
            print(f"testssl: self-test FAILED: {name} was not caught", file=sys.stderr)
            return 1
    print(f"testssl: self-test: {len(faults)} planted faults, each caught")
    return 0


def main(argv):
    path = argv[-1]
    with open(path, encoding="utf-8") as f:
        findings = json.load(f)
    return self_test(findings) if "--self-test" in argv else judge(findings)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
