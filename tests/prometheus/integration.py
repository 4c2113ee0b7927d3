#!/usr/bin/python3
# SPDX-License-Identifier: AGPL-3.0-only
"""The rules and the dashboard against a real Prometheus scraping real splitkd.

Starts two splitkd replicas on loopback (port 0), each with its own --catalog
file (b's differs from a's by one note, so they serve two digests), and a
Prometheus (Debian's 2.42) on a free loopback port with its own config and
--storage.tsdb.path in a temporary directory, scraping both every second and
evaluating docker/prometheus/splitkd-rules.yaml every second. Drives good
requests, 304s, and bad ones (400, 404, 405) at both; halfway, breaks a's
catalog file (a rename over it, no signal), so a's watch refuses it and the
old catalog keeps serving. Then, through Prometheus's HTTP API:
  - every rule evaluates without error (its health in /api/v1/rules, and its
    expression again through /api/v1/query);
  - every panel query and annotation of docker/grafana/splitkd.json, with the
    template variables substituted, evaluates without error; every panel whose
    metrics splitkd exposes returns data (those on metrics it does not expose
    yet are listed as such), and the traffic panels show the routes and
    statuses that were sent;
  - the variable queries (label_values) find the job and both replicas;
  - splitkd_catalog_last_reload_successful is 0 for a and 1 for b;
    SplitkdCatalogReloadFailing and SplitkdCatalogFileInvalid are pending or
    firing for a and not b, SplitkdCatalogDigestMismatch is pending or firing,
    SplitkdDown and SplitkdHighErrorRatio are not.
Everything it starts is stopped on exit, also on failure or SIGTERM. About
15 s on an idle machine; every wait is bounded (see WAIT_S).

usage: tests/prometheus/integration.py path/to/splitkd
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import check_dashboard  # noqa: E402  (beside this file)

RULES = os.path.join(ROOT, "docker/prometheus/splitkd-rules.yaml")
DASHBOARD = os.path.join(ROOT, "docker/grafana/splitkd.json")
PROMETHEUS = os.environ.get("PROMETHEUS", "prometheus")
# Start-up and "Prometheus has seen it" waits. Each normally takes 1-3 s; the
# margin is for a 2-core machine shared with other builds and test suites.
WAIT_S = 30
ROUNDS = 24            # traffic rounds, 0.25 s apart: about 6 s of traffic
SUBST = {"job": "splitkd", "instance": ".+", "__rate_interval": "15s",
         "__interval": "1s", "__range": "60s"}
TRAFFIC_ROWS = ("Traffic",)
procs = []


class Failed(Exception):
    pass


def wait_for(what, fn):
    """fn() until it returns something true, at most WAIT_S seconds."""
    deadline = time.monotonic() + WAIT_S
    while True:
        got = fn()
        if got:
            return got
        if time.monotonic() > deadline:
            raise Failed(f"timed out after {WAIT_S} s waiting for {what}")
        time.sleep(0.2)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_splitkd(binary, catalog, log_path):
    log = open(log_path, "w")
    p = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--catalog", catalog,
                          "--access-log", "off", "--drain-timeout", "2"],
                         stdout=subprocess.DEVNULL, stderr=log)
    procs.append(p)

    def listening():
        if p.poll() is not None:
            raise Failed(f"splitkd exited with {p.returncode}: {open(log_path).read()}")
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", open(log_path).read())
        return m and int(m.group(1))
    return p, wait_for("splitkd to listen", listening)


def start_prometheus(tmp, targets):
    port = free_port()
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files:
  - {RULES}
scrape_configs:
  - job_name: splitkd
    static_configs:
      - targets: [{", ".join(f"'127.0.0.1:{t}'" for t in targets)}]
""")
    log_path = os.path.join(tmp, "prometheus.log")
    p = subprocess.Popen([PROMETHEUS, f"--config.file={cfg}",
                          f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
                          f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                         stdout=subprocess.DEVNULL, stderr=open(log_path, "w"))
    procs.append(p)
    base = f"http://127.0.0.1:{port}"

    def ready():
        if p.poll() is not None:
            raise Failed(f"prometheus exited with {p.returncode}: {open(log_path).read()[-2000:]}")
        try:
            with urllib.request.urlopen(base + "/-/ready", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False
    wait_for("prometheus to be ready", ready)
    return base


def api(base, path, **params):
    url = f"{base}{path}?{urllib.parse.urlencode(params, doseq=True)}"
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
    except urllib.error.HTTPError as e:
        body = json.load(e)
    if body.get("status") != "success":
        raise Failed(f"{path} {params}: {body.get('errorType')}: {body.get('error')}")
    return body["data"]


def request(port, method, target, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        c.request(method, target, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read(), r.getheader("ETag")
    finally:
        c.close()


GOOD = [("GET", "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16"),
        ("GET", "/v1/splits?target=gb10&model=llama-3.1-70b&max_batch_size=8&override=auto"),
        ("GET", "/v1/splits?sm_count=100&num_q_heads=32&override=4"),
        ("GET", "/v1/targets"),
        ("GET", "/v1/matrix?max_batch_size=4"),
        ("GET", "/healthz")]
BAD = [("GET", "/v1/splits?target=h100&model=qwen3-8b&bogus=1", 400),
       ("GET", "/v1/splits?target=hoper&model=qwen3-8b", 404),
       ("GET", "/nope", 404),
       ("DELETE", "/v1/splits", 405)]
BATCH = json.dumps({"queries": [{"target": "b200", "model": "qwen3-32b", "max_batch_size": 8},
                                {"target": "a100", "num_q_heads": 40}]})


def one_round(port, sent):
    for method, target in GOOD:
        status, _, _ = request(port, method, target)
        if status != 200:
            raise Failed(f"{method} {target} answered {status}")
        sent[status] = sent.get(status, 0) + 1
    status, _, _ = request(port, "POST", "/v1/splits", BATCH, {"Content-Type": "application/json"})
    sent[status] = sent.get(status, 0) + 1
    status, _, etag = request(port, "GET", "/v1/targets/h100")
    status, _, _ = request(port, "GET", "/v1/targets/h100", headers={"If-None-Match": etag})
    if status != 304:
        raise Failed(f"a conditional GET answered {status}, not 304")
    sent[200] += 1
    sent[304] = sent.get(304, 0) + 1
    for method, target, want in BAD:
        status, _, _ = request(port, method, target)
        if status != want:
            raise Failed(f"{method} {target} answered {status}, not {want}")
        sent[status] = sent.get(status, 0) + 1


def digest_of(port):
    status, body, _ = request(port, "GET", "/v1/catalog")
    if status != 200:
        raise Failed(f"/v1/catalog answered {status}")
    return json.loads(body)["digest"]


def drive(ports, catalog_a, splitkd_a):
    """ROUNDS of traffic at both replicas; a's catalog file broken halfway
    (renamed over, as an editor saves: a's watch sees it). Returns (requests
    by status, a's digest)."""
    sent = {}
    digest_a = digest_of(ports[0])
    for i in range(ROUNDS):
        if i == ROUNDS // 2:
            with open(catalog_a + ".tmp", "w") as f:
                f.write('{"targets": [{"name": "broken", "sm_count": 0}], "models": []}\n')
            os.rename(catalog_a + ".tmp", catalog_a)
        for port in ports:
            one_round(port, sent)
        time.sleep(0.25)
    if digest_of(ports[0]) != digest_a:
        raise Failed("a's catalog changed although its new file is broken")
    return sent, digest_a


def metric_names(expr, rules):
    """Raw metric names an expression reads, through the recording rules."""
    bare = check_dashboard.STRING_RE.sub('""', check_dashboard.VAR_RE.sub("", expr))
    names = set()
    for rule in check_dashboard.RULE_NAME_RE.findall(bare):
        if rule not in rules:
            raise Failed(f"{rule} is not a recording rule Prometheus loaded")
        for q in rules[rule]:
            names |= metric_names(q, rules)
    bare = check_dashboard.RULE_NAME_RE.sub(" ", bare)
    return names | set(re.findall(r"\b(?:splitkd_\w+|process_\w+|up|ALERTS)\b", bare))


def substitute(expr):
    def sub(m):
        name = m.group(1) or m.group(2) or m.group(3)
        return SUBST[name]
    return check_dashboard.VAR_RE.sub(sub, expr)


def row_of(dash):
    """panel id -> title of the row above it."""
    rows, current = {}, ""
    for p in dash["panels"]:
        if p.get("type") == "row":
            current = p["title"]
        rows[p["id"]] = current
        for q in p.get("panels", []):
            rows[q["id"]] = current
    return rows


def loaded_rules(base):
    return [r for g in api(base, "/api/v1/rules")["groups"] for r in g["rules"]]


def check_rules(base):
    """Every rule of the file loaded, evaluated and healthy; returns the
    recording rules' queries by name."""
    wait_for("every rule to be evaluated",
             lambda: all(r["health"] != "unknown" for r in loaded_rules(base)))
    rules = loaded_rules(base)
    with open(RULES) as f:
        in_file = len(re.findall(r"^\s*- (?:record|alert):", f.read(), re.M))
    if len(rules) != in_file:
        raise Failed(f"Prometheus loaded {len(rules)} rules, the file has {in_file}")
    bad = [f"{r['name']}: {r['health']} {r.get('lastError', '')}" for r in rules if r["health"] != "ok"]
    if bad:
        raise Failed("rules in error: " + "; ".join(bad))
    with_data = 0
    for r in rules:
        if api(base, "/api/v1/query", query=r["query"])["result"]:
            with_data += 1
    records = sum(1 for r in rules if r["type"] == "recording")
    print(f"rules: {len(rules)} ({records} recording, {len(rules) - records} alerting) healthy "
          f"in /api/v1/rules and evaluated again through /api/v1/query, {with_data} with data now")
    by_record = {}
    for r in rules:
        if r["type"] == "recording":
            by_record.setdefault(r["name"], []).append(r["query"])
    return by_record


def check_panels(base, t0, by_record):
    with open(DASHBOARD) as f:
        dash = json.load(f)
    present = set(api(base, "/api/v1/label/__name__/values"))
    rows = row_of(dash)
    now = time.time()
    failures, not_exposed, results, must, traffic = [], set(), {}, 0, []
    for where, expr, instant, panel in check_dashboard.queries(dash):
        q = substitute(expr)
        if instant:
            data = api(base, "/api/v1/query", query=q)
        else:
            data = api(base, "/api/v1/query_range", query=q, start=f"{t0:.3f}",
                       end=f"{now:.3f}", step="1")
        results[where] = data["result"]
        if rows.get(panel) in TRAFFIC_ROWS:
            traffic.append(where)
        missing = metric_names(expr, by_record) - present
        if where.startswith("annotation"):
            continue  # an event query is empty until the event happens
        if missing:
            not_exposed |= missing
            continue
        must += 1
        if not data["result"]:
            failures.append(f"{where} returned no data: {q}")
    instants = sum(1 for _, _, instant, _ in check_dashboard.queries(dash) if instant)
    print(f"dashboard: {len(results)} queries evaluated without error ({instants} instant, "
          f"{len(results) - instants} ranges over the last {now - t0:.0f} s, step 1 s); "
          f"{sum(1 for r in results.values() if r)} returned data, {must} of them had to")
    if not_exposed:
        print(f"dashboard: queries on metrics splitkd does not expose yet, empty as expected: "
              f"{', '.join(sorted(not_exposed))}")
    if not traffic:
        failures.append(f"the dashboard has no panel in the rows {TRAFFIC_ROWS}")
    for w in traffic:
        print(f"  traffic: {w}: {len(results[w])} series")
        if not results[w]:
            failures.append(f"traffic panel {w} returned no data")
    if failures:
        raise Failed("; ".join(failures))
    return results


def label_set(result, label):
    return {s["metric"].get(label) for s in result}


def check_traffic_labels(results):
    statuses = routes = None
    for where, r in results.items():
        if '"Requests/s by status"' in where:
            statuses = label_set(r, "status")
        if '"Requests/s by route"' in where:
            routes = label_set(r, "route")
    want_status = {"200", "304", "400", "404", "405"}
    want_route = {"/v1/splits", "/v1/targets", "/v1/targets/{name}", "/v1/matrix", "/healthz",
                  "other", "/metrics"}
    if statuses is None or not want_status <= statuses:
        raise Failed(f"Requests/s by status shows {statuses}, not all of {want_status}")
    if routes is None or not want_route <= routes:
        raise Failed(f"Requests/s by route shows {routes}, not all of {want_route}")
    print(f"traffic panels: statuses {sorted(statuses)}; routes {sorted(routes)}")


def check_variables(base, instances):
    jobs = api(base, "/api/v1/label/job/values", **{"match[]": "splitkd_build_info"})
    got = api(base, "/api/v1/label/instance/values",
              **{"match[]": 'splitkd_build_info{job=~"splitkd"}'})
    if "splitkd" not in jobs or set(got) != set(instances):
        raise Failed(f"variables: job {jobs}, instance {got}; wanted splitkd and {instances}")
    print(f"variables: job {jobs}, instance {sorted(got)}")


def alerts_by_name(base):
    out = {}
    for a in api(base, "/api/v1/alerts")["alerts"]:
        out.setdefault(a["labels"]["alertname"], []).append(a)
    return out


def check_alerts(base, inst_a, inst_b):
    def reload_alert():
        got = alerts_by_name(base).get("SplitkdCatalogReloadFailing", [])
        return [a for a in got if a["labels"].get("instance") == inst_a
                and a["state"] in ("pending", "firing")]
    fired = wait_for("SplitkdCatalogReloadFailing for a", reload_alert)
    invalid = wait_for("SplitkdCatalogFileInvalid pending for a", lambda: [
        a for a in alerts_by_name(base).get("SplitkdCatalogFileInvalid", [])
        if a["labels"].get("instance") == inst_a and a["state"] in ("pending", "firing")])
    mismatch = wait_for("SplitkdCatalogDigestMismatch", lambda: [
        a for a in alerts_by_name(base).get("SplitkdCatalogDigestMismatch", [])
        if a["state"] in ("pending", "firing")])
    active = alerts_by_name(base)
    wrong = [a for n in ("SplitkdCatalogReloadFailing", "SplitkdCatalogFileInvalid")
             for a in active.get(n, []) if a["labels"].get("instance") == inst_b]
    for name in ("SplitkdDown", "SplitkdHighErrorRatio", "SplitkdHighLatency"):
        wrong += active.get(name, [])
    if wrong:
        raise Failed(f"alerts that should be quiet: {wrong}")
    a = fired[0]
    print(f"alerts: SplitkdCatalogReloadFailing {a['state']} for {inst_a} "
          f"(value {float(a['value']):.2f}): \"{a['annotations']['description']}\"")
    print(f"alerts: SplitkdCatalogFileInvalid {invalid[0]['state']} for {inst_a} (for: 5m)")
    print(f"alerts: SplitkdCatalogDigestMismatch {mismatch[0]['state']} "
          f"(value {float(mismatch[0]['value']):g}); active now: "
          + ", ".join(f"{n} x{len(v)}" for n, v in sorted(active.items())))


def run(binary, tmp):
    started = time.monotonic()
    cat_a, cat_b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
    catalog = json.loads(subprocess.run([binary, "--dump-catalog"], check=True,
                                        capture_output=True, text=True).stdout)
    with open(cat_a, "w") as f:
        json.dump(catalog, f)
    catalog["targets"][0]["notes"] += " (replica b's copy)"
    with open(cat_b, "w") as f:
        json.dump(catalog, f)
    splitkd_a, port_a = start_splitkd(binary, cat_a, os.path.join(tmp, "a.log"))
    _, port_b = start_splitkd(binary, cat_b, os.path.join(tmp, "b.log"))
    inst_a, inst_b = f"127.0.0.1:{port_a}", f"127.0.0.1:{port_b}"
    t0 = time.time()
    base = start_prometheus(tmp, [port_a, port_b])
    print(f"started: splitkd a on {inst_a}, b on {inst_b}, prometheus on {base} "
          f"in {time.monotonic() - started:.1f} s")
    wait_for("both replicas scraped", lambda: len(
        api(base, "/api/v1/query", query='up{job="splitkd"} == 1')["result"]) == 2)
    sent, digest_a = drive([port_a, port_b], cat_a, splitkd_a)
    print(f"traffic: {sum(sent.values())} requests, by status {dict(sorted(sent.items()))}; "
          f"a refused its broken catalog and still serves {digest_a}, b serves {digest_of(port_b)}")
    wait_for("a's watch to refuse the broken file", lambda: "reload refused" in open(
        os.path.join(tmp, "a.log")).read())
    wait_for("the refused reload in Prometheus", lambda: api(
        base, "/api/v1/query",
        query=f'splitkd_reloads_total{{result="error", instance="{inst_a}"}} == 1')["result"])
    def last_results():
        got = {r["metric"]["instance"]: r["value"][1] for r in api(
            base, "/api/v1/query", query='splitkd_catalog_last_reload_successful{job="splitkd"}'
        )["result"]}
        return got if len(got) == 2 and got.get(inst_a) == "0" else None
    last = wait_for("splitkd_catalog_last_reload_successful 0 for a", last_results)
    if last != {inst_a: "0", inst_b: "1"}:
        raise Failed(f"splitkd_catalog_last_reload_successful: {last}, want a 0 and b 1")
    print(f"metrics: splitkd_catalog_last_reload_successful a {last[inst_a]}, b {last[inst_b]}")
    by_record = check_rules(base)
    results = check_panels(base, t0, by_record)
    check_traffic_labels(results)
    check_variables(base, [inst_a, inst_b])
    check_alerts(base, inst_a, inst_b)
    print(f"prometheus integration: ok in {time.monotonic() - started:.1f} s")


def stop_all():
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tmp = tempfile.mkdtemp(prefix="splitkd-prom-")
    try:
        run(binary, tmp)
        return 0
    except Failed as e:
        print(f"prometheus integration: FAILED: {e}", file=sys.stderr)
        for name in ("prometheus.log", "a.log", "b.log"):
            path = os.path.join(tmp, name)
            if os.path.exists(path):
                print(f"--- {name} (last lines)\n" + "".join(open(path).readlines()[-15:]),
                      file=sys.stderr)
        return 1
    finally:
        stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
