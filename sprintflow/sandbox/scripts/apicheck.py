"""api-check runner: start the server, wait until ready, check every endpoint, stop it all.

Runs inside the sandbox next to the server (loopback works with the network
off), so it uses the standard library only. Input: a JSON spec file (argv[1]).
Output: one JSON object on stdout; exit 0 only when every check passed.
"""

import http.client
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
import urllib.parse

EXCERPT = 500


def start_server(command, pattern, timeout_s):
    """Start ``command`` in its own process group; return (proc, ready, output)."""
    proc = subprocess.Popen(command, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    os.set_blocking(proc.stdout.fileno(), False)
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    output, deadline, regex = b"", time.monotonic() + timeout_s, re.compile(pattern)
    while time.monotonic() < deadline:
        for _ in selector.select(timeout=0.1):
            chunk = proc.stdout.read() or b""
            output = (output + chunk)[-20000:]
        if regex.search(output.decode("utf-8", "replace")):
            return proc, True, output.decode("utf-8", "replace")
        if proc.poll() is not None:
            break
    return proc, False, output.decode("utf-8", "replace")


def drain(proc, pause=0.1):
    """Whatever the server printed since the last read (a traceback after a 500, say)."""
    if proc is None or proc.stdout.closed:
        return ""
    time.sleep(pause)  # give the server a moment to flush what it logs after answering
    try:
        chunk = proc.stdout.read() or b""
    except (BlockingIOError, ValueError):
        chunk = b""
    return chunk.decode("utf-8", "replace")[-8000:]


def stop_server(proc):
    """SIGTERM the server's whole process group, SIGKILL what remains after 2 s."""
    for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        end = time.monotonic() + grace
        while time.monotonic() < end:
            proc.poll()
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)


def check_endpoint(base_url, endpoint, timeout_s):
    """One request; the result says what was expected, what came back, and what is missing."""
    url = urllib.parse.urlsplit(base_url)
    method = endpoint.get("method", "GET").upper()
    path = endpoint.get("path", "/")
    expected = endpoint.get("expectedStatus", 200)
    result = {"method": method, "path": path, "expectedStatus": expected,
              "description": endpoint.get("description", ""),
              "criterion": endpoint.get("criterion"), "status": None, "missingKeys": [],
              "body": "", "error": None, "ok": False}
    body = endpoint.get("body")
    headers = {"Accept": "application/json", **endpoint.get("headers", {})}
    payload = None
    if body is not None:
        payload = json.dumps(body).encode() if not isinstance(body, str) else body.encode()
        headers.setdefault("Content-Type", "application/json")
    try:
        conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=timeout_s)
        conn.request(method, path, body=payload, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        result["status"] = response.status
        result["body"] = raw[:EXCERPT].decode("utf-8", "replace")
        conn.close()
    except (OSError, http.client.HTTPException) as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
        return result
    keys = endpoint.get("expectedBodyKeys") or []
    if keys:
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        present = parsed.keys() if isinstance(parsed, dict) else ()
        result["missingKeys"] = [k for k in keys if k not in present]
    result["ok"] = result["status"] == expected and not result["missingKeys"]
    return result


def main():
    spec = json.loads(os.environ["SPRINTFLOW_APICHECK_SPEC"])
    report = {"ready": True, "serverOutput": "", "checks": []}
    proc = None
    if spec.get("startServer", True):
        proc, ready, output = start_server(spec["serverCommand"], spec.get("serverReadyPattern", "."),
                                           spec.get("serverTimeout", 15000) / 1000)
        report["ready"], report["serverOutput"] = ready, output[-4000:]
    try:
        if report["ready"]:
            for endpoint in spec.get("endpoints", []):
                check = check_endpoint(spec["baseUrl"], endpoint, spec.get("requestTimeout", 10))
                check["serverLog"] = drain(proc, pause=0.1 if not check["ok"] else 0)
                report["checks"].append(check)
    finally:
        if proc is not None:
            stop_server(proc)
    print(json.dumps(report))
    return 0 if report["ready"] and all(c["ok"] for c in report["checks"]) else 1


if __name__ == "__main__":
    sys.exit(main())
