#!/usr/bin/python3
# SPDX-License-Identifier: AGPL-3.0-only
"""A development stand-in for the daemon's page routes: serves api/ui/* the
way splitkd is meant to (GET / negotiated, /ui, /ui/app.js, /ui/style.css,
each with an ETag, the Content-Security-Policy and nosniff) and proxies every
other request to a real splitkd. Files are read on each request, so an edit
shows on reload. Loopback only; for development and as test_page.py's
--devserver fallback, never for production.

usage: tests/browser/devserver.py --upstream 127.0.0.1:PORT [--listen 127.0.0.1:0]
Prints "listening on http://HOST:PORT" on stderr once bound.
"""
import argparse
import hashlib
import http.client
import http.server
import os
import sys

UI = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "api", "ui")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
FILES = {
    "/ui": ("index.html", "text/html; charset=utf-8"),
    "/ui/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/ui/style.css": ("style.css", "text/css; charset=utf-8"),
}
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
       "proxy-connection", "host"}


def q_for(accept, mtype):
    """The q of the most specific range in ACCEPT matching MTYPE (RFC 9110 12.5.1)."""
    major = mtype.split("/")[0]
    best, best_rank = 0.0, -1
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        rng, q = fields[0].lower(), 1.0
        for f in fields[1:]:
            if f.lower().startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        rank = 2 if rng == mtype else 1 if rng == major + "/*" else 0 if rng == "*/*" else -1
        if rank > best_rank:
            best, best_rank = q, rank
    return best


def wants_html(accept):
    """The page only when text/html is strictly preferred to application/json."""
    if not accept:
        return False
    return q_for(accept, "text/html") > q_for(accept, "application/json")


class Handler(http.server.BaseHTTPRequestHandler):
    upstream = "127.0.0.1:8080"

    def log_message(self, fmt, *args):  # quiet: the test reads the browser, not us
        pass

    def do_GET(self):
        self.route(send_body=True)

    def do_HEAD(self):
        self.route(send_body=False)

    def do_POST(self):
        self.proxy()

    def route(self, send_body):
        path = self.path.split("?", 1)[0]
        if path == "/" and wants_html(self.headers.get("Accept", "")):
            path = "/ui"
        if path not in FILES:
            self.proxy()
            return
        name, ctype = FILES[path]
        with open(os.path.join(UI, name), "rb") as f:
            body = f.read()
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        hit = etag in [t.strip() for t in self.headers.get("If-None-Match", "").split(",")]
        self.send_response(304 if hit else 200)
        self.send_header("Content-Type", ctype)
        self.send_header("ETag", etag)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        if self.path.split("?", 1)[0] == "/":
            self.send_header("Vary", "Accept")
        if not hit:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body and not hit:
            self.wfile.write(body)

    def proxy(self):
        length = int(self.headers.get("Content-Length", "0") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        try:
            conn = http.client.HTTPConnection(self.upstream, timeout=5)
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            conn.close()
        except OSError as e:
            data = ('{"type":"about:blank","title":"Bad gateway","status":502,"detail":"%s"}'
                    % type(e).__name__).encode()
            self.send_response(502)
            self.send_header("Content-Type", "application/problem+json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in HOP and k.lower() not in ("date", "server"):
                self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", default="127.0.0.1:0")
    ap.add_argument("--upstream", required=True)
    a = ap.parse_args()
    host, port = a.listen.rsplit(":", 1)
    if host not in ("127.0.0.1", "localhost", "[::1]"):
        sys.exit("devserver: loopback only")
    Handler.upstream = a.upstream
    srv = http.server.ThreadingHTTPServer((host, int(port)), Handler)
    srv.daemon_threads = True
    print("listening on http://%s:%d" % srv.server_address[:2], file=sys.stderr, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
