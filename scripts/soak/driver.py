#!/usr/bin/env python3
"""The soak's load and judge (scripts/soak.sh prepares audio and starts parleyd).

Feeds the running daemon without pause, from several threads at once:
  audio    recorded commands with "hey", the same without it, kitchen noise and
           TV-like speech, played into the spool microphone (`parley play`),
           each followed by its own length of real time (the capture reads the
           spool in real time, so no backlog builds up)
  presses  `parley press` / `double-press` / `long-press` at random moments
  sayers   SAYERS clients running `parley say` at once
  churn    a shortcut added and removed (`parley shortcuts add/remove`), an
           external app folder copied in and removed (the daemon watches)
  gremlin  `parley say "make trouble with gremlin"`: a handler that answers,
           prints garbage, floods, hangs, crashes in turn
Every CHECK_SECONDS the load pauses and checks run on a quiet device: a typed
command that must perform, and a recorded "hey" + coffee order (one that
performed in the calibration at the start) that must reach the button
confirmation and perform on `parley press` (one retry: recognition of a
recording played twice is not bit-identical, as the endpointer's start
differs). Samples resident memory, descriptors, threads and CPU of the daemon
every SAMPLE_SECONDS, and judges growth by a least-squares slope after a
warm-up (not by one reading). Exit status: 0 all well, 1 a failure (printed).
"""
import argparse
import csv
import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time

p = argparse.ArgumentParser()
p.add_argument("--parley", required=True)
p.add_argument("--socket", required=True)
p.add_argument("--pid", type=int, required=True)
p.add_argument("--log", required=True, help="the daemon's standard error")
p.add_argument("--work", required=True)
p.add_argument("--minutes", type=float, required=True)
p.add_argument("--apps-folder", required=True)
p.add_argument("--example-app", required=True)
p.add_argument("--out", required=True, help="folder for samples.csv, events.log, soak.svg")
args = p.parse_args()

SAMPLE_SECONDS = float(os.environ.get("SOAK_SAMPLE_SECONDS", "5"))
CHECK_SECONDS = float(os.environ.get("SOAK_CHECK_SECONDS", "60"))
SAYERS = int(os.environ.get("SOAK_SAYERS", "3"))
SAY_PERIOD = float(os.environ.get("SOAK_SAY_PERIOD", "30"))
CALIBRATION = int(os.environ.get("SOAK_CALIBRATION_FILES", "20"))
# Growth limits, per hour of fitted slope, and the least fitted rise over the
# measured window that counts (a short run's jitter is not a trend).
LIMITS = {
    # Floors: an external app added holds a handler's pipes (+4..6 fds) and
    # a reader thread; the load's own ramp moves RSS by a few MiB.
    "rss_mib": (float(os.environ.get("SOAK_RSS_MIB_PER_HOUR", "16")), 12.0),
    "fds": (float(os.environ.get("SOAK_FDS_PER_HOUR", "6")), 8.0),
    "threads": (float(os.environ.get("SOAK_THREADS_PER_HOUR", "6")), 6.0),
    "cpu_pct": (float(os.environ.get("SOAK_CPU_PCT_PER_HOUR", "30")), 25.0),
}
rng = random.Random(int(os.environ.get("SOAK_SEED", "16")))
start = time.monotonic()
deadline = start + args.minutes * 60
failures = []
counts = {}
lock = threading.Lock()
events = open(os.path.join(args.out, "events.log"), "w")


def note(kind, text=""):
    with lock:
        counts[kind] = counts.get(kind, 0) + 1
        events.write("%8.1f %s %s\n" % (time.monotonic() - start, kind, text))
        events.flush()


def fail(text):
    with lock:
        failures.append(text)
    note("FAILURE", text)
    print("soak: FAILURE: " + text, file=sys.stderr, flush=True)


