#!/usr/bin/env python3
"""A handler that misbehaves in turn (scripts/soak.sh): each request gets the
next fault: a right answer, garbage, a line far over the limit, a flood of
unsolicited lines, silence past the time limit, a crash, an answer after
noise on standard error. Parley must survive all of them and restart it."""
import json, os, sys, time

state = os.path.join(os.environ.get("PARLEY_APP_DATA", "/tmp"), "fault")
faults = ["ok", "garbage", "long-line", "flood", "hang", "crash", "stderr-noise"]

def next_fault():
    try:
        n = int(open(state).read())
    except (OSError, ValueError):
        n = 0
    open(state, "w").write(str(n + 1))
    return faults[n % len(faults)]

def answer(rid, text):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"dialog": text}}) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    if request.get("method") == "shutdown":
        break
    rid = request.get("id")
    if rid is None:
        continue
    if request.get("method") != "perform":
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}}) + "\n")
        sys.stdout.flush()
        continue
    fault = next_fault()
    if fault == "ok":
        answer(rid, "All is well.")
    elif fault == "garbage":
        sys.stdout.write("this is not JSON at all\n"); sys.stdout.flush()
    elif fault == "long-line":
        sys.stdout.write("x" * (200 * 1024) + "\n"); sys.stdout.flush()
    elif fault == "flood":
        for n in range(5000):
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": 10_000 + n, "result": None}) + "\n")
        sys.stdout.flush()
    elif fault == "hang":
        time.sleep(3600)
    elif fault == "crash":
        os._exit(3)
    elif fault == "stderr-noise":
        for n in range(2000):
            sys.stderr.write("noise %d %s\n" % (n, "y" * 5000))
        sys.stderr.flush()
        answer(rid, "Noisy but fine.")
