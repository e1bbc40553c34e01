#!/usr/bin/env python3
"""Waits until parleyd's control socket answers `status` (the daemon is ready).

Usage: wait-for-socket.py SOCKET [TRIES [INTERVAL_SECONDS]]
Exits 0 once a status reply arrives, else 1 with "parleyd did not become ready"
after TRIES attempts INTERVAL_SECONDS apart (default 2000 x 0.002 s).
Used by scripts/bench-daemon.sh (its ready figure) and scripts/lib/idle-cost.sh.
"""
import socket
import sys
import time

path = sys.argv[1]
tries = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.002
for _ in range(tries):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        s.sendall(b'{"command":"status"}\n')
        s.makefile().readline()
        sys.exit(0)
    except OSError:
        time.sleep(interval)
sys.exit("parleyd did not become ready")
