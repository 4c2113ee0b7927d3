# SPDX-License-Identifier: AGPL-3.0-only
"""What the browser tests share (test_page.py, test_cross_origin.py): a free
loopback port, waiting for a process to listen on one, waiting for a
condition with a deadline, and headless Chromium as both start it."""
import os
import socket
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


class Failed(Exception):
    pass


def free_port(host="127.0.0.1"):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise Failed(f"process exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise Failed(f"nothing listens on {port} after {timeout} s")


def wait(cond, timeout, what):
    """cond()'s first true value, polled every 0.1 s; TimeoutError past `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.1f} s")
        time.sleep(0.1)


def chromium(tmp, width, height, hosts=("127.0.0.1",), extra=()):
    """Headless Chromium (Debian's, with its chromedriver) with its profile
    and driver log in `tmp`, the browser console kept; only `hosts` resolve,
    so a fetch to anywhere else fails and is logged."""
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    rules = "MAP * ~NOTFOUND, " + ", ".join("EXCLUDE " + h for h in hosts)
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--disable-background-networking", "--disable-component-update",
              "--disable-sync", "--no-first-run", "--no-default-browser-check",
              "--disable-extensions", f"--window-size={width},{height}",
              "--host-resolver-rules=" + rules,
              "--user-data-dir=" + os.path.join(tmp, "profile"), *extra]:
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service("/usr/bin/chromedriver", log_path=os.path.join(tmp, "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=o)
    driver.set_page_load_timeout(20)
    driver.set_script_timeout(10)
    return driver
