#!/usr/bin/env python3
"""A stand-in Home Assistant for the tests: replays the answers captured
from a real Home Assistant (Tests/Fixtures/home-assistant/exchanges.json,
made by scripts/eval-home-assistant.sh) and records every request it gets.

Usage: replay_server.py --token TOKEN --requests FILE [--fixtures FILE] [--mode MODE]

Prints "listening PORT" once it listens on 127.0.0.1 (a free port). A
request is answered with the captured exchange of the same method, path and
JSON body (for GET, method and path); one without the token gets the
captured 401; anything else a 404 like Home Assistant's. Each request is
appended to FILE as a JSON line {"method", "path", "body"} (never the
token). The mode makes the faults the app must survive:
  ok            the captured answers
  unauthorized  the captured 401 for everything (a revoked token)
  garbage       200 with a body that is not JSON
  slow          answers after --slow seconds (default 10)
Tests change it with POST /__replay/mode {"mode": "..."} (no token needed).
"""
import argparse
import http.server
import json
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "Fixtures", "home-assistant", "exchanges.json")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--token", required=True)
    parser.add_argument("--requests", required=True)
    parser.add_argument("--fixtures", default=FIXTURES)
    parser.add_argument("--mode", default="ok", choices=["ok", "unauthorized", "garbage", "slow"])
    parser.add_argument("--slow", type=float, default=10)
    parser.add_argument("--port", type=int, default=0)
    options = parser.parse_args()
    with open(options.fixtures) as file:
        capture = json.load(file)
    exchanges = capture["exchanges"]
    unauthorized = next(e for e in exchanges if e["status"] == 401)
    state = {"mode": options.mode}
    log_lock = threading.Lock()

    def key(method, path, body):
        return (method, path, json.dumps(body, sort_keys=True) if method == "POST" else None)

    answers = {key(e["method"], e["path"], e.get("request")): e for e in exchanges if e["status"] != 401}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, status, content_type, body):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def handle_any(self, method):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path == "/__replay/mode":
                state["mode"] = json.loads(raw)["mode"]
                return self.answer(200, "application/json", json.dumps({"mode": state["mode"]}))
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            with log_lock, open(options.requests, "a") as file:
                file.write(json.dumps({"method": method, "path": self.path, "body": body,
                                       "authorized": self.headers.get("Authorization") == "Bearer " + options.token}) + "\n")
            mode = state["mode"]
            if mode == "slow":
                time.sleep(options.slow)
            if mode == "unauthorized" or self.headers.get("Authorization") != "Bearer " + options.token:
                return self.answer(401, unauthorized["content_type"], unauthorized["body"])
            if mode == "garbage":
                return self.answer(200, "application/json", "<html><body>502 Bad Gateway</body></html>")
            found = answers.get(key(method, self.path, body))
            if not found:
                return self.answer(404, "application/json", json.dumps({"message": "Entity not found."}))
            self.answer(found["status"], found["content_type"], found["body"])

        def do_GET(self):
            self.handle_any("GET")

        def do_POST(self):
            self.handle_any("POST")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
    server.daemon_threads = True
    print("listening %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
