#!/usr/bin/env python3
"""Where a process's resident memory is: /proc/PID/smaps grouped by what
is mapped (scripts/bench-daemon.sh, idle cost).

Usage: smaps-breakdown.py PID [--top N]

Groups (RSS and PSS in KiB):
  heap            [heap] (the main malloc arena, brk)
  malloc arenas   anonymous mappings of the per-thread glibc arenas (64 MiB
                  reservations, read-write, of which only the touched part is resident)
  thread stacks   the anonymous mappings just above a thread's guard page
                  (a PROT_NONE page below a read-write mapping), and [stack]
  other anonymous anonymous read-write memory that is neither (mmap'ed
                  allocations above the mmap threshold, Swift runtime metadata)
  one line per mapped file: shared libraries and model files, by name
Mappings of the same file are summed; the --top largest groups are printed.
"""
import re
import sys


def mappings(pid):
    header = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$")
    current = None
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            m = header.match(line)
            if m:
                if current:
                    yield current
                start, end, perms, name = m.groups()
                current = {"start": int(start, 16), "end": int(end, 16), "perms": perms, "name": name.strip(),
                           "Rss": 0, "Pss": 0}
                continue
            key, _, value = line.partition(":")
            if key in ("Rss", "Pss") and current is not None:
                current[key] = int(value.split()[0])
    if current:
        yield current


def classify(maps):
    groups = {}

    def add(name, m):
        g = groups.setdefault(name, [0, 0])
        g[0] += m["Rss"]
        g[1] += m["Pss"]

    previous = None
    for m in maps:
        name = m["name"]
        size = m["end"] - m["start"]
        if name == "[heap]":
            add("heap ([heap], main arena)", m)
        elif name == "[stack]":
            add("thread stacks (incl. main [stack])", m)
        elif name.startswith("["):
            add(name, m)
        elif name:
            add(name, m)
        elif previous is not None and previous["name"] == "" and previous["perms"].startswith("---") \
                and previous["end"] == m["start"] and m["perms"].startswith("rw") and size <= 16 * 1024 * 1024 \
                and (previous["end"] - previous["start"]) <= 64 * 1024:
            # pthread stacks: a small PROT_NONE guard right below the stack.
            add("thread stacks (incl. main [stack])", m)
        elif m["perms"].startswith("rw") and (m["start"] % (64 * 1024 * 1024) == 0
                                             or (previous is not None and previous["name"] == ""
                                                 and previous["end"] == m["start"]
                                                 and previous["start"] % (64 * 1024 * 1024) == 0)):
            add("malloc arenas (per-thread, 64 MiB aligned)", m)
        else:
            add("other anonymous", m)
        previous = m
    return groups


def main():
    pid = sys.argv[1]
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 20
    groups = classify(list(mappings(pid)))
    total_rss = sum(g[0] for g in groups.values())
    total_pss = sum(g[1] for g in groups.values())
    print(f"  {'RSS KiB':>8} {'PSS KiB':>8}  mapping (total RSS {total_rss} KiB, PSS {total_pss} KiB)")
    ranked = sorted(groups.items(), key=lambda item: -item[1][0])
    for name, (rss, pss) in ranked[:top]:
        if rss == 0:
            break
        print(f"  {rss:>8} {pss:>8}  {name}")
    rest = ranked[top:]
    if rest:
        print(f"  {sum(g[0] for _, g in rest):>8} {sum(g[1] for _, g in rest):>8}  ({len(rest)} smaller mappings)")


if __name__ == "__main__":
    main()
