#!/usr/bin/env python3
"""Attacks a running parleyd as LAN peers would (scripts/attack.sh starts it).

Peers are played from other loopback addresses (127.0.0.2, .3, ...: the
whole 127/8 answers on Linux, so each client socket is bound to its own
source address). Every attack must be refused with a clear error, nothing
the owner has may be lost, and a voice order (the control socket's `say`,
the path a heard command takes after recognition) must be answered within
1 s during and after, with the daemon's resident memory growing < 10 MiB.

usage: attack.py PID CONTROL_SOCKET PAGE_URL SATELLITE_PORT HANDLER_PORT LOG
Prints one line per check ("ok ..." or "FAIL ...") and the figures; exits 1
on any failure.
"""
import json
import os
import socket
import struct
import sys
import threading
import time
import urllib.parse

pid, control, url, sat_port, handle_port, log_path = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
page = urllib.parse.urlparse(url)
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))


def say(text):
    """The control socket's `say`: (seconds, what the device said)."""
    start = time.monotonic()
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(control)
    s.sendall((json.dumps({"command": "say", "text": text}) + "\n").encode())
    reply = json.loads(s.makefile().readline())
    s.close()
    return time.monotonic() - start, reply


def control_request(request):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(control)
    s.sendall((json.dumps(request) + "\n").encode())
    reply = json.loads(s.makefile().readline())
    s.close()
    return reply