def parley(*words, timeout=30):
    """Runs the parley tool; (exit status, output). A control call that does
    not return within `timeout` is a failure: the socket must always answer."""
    try:
        done = subprocess.run([args.parley, *words, "--socket", args.socket],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        fail("parley %s did not return within %d s" % (" ".join(words), timeout))
        return 124, ""
    if done.returncode == 69:
        fail("parley %s: the daemon is not running (%s)" % (words[0], done.stderr.strip()))
    return done.returncode, done.stdout + done.stderr


def alive():
    try:
        with open("/proc/%d/stat" % args.pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Gate:
    """Load threads act inside the gate; a check closes it and waits until
    every action in progress has ended, so checks run on a quiet device."""

    def __init__(self):
        self.cv = threading.Condition()
        self.active = 0
        self.closed = False

    def enter(self):
        with self.cv:
            while self.closed:
                self.cv.wait()
            self.active += 1

    def leave(self):
        with self.cv:
            self.active -= 1
            self.cv.notify_all()

    def close(self):
        with self.cv:
            self.closed = True
            while self.active:
                self.cv.wait()

    def open(self):
        with self.cv:
            self.closed = False
            self.cv.notify_all()


gate = Gate()


def running():
    return time.monotonic() < deadline and not failures


def act(body):
    gate.enter()
    try:
        body()
    finally:
        gate.leave()


def play(path):
    """Plays a WAV into the spool and waits as long as it lasts."""
    status, out = parley("play", path)
    m = re.search(r"\(([0-9.]+) s\)", out)
    if status != 0 or not m:
        if not failures:
            fail("parley play %s: %s" % (os.path.basename(path), out.strip()))
        return
    time.sleep(float(m.group(1)))


class LogWatch:
    """New lines of the daemon's log since the last call."""

    def __init__(self):
        self.offset = 0

    def skip(self):
        self.offset = os.path.getsize(args.log)

    def new(self):
        with open(args.log, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        return data.decode("utf-8", "replace")


def listing(folder):
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".wav"))


with_hey = listing(os.path.join(args.work, "commands-hey"))
without_hey = listing(os.path.join(args.work, "commands-bare"))
noise = listing(os.path.join(args.work, "noise"))
tv = listing(os.path.join(args.work, "tv"))


def audio_load():
    kinds = [("hey-command", with_hey, 3), ("bare-command", without_hey, 2), ("noise", noise, 2), ("tv", tv, 2)]
    bag = [(k, files) for k, files, w in kinds for _ in range(w)]
    while running():
        kind, files = rng.choice(bag)
        path = rng.choice(files)
        act(lambda: play(path))
        note("audio-" + kind, os.path.basename(path))


def presses():
    while running():
        time.sleep(rng.uniform(2, 15))
        which = rng.choices(["press", "double-press", "long-press"], [6, 2, 2])[0]
        act(lambda: parley(which))
        note(which)


SAY = ["what can i say", "set a timer for five minutes", "how much time is left on the timer", "cancel", "what can soup chef do",
       "add milk to the shopping list", "what's on the shopping list", "read my notes", "the weather is nice today",
       "order soup with soup chef", "repeat that", "lunch time"]


burst = threading.Condition()
burst_count = [0]


def bursts():
    while running():
        time.sleep(rng.uniform(0.5, 1.5) * SAY_PERIOD)
        with burst:
            burst_count[0] += 1
            burst.notify_all()


def sayer(n):
    """Every reply is spoken and a spoken line takes seconds, so sayers that
    never paused would keep the device talking (its queue at the 120 s
    bound) and every recorded command would be heard as a barge-in only.
    The sayers speak in bursts, all at once (concurrent clients), one burst
    every SAY_PERIOD seconds on average (`bursts`)."""
    seen = 0
    while running():
        with burst:
            while burst_count[0] == seen and running():
                burst.wait(timeout=1)
            seen = burst_count[0]
        if not running():
            break
        for _ in range(rng.choice([1, 1, 2])):
            time.sleep(rng.uniform(0, 0.5))
            text = rng.choice(SAY) if rng.random() > 0.15 else "make trouble with gremlin"
            act(lambda: parley("say", text))
            note("say", text)


SHORTCUT = """name: Soak Lunch
phrases: [soak lunch time]
triggers:
  - button: double-press
actions:
  - speak: "Lunch time"
  - run: Timer.TimeLeft
"""


def churn():
    shortcut = os.path.join(args.work, "soak-lunch.yaml")
    with open(shortcut, "w") as f:
        f.write(SHORTCUT)
    app = os.path.join(args.apps_folder, "shopping-list")
    added = False
    while running():
        time.sleep(rng.uniform(5, 15))
        if rng.random() < 0.5:
            def flip_shortcut():
                nonlocal added
                status, out = parley("shortcuts", "remove" if added else "add", "Soak Lunch" if added else shortcut)
                if status != 0:
                    # Churn that the daemon refused would be no churn at all.
                    fail("parley shortcuts %s: %s" % ("remove" if added else "add", out.strip()))
                    return
                added = not added
                note("shortcut-" + ("added" if added else "removed"))
            act(flip_shortcut)
        else:
            def flip():
                if os.path.isdir(app):
                    shutil.rmtree(app)
                    note("app-removed")
                else:
                    shutil.copytree(args.example_app, app + ".tmp")
                    os.rename(app + ".tmp", app)   # appears whole to the watcher
                    note("app-added")
            act(flip)


# MARK: checks

watch = LogWatch()
PERFORMED = re.compile(r"performed .*intent=([^ ]+)")


def performed_since(seconds, wanted):
    end = time.monotonic() + seconds
    text = ""
    while time.monotonic() < end:
        text += watch.new()
        if any(m.group(1).startswith(wanted) for m in PERFORMED.finditer(text)):
            return True
        time.sleep(0.2)
    return False


TYPED_CHECK = "how much time is left on the timer"


def speaking():
    """Whether the device's voice is playing (`parley status`, audio line):
    every reply, typed ones included, is spoken, and speech heard meanwhile
    is listened to for "stop" and "cancel" only."""
    status, out = parley("status")
    audio = next((line for line in out.splitlines() if line.startswith("audio:")), "")
    return status == 0 and "speaking" in audio


LISTENER_SETTLE = 2.0  # s without a new listener line before the device counts as quiet


def quiet_device():
    """Ends any conversation the load left open and waits until the device
    has said everything queued (up to the 120 s bound on queued speech) and
    its listener has nothing left to decide: the last file the load played
    can still be decoding after the press on a loaded machine (2026-12-02:
    its order, heard after the press, took the typed check as its answer),
    so a listener line in the settle window means press and wait again."""
    end = time.monotonic() + 150
    while True:
        parley("long-press")
        quiet = 0
        while quiet < 3:           # three readings in a row: not a gap between two lines
            if time.monotonic() > end:
                fail("the device was still speaking 150 s after the load paused (queued speech is bounded at 120 s)")
                return
            quiet = 0 if speaking() else quiet + 1
            time.sleep(0.3)
        watch.skip()
        time.sleep(LISTENER_SETTLE)
        if "parley.listen:" not in watch.new():
            return
        if time.monotonic() > end:
            fail("the listener was still deciding utterances 150 s after the load paused")
            return


def typed_check():
    """A typed command performs on a quiet device. Tried twice, as the audio
    check is: a long recording of the load can still be decoding after the
    settle window when the listener runs seconds behind (2026-12-06: its
    order, decided over the device's voice after the window, opened a
    confirmation that took the typed command as its answer, "Sorry?")."""
    for attempt in (1, 2):
        quiet_device()         # a question the load left open would take the command as its answer
        watch.skip()
        status, out = parley("say", TYPED_CHECK)
        if status == 0 and performed_since(5, "Timer/TimeLeft"):
            return None
        if attempt == 1:
            note("typed-check-retry", out.strip()[:80])
    return "a typed command (%s) did not perform twice in a row: %s" % (TYPED_CHECK, out.strip())


def audio_check(path):
    """hey + a coffee order: the engine asks for the button; a press performs it.
    (An order is never asked back when heard with low confidence: its
    read-back is the check.)"""
    for attempt in (1, 2):
        quiet_device()
        watch.skip()
        play(path)
        time.sleep(2.5)            # endpoint silence, recognition, the confirmation question
        parley("press")
        if performed_since(6, ""):
            return None
        note("audio-check-retry", os.path.basename(path))
    return "the recorded command %s (performed at calibration) did not perform twice in a row" % os.path.basename(path)


def calibrate():
    """Known-good recordings: up to CALIBRATION tried, stopping at three that
    perform (many orders leave a value unsaid and get a question instead)."""
    good = []
    for path in with_hey[:CALIBRATION]:
        if audio_check(path) is None:
            good.append(path)
        if len(good) >= 3:
            break
    note("calibrated", "%d of %d" % (len(good), min(CALIBRATION, len(with_hey))))
    return good


def checks(good):
    while running():
        time.sleep(CHECK_SECONDS)
        if not running():
            break
        gate.close()
        try:
            for problem in (typed_check(), audio_check(rng.choice(good))):
                if problem:
                    fail(problem)
                else:
                    note("check-passed")
        finally:
            gate.open()


# MARK: samples and judgement

samples = []


def sampler():
    hz = os.sysconf("SC_CLK_TCK")
    last = None
    with open(os.path.join(args.out, "samples.csv"), "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["seconds", "rss_mib", "fds", "threads", "cpu_pct"])
        while time.monotonic() < deadline and not failures:
            if not alive():
                fail("parleyd (pid %d) died; the end of its log:\n%s" % (args.pid, tail(args.log)))
                return
            try:
                status = open("/proc/%d/status" % args.pid).read()
                rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024
                threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
                fds = len(os.listdir("/proc/%d/fd" % args.pid))
                fields = open("/proc/%d/stat" % args.pid).read().rsplit(")", 1)[1].split()
                ticks = int(fields[11]) + int(fields[12])
            except (OSError, AttributeError):
                time.sleep(SAMPLE_SECONDS)
                continue
            now = time.monotonic() - start
            cpu = 0.0 if last is None else 100.0 * (ticks - last[1]) / hz / max(1e-6, now - last[0])
            last = (now, ticks)
            row = [round(now, 1), round(rss, 2), fds, threads, round(cpu, 1)]
            samples.append(row)
            out.writerow(row)
            f.flush()
            time.sleep(SAMPLE_SECONDS)


def tail(path, lines=30):
    try:
        return "".join(open(path, errors="replace").readlines()[-lines:])
    except OSError:
        return ""


def slope(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return 0.0 if sxx == 0 else sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def judge():
    # Warm-up: model loading, first grammars, allocator pools filling.
    warm = max(60.0, 0.2 * (samples[-1][0] if samples else 0))
    kept = [s for s in samples if s[0] >= warm]
    if len(kept) < 6:
        fail("too few samples after the %d s warm-up to fit a slope (%d)" % (warm, len(kept)))
        return {}
    xs = [s[0] / 3600 for s in kept]
    span = xs[-1] - xs[0]
    report = {}
    for index, name in enumerate(["rss_mib", "fds", "threads", "cpu_pct"], start=1):
        ys = [s[index] for s in kept]
        per_hour = slope(xs, ys)
        limit, floor = LIMITS[name]
        report[name] = {"first": ys[0], "last": ys[-1], "min": min(ys), "max": max(ys),
                        "mean": round(sum(ys) / len(ys), 2), "slope_per_hour": round(per_hour, 3)}
        if per_hour > limit and per_hour * span > floor:
            fail("%s grows: %.2f per hour fitted over %.0f s after warm-up (limit %.1f per hour, rise %.2f)"
                 % (name, per_hour, span * 3600, limit, per_hour * span))
    return report


def daemon_counts():
    """What the daemon did, from its log: commands heard by voice, intents
    performed (by trigger), lines spoken, barge-ins, handler faults, errors."""
    found = {"heard": 0, "performed": {}, "spoke": 0, "interrupted": 0, "handler-restarts": 0, "errors": 0}
    with open(args.log, errors="replace") as f:
        for line in f:
            if " parley.listen: heard " in line:
                found["heard"] += 1
            elif " performed " in line and "intent=" in line:
                trigger = re.search(r"trigger=(\S+)", line)
                key = trigger.group(1) if trigger else "?"
                found["performed"][key] = found["performed"].get(key, 0) + 1
            elif " spoke text=" in line:
                found["spoke"] += 1
            elif " interrupted " in line:
                found["interrupted"] += 1
            if "restart" in line and "parley.apps" in line:
                found["handler-restarts"] += 1
            if line.startswith(("ERROR", "CRITICAL")):
                found["errors"] += 1
    return found


def svg(path):
    """Memory and CPU over time, as an SVG with no plotting library."""
    if len(samples) < 2:
        return
    w, h, pad = 900, 300, 50
    t_max = samples[-1][0] or 1
    def line(index, top, color):
        pts = " ".join("%.1f,%.1f" % (pad + (w - 2 * pad) * s[0] / t_max, h - pad - (h - 2 * pad) * s[index] / top)
                       for s in samples)
        return '<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>' % (color, pts)
    rss_top = max(s[1] for s in samples) * 1.2
    cpu_top = max(100.0, max(s[4] for s in samples) * 1.1)
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (w, h),
             '<rect width="100%" height="100%" fill="white"/>',
             '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (pad, h - pad, w - pad, h - pad),
             '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (pad, pad, pad, h - pad),
             line(1, rss_top, "#1f77b4"), line(4, cpu_top, "#d62728"),
             '<text x="%d" y="%d">0</text><text x="%d" y="%d">%.0f min</text>' % (pad, h - pad + 15, w - pad - 30, h - pad + 15, t_max / 60),
             '<text x="%d" y="20" fill="#1f77b4">resident memory (MiB, top of axis %.0f)</text>' % (pad, rss_top),
             '<text x="%d" y="36" fill="#d62728">CPU (%% of one core, top of axis %.0f)</text>' % (pad, cpu_top),
             '</svg>']
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    global deadline
    good = calibrate()
    # MINUTES of load count from here: calibration is not load.
    deadline = time.monotonic() + args.minutes * 60
    threading.Thread(target=sampler, daemon=True).start()
    if len(good) < 2:
        fail("only %d of the first %d recorded commands performed at calibration; the audio path does not work"
             % (len(good), CALIBRATION))
    threads = [threading.Thread(target=audio_load, daemon=True), threading.Thread(target=presses, daemon=True),
               threading.Thread(target=churn, daemon=True)]
    threads += [threading.Thread(target=sayer, args=(n,), daemon=True) for n in range(SAYERS)]
    threads.append(threading.Thread(target=bursts, daemon=True))
    if good:
        threads.append(threading.Thread(target=checks, args=(good,), daemon=True))
    for t in threads:
        t.start()
    while running():
        time.sleep(1)
    gate.open()
    for t in threads:
        t.join(timeout=60)
    report = judge() if not any("died" in f for f in failures) else {}
    svg(os.path.join(args.out, "soak.svg"))
    summary = {"minutes": round((time.monotonic() - start) / 60, 1), "samples": len(samples),
               "calibrated": "%d of %d" % (len(good), min(CALIBRATION, len(with_hey))),
               "counts": dict(sorted(counts.items())), "daemon": daemon_counts(), "resources": report,
               "failures": failures}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))
    sys.exit(1 if failures else 0)


main()
