#!/usr/bin/python3
# SPDX-License-Identifier: AGPL-3.0-only
"""The OFREP web provider as it is meant to be used: from a browser page on
another origin (issue 41). Headless Chromium driven by Selenium (Debian's
chromium, chromium-driver and python3-selenium; run with /usr/bin/python3).

Node has no CORS, so tests/ofrep/web-sdk.test.mjs cannot tell whether a
browser would accept splitkd's answers. Here a small static page served from
http://127.0.0.2:PORT (another host, so another origin) loads the pinned ESM
builds of @openfeature/web-sdk, @openfeature/core, @openfeature/ofrep-web-provider
and the @openfeature/ofrep-core that provider depends on, from
tests/ofrep/node_modules (`cd tests/ofrep && npm ci`), through an import map,
and evaluates num_splits and policy against splitkd on 127.0.0.1:

  1. splitkd with --cors-allow-origin http://127.0.0.2:PORT: the values equal
     GET /v1/splits for the same inputs, the reason is not ERROR, and the bulk
     evaluation reached splitkd (/metrics, route /ofrep/v1/evaluate/flags).
  2. the control: a second splitkd without --cors-allow-origin. The page must
     fail to evaluate although splitkd answered (its /metrics count the
     request: the browser blocked the answer, not the network), and the
     console must say why (CORS, Access-Control-Allow-Origin).

Everything it starts is stopped on exit, also on failure; a watchdog bounds
the run; only loopback is used. Prints "cross-origin: N passed, N failed".

usage: tests/browser/test_cross_origin.py path/to/splitkd
"""
import argparse
import functools
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from harness import Failed, chromium, free_port, wait, wait_port

HERE = os.path.dirname(os.path.abspath(__file__))
MODULES = os.path.join(HERE, "..", "ofrep", "node_modules", "@openfeature")
PAGE_HOST = "127.0.0.2"  # loopback, but another host than splitkd's: another origin
SEED = {"target": "h100", "model": "qwen3.8-27b", "max_batch_size": 16}
BULK = "/ofrep/v1/evaluate/flags"
NOT_A_SPLIT = -1
POLL_MS = 2000
# Wide deadlines, as in test_page.py: 2 cores shared with other builds, and
# Chromium alone can stall for a second or two under load.
MARGIN = 4.0
WATCHDOG = 120      # seconds for the whole run; a normal run takes about 10

# The bare specifiers the four ESM builds import, and the file each one is.
# The web provider 0.4.3 depends on ofrep-core ^2.3.0, which npm nests under
# it (the top-level ofrep-core 0.1.4 is the server provider's): serve the one
# Node resolves for it.
BUILDS = {
    "@openfeature/web-sdk": "web-sdk/dist/esm/index.js",
    "@openfeature/core": "core/dist/esm/index.js",
    "@openfeature/ofrep-web-provider": "ofrep-web-provider/index.esm.js",
    "@openfeature/ofrep-core": "ofrep-web-provider/node_modules/@openfeature/ofrep-core/index.esm.js",
}

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>splitkd from another origin</title>
<link rel="icon" href="data:,">
<script type="importmap">%(importmap)s</script>
</head><body data-state="loading"><pre id="result"></pre>
<script type="module">
import { OpenFeature } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
const q = new URLSearchParams(location.search);
const out = { origin: location.origin };
const details = (d) => ({ value: d.value, reason: d.reason ?? null,
                          errorCode: d.errorCode ?? null, errorMessage: d.errorMessage ?? null });
