#!/usr/bin/env python3
"""Reads and writes a GRUB environment block (grubenv) as grub-editenv does,
on the host, which need not have GRUB: the A/B image's slot choice and its
boot counter live in one (image/README.md, "Two slots").

  grubenv.py FILE list            KEY=VALUE lines
  grubenv.py FILE set KEY=VALUE...

The format: "# GRUB Environment Block\\n", KEY=VALUE lines, '#' padding to
exactly 1024 bytes. GRUB's save_env rewrites the block in place, so its size
must never change."""
import sys

HEADER = b"# GRUB Environment Block\n"
SIZE = 1024


def read(path):
    data = open(path, "rb").read()
    if len(data) != SIZE or not data.startswith(HEADER):
        sys.exit(f"grubenv.py: {path}: not a GRUB environment block (expected {SIZE} bytes starting with '# GRUB Environment Block')")
    env = {}
    for line in data[len(HEADER):].split(b"\n"):
        if line and not line.startswith(b"#") and b"=" in line:
            key, value = line.decode().split("=", 1)
            env[key] = value
    return env


def write(path, env):
    body = HEADER + b"".join(f"{k}={v}\n".encode() for k, v in env.items())
    if len(body) > SIZE:
        sys.exit(f"grubenv.py: {path}: the variables need {len(body)} bytes, more than the block's {SIZE}")
    open(path, "wb").write(body + b"#" * (SIZE - len(body)))


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("list", "set"):
        sys.exit("usage: grubenv.py FILE list | grubenv.py FILE set KEY=VALUE...")
    path, command = sys.argv[1], sys.argv[2]
    env = read(path)
    if command == "list":
        for k, v in env.items():
            print(f"{k}={v}")
        return
    for item in sys.argv[3:]:
        if "=" not in item:
            sys.exit(f"grubenv.py: '{item}': expected KEY=VALUE")
        k, v = item.split("=", 1)
        env[k] = v
    write(path, env)


main()
