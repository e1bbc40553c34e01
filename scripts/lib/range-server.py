#!/usr/bin/env python3
"""Serves one folder over HTTP/1.1 with byte ranges (RFC 9110 single ranges),
as a release server does: RAUC streams a verity bundle by range requests, and
Python's http.server answers none. For image-test.sh's update.url check.

    python3 scripts/lib/range-server.py FOLDER PORT_FILE

Binds 127.0.0.1 on a free port (written to PORT_FILE) and serves until killed.
"""
import http.server
import os
import re
import sys


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send_head(self):
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404, "no such file")
            return None
        size = os.path.getsize(path)
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        start, end = 0, size - 1
        if match and (match.group(1) or match.group(2)):
            if match.group(1):
                start = int(match.group(1))
                end = min(int(match.group(2)), size - 1) if match.group(2) else size - 1
            else:  # the last N bytes
                start = max(0, size - int(match.group(2)))
            if start > end or start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        handle = open(path, "rb")
        handle.seek(start)
        self.remaining = end - start + 1
        return handle

    def copyfile(self, source, outputfile):
        while self.remaining > 0:
            chunk = source.read(min(65536, self.remaining))
            if not chunk:
                break
            outputfile.write(chunk)
            self.remaining -= len(chunk)

    def log_message(self, format, *args):
        sys.stderr.write("range-server: " + (format % args) + "\n")


def main():
    folder, port_file = sys.argv[1], sys.argv[2]
    os.chdir(folder)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RangeHandler)
    with open(port_file, "w") as out:
        out.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