try {
  const provider = new OFREPWebProvider({
    baseUrl: q.get('api'),
    pollInterval: Number(q.get('poll')),
    timeoutMs: 5000,
    // the control: nothing from localStorage may stand in for a blocked answer
    ...(q.get('cache') ? { cacheMode: q.get('cache') } : {}),
  });
  await OpenFeature.setContext({ targetingKey: 'browser-1', %(seed)s });
  try {
    await OpenFeature.setProviderAndWait(provider);
    out.ready = true;
  } catch (e) {
    out.ready = false;
    out.readyError = String((e && e.message) || e);
  }
  const client = OpenFeature.getClient();
  out.num_splits = details(client.getNumberDetails('num_splits', %(not_a_split)d));
  out.policy = details(client.getStringDetails('policy', 'none'));
} catch (e) {
  out.pageError = String((e && e.stack) || e);
}
document.getElementById('result').textContent = JSON.stringify(out);
document.body.dataset.state = 'done';
</script></body></html>
"""



def get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.read().decode()


def route_counts(api, route):
    """splitkd_requests_total{route=ROUTE, status=...} from /metrics: {status: n}."""
    pat = re.compile(r'^splitkd_requests_total\{route="%s",status="([^"]+)"\} (\d+)$' % re.escape(route), re.M)
    return {s: int(n) for s, n in pat.findall(get(api + "/metrics"))}


class PageHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the page and the four builds, nothing else; .js as text/javascript."""
    files = {}   # path -> (content type, bytes)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path not in self.files:
            self.send_error(404)
            return
        ctype, body = self.files[path]
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):  # quiet
        pass