def tcp(port, source, host="127.0.0.1", timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect((host, port))
    return s


def http(method, path, source="127.0.0.1", body=None, headers=None):
    """(status, headers dict lowercased, body text) over a fresh connection from `source`."""
    s = tcp(page.port, source)
    data = (body or "").encode()
    lines = [f"{method} {path} HTTP/1.1", f"Host: {page.netloc}", "Connection: close"]
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if body is not None:
        lines += ["Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(data)}"]
    s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
    raw = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        raw += chunk
    s.close()
    head, _, rest = raw.partition(b"\r\n\r\n")
    head_lines = head.decode(errors="replace").split("\r\n")
    status = int(head_lines[0].split()[1]) if head_lines and len(head_lines[0].split()) > 1 else 0
    hdrs = {}
    for l in head_lines[1:]:
        k, _, v = l.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return status, hdrs, rest.decode(errors="replace")


def wyoming_event(kind, data=None, payload=b""):
    header = {"type": kind, "version": "1.9.0"}
    body = json.dumps(data or {}).encode()
    header["data_length"] = len(body)
    if payload:
        header["payload_length"] = len(payload)
    return json.dumps(header).encode() + b"\n" + body + payload


def wyoming_read(s):
    """The next event's (type, data) or None at the close."""
    f = s.makefile("rb")
    line = f.readline()
    if not line:
        return None
    header = json.loads(line)
    data = json.loads(f.read(header.get("data_length", 0)) or b"{}") if header.get("data_length") else header.get("data", {})
    if header.get("payload_length"):
        f.read(header["payload_length"])
    return header["type"], data


def closed(s):
    try:
        return s.recv(1) == b""
    except (ConnectionResetError, socket.timeout):
        return True


phases = []


def threads():
    return len(os.listdir(f"/proc/{pid}/task"))


def phase(name):
    """Notes the resident memory and threads after a phase (the figures say where they went)."""
    phases.append(f"{name} {rss_kib() / 1024:.1f} MiB {threads()} threads")


def log_text():
    with open(log_path, errors="replace") as f:
        return f.read()


# --- The voice order, asked every 0.25 s on a thread for the whole attack.
latencies = []
order_failures = []
stop = threading.Event()


def orders():
    while not stop.is_set():
        seconds, reply = say("how much time is left on the timer")
        latencies.append(seconds)
        if not reply.get("ok") or not reply.get("spoken"):
            order_failures.append(reply)
        time.sleep(0.25)


# Warm-up: what the owner and Home Assistant do anyway (the page served once,
# the handler asked once), so one-time set-up is not counted as the attack's.
http("GET", "/pair")
warm = tcp(handle_port, "127.0.0.1")
warm.sendall(wyoming_event("describe"))
wyoming_read(warm)
warm.close()
time.sleep(1)
baseline_seconds, baseline = say("how much time is left on the timer")
check(baseline.get("ok") and baseline.get("spoken"), f"a voice order is answered before the attack ({baseline_seconds:.3f} s: {baseline.get('spoken')})")
shortcuts_before = control_request({"command": "shortcut-list"})
rss_before = rss_kib()
peak = [rss_before]
orderer = threading.Thread(target=orders)
orderer.start()


def sample_rss():
    while not stop.is_set():
        peak[0] = max(peak[0], rss_kib())
        time.sleep(0.1)


sampler = threading.Thread(target=sample_rss)
sampler.start()

# --- Wyoming: Home Assistant (127.0.0.1, the allowed address) links first.
ha = tcp(sat_port, "127.0.0.1")
ha.sendall(wyoming_event("run-satellite") + wyoming_event("ping", {"text": "hello"}))
check(wyoming_read(ha) == ("pong", {"text": "hello"}), "Home Assistant links to the satellite")
# Takeover from another LAN address: refused by the allow list.
intruder = tcp(sat_port, "127.0.0.66")
event = wyoming_read(intruder)
check(event is not None and event[0] == "error" and event[1].get("code") == "not-allowed" and "127.0.0.66" in event[1].get("text", "")
      and closed(intruder), f"satellite takeover from 127.0.0.66 refused: {event}")
# Takeover from Home Assistant's own address (a second link): busy.
second = tcp(sat_port, "127.0.0.1")
event = wyoming_read(second)
check(event is not None and event[0] == "error" and event[1].get("code") == "busy" and closed(second), f"a second link is refused: {event}")
# The handle role (Parley's apps) behind the same list.
handle = tcp(handle_port, "127.0.0.67")
handle.sendall(wyoming_event("transcript", {"text": "forget my history"}))
event = wyoming_read(handle)
check(event is not None and event[0] == "error" and event[1].get("code") == "not-allowed" and closed(handle), f"the handle role refuses 127.0.0.67: {event}")
# An oversized header (a 1 GiB data length) on its own link: refused, the link closed.
big = tcp(handle_port, "127.0.0.1")
big.sendall(json.dumps({"type": "transcript", "data_length": 1 << 30}).encode() + b"\n")
event = wyoming_read(big)
check(event is not None and event[0] == "error" and closed(big), f"a 1 GiB event is refused before it is read: {event}")
# An oversized audio format from Home Assistant itself.
ha.sendall(wyoming_event("audio-start", {"rate": 10_000_000, "width": 4, "channels": 8}))
event = wyoming_read(ha)
check(event is not None and event[0] == "error", f"a 10 MHz, 32-bit, 8-channel answer is refused: {event}")
ha.close()

phase("wyoming")
# --- The page: 500 idle connections from 10 addresses.
idle = []
refused_at_once = 0
for n in range(500):
    try:
        idle.append(tcp(page.port, f"127.0.1.{n % 10 + 1}", timeout=2))
    except OSError:
        refused_at_once += 1
time.sleep(0.5)
start = time.monotonic()
status, _, body = http("GET", "/pair", source="127.0.0.9")
check(status == 200, f"the owner's phone gets the page beside 500 idle connections ({time.monotonic() - start:.3f} s)")

phase("idle-connections")
# --- Pairing: the owner asks for a code; 8 addresses guess 6 times each.
status, _, _ = http("POST", "/pair/code", headers={"Origin": url.rstrip("/")})
check(status == 200, f"the owner asks for a code ({status})")
code = log_text().rsplit("Your pairing code is ", 1)[-1].split(".")[0].replace(" ", "")
guess_statuses = []
for n in range(8):
    for _ in range(6):
        wrong = "000000" if code != "000000" else "111111"
        status, _, body = http("POST", "/pair", source=f"127.0.2.{n + 1}", body=f"code={wrong}", headers={"Origin": url.rstrip("/")})
        guess_statuses.append(status)
check(guess_statuses == [403, 403, 403, 403, 429, 429] * 8,
      f"48 guesses from 8 addresses: each address told it is wrong 4 times, locked at its 5th, refused its 6th ({guess_statuses.count(403)} x 403, {guess_statuses.count(429)} x 429)")
# Asking for codes from many addresses: one is spoken a minute, whoever asks.
spoken_before = log_text().count("Your pairing code is")
code_statuses = [http("POST", "/pair/code", source=f"127.0.3.{n + 1}", headers={"Origin": url.rstrip("/")})[0] for n in range(20)]
check(code_statuses.count(429) == 20 and log_text().count("Your pairing code is") == spoken_before,
      f"20 code requests from 20 addresses: none spoken ({code_statuses.count(429)} x 429)")
status, hdrs, _ = http("POST", "/pair", body=f"code={code}", headers={"Origin": url.rstrip("/")})
cookie = hdrs.get("set-cookie", "").split(";")[0]
check(status == 303 and cookie.startswith("parley_session="), f"the owner still pairs with the spoken code ({status})")

phase("pairing")
# --- Forged POSTs: another origin, no origin, no form token.
forged = [
    http("POST", "/history/forget", body="scope=all&confirm=yes", headers={"Origin": "http://evil.example", "Cookie": cookie})[0],
    http("POST", "/history/forget", body="scope=all&confirm=yes", headers={"Cookie": cookie})[0],
    http("POST", "/history/forget", body="scope=all&confirm=yes", headers={"Origin": url.rstrip("/"), "Cookie": cookie})[0],
    http("POST", "/shortcuts/delete", body="name=x", headers={"Origin": url.rstrip("/")})[0],
]
check(forged == [403, 403, 403, 403], f"4 forged changes refused: {forged}")

phase("forged")
# --- Alias bombs: through the page (a paired browser) and through the socket.
bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9))
_, _, tokens_page = http("GET", "/shortcuts/edit", headers={"Cookie": cookie})
form_token = tokens_page.split('name="form_token" value="', 1)[-1].split('"', 1)[0]
start = time.monotonic()
status, _, body = http("POST", "/shortcuts/save", body="form_token=" + form_token + "&text=" + urllib.parse.quote(bomb),
                       headers={"Origin": url.rstrip("/"), "Cookie": cookie})
