#!/usr/bin/env python3
"""Reads and writes a U-Boot environment file as fw_printenv/fw_setenv and
U-Boot's `env import -c`/`env export -c` do, on the host, which need not
have them: the Pi image's slot choice and its boot counter live in one
(/boot/firmware/parley.env; image/README.md, "Two slots").

  ubootenv.py FILE list                     KEY=VALUE lines
  ubootenv.py FILE set KEY=VALUE...         (KEY= removes KEY)
  ubootenv.py FILE create SIZE KEY=VALUE... a new file of SIZE bytes (0x4000)

The format (a single copy, no redundancy flag): the CRC-32 of the rest,
little-endian, then KEY=VALUE strings each ended by a NUL, a second NUL
after the last, and padding to the file's size. The size is fixed by
fw_env.config and the boot script, so a rewrite keeps it."""
import sys
import zlib


def read(path):
    data = open(path, "rb").read()
    if len(data) < 8:
        sys.exit(f"ubootenv.py: {path}: {len(data)} bytes, too short for a U-Boot environment")
    crc = int.from_bytes(data[:4], "little")
    if zlib.crc32(data[4:]) != crc:
        sys.exit(f"ubootenv.py: {path}: CRC mismatch (stored {crc:#010x}, computed {zlib.crc32(data[4:]):#010x}): damaged or not a U-Boot environment")
    env = {}
    for item in data[4:].split(b"\0"):
        if not item:
            break
        key, _, value = item.decode().partition("=")
        env[key] = value
    return env, len(data)


def write(path, env, size):
    body = b"".join(f"{k}={v}".encode() + b"\0" for k, v in env.items()) + b"\0"
    if len(body) > size - 4:
        sys.exit(f"ubootenv.py: {path}: the variables need {len(body)} bytes, more than the file's {size - 4}")
    body += b"\0" * (size - 4 - len(body))
    open(path, "wb").write(zlib.crc32(body).to_bytes(4, "little") + body)


def assignments(items):
    out = {}
    for item in items:
        if "=" not in item:
            sys.exit(f"ubootenv.py: '{item}': expected KEY=VALUE")
        k, v = item.split("=", 1)
        out[k] = v
    return out


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("list", "set", "create"):
        sys.exit("usage: ubootenv.py FILE list | FILE set KEY=VALUE... | FILE create SIZE KEY=VALUE...")
    path, command = sys.argv[1], sys.argv[2]
    if command == "create":
        if len(sys.argv) < 4:
            sys.exit("ubootenv.py: create needs a size (e.g. 0x4000)")
        write(path, {k: v for k, v in assignments(sys.argv[4:]).items() if v}, int(sys.argv[3], 0))
        return
    env, size = read(path)
    if command == "list":
        for k, v in env.items():
            print(f"{k}={v}")
        return
    for k, v in assignments(sys.argv[3:]).items():
        if v:
            env[k] = v
        else:
            env.pop(k, None)
    write(path, env, size)


main()