class Run:
    """Processes, server, browser and results; stop() undoes everything."""

    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="splitkd-cross-origin-")
        self.page_port = free_port(PAGE_HOST)
        self.page_origin = f"http://{PAGE_HOST}:{self.page_port}"
        self.daemons = []
        self.httpd = None
        self.driver = None
        self.passed = 0
        self.failed = 0

    def start_daemon(self, extra):
        port = free_port()
        p = subprocess.Popen(
            [self.args.splitkd, "--listen", f"127.0.0.1:{port}", "--access-log", "off",
             "--drain-timeout", "2"] + extra,
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.tmp, f"splitkd-{port}.log"), "ab"))
        self.daemons.append(p)
        wait_port(port, p)
        return f"http://127.0.0.1:{port}"

    def start_page_server(self):
        files = {}
        imports = {}
        for spec, rel in BUILDS.items():
            src = os.path.join(MODULES, rel)
            if not os.path.isfile(src):
                raise Failed(f"{src} is missing: run `cd tests/ofrep && npm ci` first")
            url = "/m/" + spec.split("/", 1)[1] + ".js"
            imports[spec] = url
            with open(src, "rb") as f:
                files[url] = ("text/javascript; charset=utf-8", f.read())
        seed = ", ".join(f"{k}: {json.dumps(v)}" for k, v in SEED.items())
        page = PAGE % {"importmap": json.dumps({"imports": imports}), "seed": seed,
                       "not_a_split": NOT_A_SPLIT}
        files["/"] = ("text/html; charset=utf-8", page.encode())
        handler = type("Handler", (PageHandler,), {"files": files})
        self.httpd = http.server.ThreadingHTTPServer((PAGE_HOST, self.page_port), handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def start_browser(self):
        self.driver = chromium(self.tmp, 800, 600, hosts=("127.0.0.1", PAGE_HOST))

    def stop(self):
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception:  # the browser may already be gone; go on stopping the rest
                pass
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
        for p in self.daemons:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def step(self, name, fn):
        t0 = time.monotonic()
        try:
            fn()
            self.passed += 1
            print(f"ok   {name} ({time.monotonic() - t0:.1f} s)", flush=True)
        except Exception as e:  # a failed step is reported and the next one runs
            self.failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
            if not isinstance(e, (Failed, TimeoutError)):
                traceback.print_exc()

    def evaluate(self, api, cache=None):
        """Opens the page against API; returns (its result, the console log)."""
        self.driver.get("about:blank")
        self.driver.get_log("browser")  # what came before is not this page's
        q = f"?api={api}&poll={POLL_MS}" + (f"&cache={cache}" if cache else "")
        self.driver.get(self.page_origin + "/" + q)
        # initialisation is one bulk request with a 5 s timeout; under load, more
        wait(lambda: self.driver.execute_script("return document.body.dataset.state") == "done",
             5 + 4 * MARGIN, "the page evaluates")
        out = json.loads(self.driver.find_element("id", "result").text)
        log = self.driver.get_log("browser")
        if out.get("pageError"):
            raise Failed(f"the page threw: {out['pageError']}; console {log}")
        if out.get("origin") != self.page_origin:
            raise Failed(f"the page's origin is {out.get('origin')}, not {self.page_origin}")
        return out, log


def check_allowed(r, api):
    want = json.loads(get(api + "/v1/splits?" + "&".join(f"{k}={v}" for k, v in SEED.items())))
    before = route_counts(api, BULK).get("200", 0)
    out, log = r.evaluate(api)
    if not out.get("ready"):
        raise Failed(f"setProviderAndWait rejected: {out.get('readyError')}; console {log}")
    for flag, key in (("num_splits", "num_splits"), ("policy", "policy")):
        d = out[flag]
        if d["errorCode"] is not None or d["reason"] == "ERROR":
            raise Failed(f"{flag}: {d['errorCode']} {d['reason']}: {d['errorMessage']}")
        if d["value"] != want[key]:
            raise Failed(f"{flag} is {d['value']!r} in the page, {want[key]!r} from GET /v1/splits")
    if out["num_splits"]["value"] == NOT_A_SPLIT:
        raise Failed("num_splits is the default")
    # the cached evaluations came from one bulk POST answered 200
    after = wait(lambda: (lambda n: n if n > before else 0)(route_counts(api, BULK).get("200", 0)),
                 MARGIN, f"{BULK} answered 200 counted in /metrics")
    severe = [e["message"] for e in log if e["level"] == "SEVERE"]
    if severe:
        raise Failed(f"console errors with CORS allowed: {severe}")
    print(f"     num_splits {out['num_splits']['value']} ({out['num_splits']['reason']}), "
          f"policy {out['policy']['value']!r}; {BULK} 200s {before} -> {after}", flush=True)


def check_blocked(r, api):
    before = sum(route_counts(api, BULK).values())
    out, log = r.evaluate(api, cache="disabled")
    n = out["num_splits"]
    if out.get("ready") and n["errorCode"] is None:
        raise Failed(f"the page evaluated without CORS: {out}")
    if n["value"] != NOT_A_SPLIT:
        raise Failed(f"num_splits is {n['value']}, not the default {NOT_A_SPLIT}: {out}")
    # splitkd answered (the preflight OPTIONS, or the request itself): the
    # browser threw the answer away, the network did not lose it
    counts = wait(lambda: (lambda c: c if sum(c.values()) > before else None)(route_counts(api, BULK)),
                  MARGIN, f"splitkd counts a request to {BULK}")
    msgs = " | ".join(e["message"] for e in log)
    if not re.search(r"CORS", msgs) or "Access-Control-Allow-Origin" not in msgs:
        raise Failed(f"the console does not say CORS / Access-Control-Allow-Origin: {msgs!r}")
    cors = next(e["message"] for e in log if "Access-Control-Allow-Origin" in e["message"])
    print(f"     ready={out.get('ready')} errorCode={n['errorCode']}; splitkd counted {counts}", flush=True)
    print(f"     console: {cors[:240]}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("splitkd")
    args = ap.parse_args()
    r = Run(args)

    def watchdog(signum, frame):
        raise SystemExit(f"cross-origin: watchdog: still running after {WATCHDOG} s")
    signal.signal(signal.SIGALRM, watchdog)
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit("cross-origin: terminated"))
    signal.alarm(WATCHDOG)
    t0 = time.monotonic()
    try:
        allowed = r.start_daemon(["--cors-allow-origin", r.page_origin])
        plain = r.start_daemon([])
        r.start_page_server()
        r.start_browser()
        r.step(f"from {r.page_origin}, splitkd allowing it: the values of GET /v1/splits",
               lambda: check_allowed(r, allowed))
        r.step(f"from {r.page_origin}, splitkd without --cors-allow-origin: blocked by the browser",
               lambda: check_blocked(r, plain))
    except Exception as e:  # a failure outside a step (start-up) fails the run
        r.failed += 1
        print(f"FAIL {type(e).__name__}: {e}", flush=True)
        if not isinstance(e, Failed):
            traceback.print_exc()
    finally:
        signal.alarm(0)
        r.stop()
    print(f"cross-origin: {r.passed} passed, {r.failed} failed in {time.monotonic() - t0:.1f} s")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
