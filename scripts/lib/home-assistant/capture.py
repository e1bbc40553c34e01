#!/usr/bin/env python3
"""Captures a real Home Assistant's answers to the requests the Home
Assistant app makes, for the replay server the tests use
(Tests/HomeAssistant/replay_server.py). Run by scripts/eval-home-assistant.sh
against the Home Assistant it starts; the answers are stored as they came
(status, content type, body), never edited.

Usage: capture.py URL TOKEN_FILE OUT.json
"""
import datetime
import json
import os
import sys
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples", "apps", "home-assistant"))
import handler  # noqa: E402  (the app's own template)

url, token_file, out = sys.argv[1], sys.argv[2], sys.argv[3]
with open(token_file) as file:
    token = file.read().strip()


def exchange(method, path, body=None, bearer=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method, headers={
        "Authorization": "Bearer " + (bearer or token), "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            status, content_type, raw = reply.status, reply.headers.get("Content-Type"), reply.read()
    except urllib.error.HTTPError as error:
        status, content_type, raw = error.code, error.headers.get("Content-Type"), error.read()
    print("%s %s -> %d" % (method, path, status), file=sys.stderr)
    return {"method": method, "path": path, "request": body, "status": status,
            "content_type": content_type, "body": raw.decode()}


config = json.loads(exchange("GET", "/api/config")["body"])
exchanges = [
    exchange("GET", "/api/states"),
    exchange("POST", "/api/template", {"template": handler.AREAS_TEMPLATE}),
    exchange("POST", "/api/services/light/turn_on", {"entity_id": "light.kitchen_light"}),
    exchange("POST", "/api/services/light/turn_off", {"entity_id": "light.kitchen_light"}),
    exchange("POST", "/api/services/switch/turn_on", {"entity_id": "switch.coffee_machine"}),
    exchange("POST", "/api/services/light/turn_on", {"area_id": "living_room"}),
    exchange("GET", "/api/states/lock.back_door"),
    exchange("POST", "/api/services/lock/unlock", {"entity_id": "lock.front_door"}),
    exchange("POST", "/api/services/lock/lock", {"entity_id": "lock.front_door"}),
    exchange("GET", "/api/states/lock.front_door"),
    exchange("GET", "/api/states", bearer="not-a-valid-token"),
]
# The token never goes into the fixtures.
assert all(token not in json.dumps(e) for e in exchanges)
with open(out, "w") as file:
    json.dump({"captured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "home_assistant_version": config.get("version"),
               "how": "scripts/eval-home-assistant.sh (scripts/lib/home-assistant/capture.py)",
               "exchanges": exchanges}, file, indent=1)
    file.write("\n")
