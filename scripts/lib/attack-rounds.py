#!/usr/bin/env python3
"""Repeats the cheapest LAN attacks in rounds against a running parleyd and
prints its resident memory and threads after each (scripts/attack.sh with
ROUNDS=N): whatever one round costs, later rounds must cost nothing more.

Each round, from addresses no earlier round used: 500 idle page
connections, 100 pairing guesses from 40 addresses, 20 forged POSTs, 20
oversized Wyoming headers on the handle role and 20 strangers on the
satellite. Fails (exit 1) when the last round's memory is more than 1 MiB
above the first's.

usage: attack-rounds.py PID PAGE_URL SATELLITE_PORT HANDLER_PORT ROUNDS
"""
import os
import socket
import sys
import time

pid, url, sat_port, handle_port, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
port = int(url.rstrip("/").rsplit(":", 1)[1])


def rss_mib():
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:")) / 1024


def connect(port, source):
    s = socket.socket()
    s.settimeout(10)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def drain(s, payload):
    s.sendall(payload)
    try:
        while s.recv(65536):
            pass
    except OSError:
        pass
    s.close()


def post(path, source, body):
    request = (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\nConnection: close\r\n"
               f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n{body}")
    drain(connect(port, source), request.encode())


after = []
for r in range(rounds):
    idle = [connect(port, f"127.{10 + r}.0.{n % 50 + 1}") for n in range(500)]
    for n in range(100):
        post("/pair", f"127.{10 + r}.1.{n % 40 + 1}", "code=000000")
    for n in range(20):
        post("/history/forget", f"127.{10 + r}.2.{n + 1}", "scope=all&confirm=yes")
        drain(connect(handle_port, f"127.{10 + r}.3.{n + 1}"), b'{"type": "transcript", "data_length": 100000000}\n')
        drain(connect(sat_port, f"127.{10 + r}.4.{n + 1}"), b'{"type": "describe"}\n')
    for s in idle:
        s.close()
    time.sleep(1)
    after.append(rss_mib())
    print(f"round {r + 1}: {after[-1]:.1f} MiB, {len(os.listdir(f'/proc/{pid}/task'))} threads", flush=True)
growth = after[-1] - after[0]
print(("ok   " if growth <= 1 else "FAIL ") + f"rounds 2-{rounds} added {growth:.1f} MiB to the first round's {after[0]:.1f} MiB (at most 1)")
sys.exit(0 if growth <= 1 else 1)