check(status == 422 and "anchor" in body.lower(), f"an alias bomb through the page is refused at its first anchor ({status}, {time.monotonic() - start:.3f} s)")
bomb_file = log_path + ".bomb.yaml"
with open(bomb_file, "w") as f:
    f.write(bomb)
start = time.monotonic()
reply = control_request({"command": "shortcut-add", "value": bomb_file})
check(not reply.get("ok") and "anchor" in (reply.get("error") or "").lower(),
      f"an alias bomb through the socket is refused ({time.monotonic() - start:.3f} s): {(reply.get('error') or '')[:120]}")

phase("alias-bombs")
for s in idle:
    s.close()
stop.set()
orderer.join()
sampler.join()
time.sleep(1)
after_seconds, after = say("how much time is left on the timer")
check(after.get("ok") and after.get("spoken"), f"a voice order is answered after the attack ({after_seconds:.3f} s)")
check(control_request({"command": "shortcut-list"}) == shortcuts_before, "nothing the owner had was lost (shortcuts unchanged)")
slowest = max(latencies + [after_seconds])
check(not order_failures, f"every voice order during the attack was answered ({len(latencies)} orders, {len(order_failures)} failed)")
check(slowest < 1.0, f"the slowest voice order took {slowest:.3f} s (< 1 s)")
rss_after = rss_kib()
growth = (max(rss_after, peak[0]) - rss_before) / 1024
check(growth < 10, f"resident memory {rss_before / 1024:.1f} -> peak {peak[0] / 1024:.1f}, after {rss_after / 1024:.1f} MiB (growth {growth:.1f} MiB < 10)")
print(f"figures: orders {len(latencies)}, median {sorted(latencies)[len(latencies) // 2]:.3f} s, slowest {slowest:.3f} s; "
      f"rss before {rss_before} KiB, peak {peak[0]} KiB, after {rss_after} KiB; idle connections refused at connect {refused_at_once}")
print("after each phase: " + ", ".join(phases))
sys.exit(1 if failures else 0)
