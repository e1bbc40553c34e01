#!/usr/bin/env python3
"""Tests of the Home Assistant handler, over its real JSON-RPC pipe.

    python3 examples/apps/home-assistant/test_handler.py          # against the replay server
    python3 examples/apps/home-assistant/test_handler.py --live   # against HOME_ASSISTANT_CONFIG's Home Assistant

The replay server (Tests/HomeAssistant/replay_server.py) answers with what a
real Home Assistant answered (Tests/Fixtures/home-assistant/exchanges.json,
captured by scripts/eval-home-assistant.sh) and records the requests it gets.
--live is run by scripts/eval-home-assistant.sh against the Home Assistant it
starts (its demo home: scripts/lib/home-assistant/configuration.yaml).
"""
import json
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
REPLAY = os.path.join(ROOT, "Tests", "HomeAssistant", "replay_server.py")
TOKEN = "replay-token-0123456789"


class Handler:
    """The handler as Parley runs it: JSON lines in, JSON lines out."""

    def __init__(self, config_path):
        env = dict(os.environ, HOME_ASSISTANT_CONFIG=config_path)
        self.process = subprocess.Popen([sys.executable, os.path.join(HERE, "handler.py")], cwd=HERE, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = queue.Queue()
        self.notifications = queue.Queue()
        self.stderr = []
        threading.Thread(target=self.read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True).start()
        self.next_id = 1

    def read(self):
        for line in self.process.stdout:
            message = json.loads(line)
            (self.lines if "id" in message else self.notifications).put(message)

    def call(self, method, params, wait=20):
        request_id = self.next_id
        self.next_id += 1
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n")
        self.process.stdin.flush()
        reply = self.lines.get(timeout=wait)
        assert reply["id"] == request_id, reply
        return reply

    def wait_for_names(self, wait=60):
        """The options-changed notification: the names were fetched."""
        return self.notifications.get(timeout=wait)

    def close(self):
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "shutdown"}) + "\n")
        self.process.stdin.close()
        self.process.wait(timeout=10)
        self.process.stdout.close()
        self.process.stderr.close()
        return "".join(self.stderr)


def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ReplayTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.requests = os.path.join(self.dir.name, "requests.jsonl")
        self.server = None
        self.handler = None

    def tearDown(self):
        if self.handler:
            log = self.handler.close()
            self.assertNotIn(TOKEN, log, "the token must never be logged")
        if self.server:
            self.server.terminate()
            self.server.wait()
            self.server.stdout.close()
        self.dir.cleanup()

    def start_server(self, mode="ok", slow=3):
        self.server = subprocess.Popen([sys.executable, REPLAY, "--token", TOKEN, "--requests", self.requests,
                                        "--mode", mode, "--slow", str(slow)], stdout=subprocess.PIPE, text=True)
        self.port = int(self.server.stdout.readline().split()[1])
        return "http://127.0.0.1:%d" % self.port

    def set_mode(self, mode):
        request = urllib.request.Request("http://127.0.0.1:%d/__replay/mode" % self.port,
                                         data=json.dumps({"mode": mode}).encode(), method="POST")
        urllib.request.urlopen(request, timeout=10).read()

    def start_handler(self, url, **settings):
        path = os.path.join(self.dir.name, "home-assistant.json")
        with open(path, "w") as file:
            json.dump(dict({"url": url, "token": TOKEN}, **settings), file)
        self.handler = Handler(path)
        return self.handler

    def recorded(self):
        with open(self.requests) as file:
            return [json.loads(line) for line in file]

    def test_names_are_fetched_and_offered_as_options(self):
        handler = self.start_handler(self.start_server())
        self.assertEqual(handler.wait_for_names(), {"jsonrpc": "2.0", "method": "options-changed"})
        targets = handler.call("options", {"intent": "TurnOn", "parameter": "target"})["result"]["options"]
        self.assertIn({"value": "light.kitchen_light", "display": "kitchen light"}, targets)
        self.assertIn({"value": "switch.coffee_machine", "display": "coffee machine"}, targets)
        areas = handler.call("options", {"intent": "AreaOn", "parameter": "area"})["result"]["options"]
        self.assertIn({"value": "living_room", "display": "living room"}, areas)
        self.assertIn({"value": "kitchen", "display": "kitchen"}, areas)
        self.assertFalse(any(o["value"].startswith("input_boolean.") for o in targets), targets)
        locks = handler.call("options", {"intent": "IsLocked", "parameter": "lock"})["result"]["options"]
        self.assertEqual(sorted(o["display"] for o in locks), ["back door", "front door"])
        self.assertEqual([r["path"] for r in self.recorded()], ["/api/states", "/api/template"])

    def test_turn_on_makes_the_service_call(self):
        handler = self.start_handler(self.start_server())
        handler.wait_for_names()
        reply = handler.call("perform", {"intent": "TurnOn", "parameters": {"target": "light.kitchen_light"}})
        self.assertEqual(reply["result"]["dialog"], "Done.")
        self.assertEqual(reply["result"]["detail"], "The kitchen light is on.")
        last = self.recorded()[-1]
        self.assertEqual((last["method"], last["path"], last["body"], last["authorized"]),
                         ("POST", "/api/services/light/turn_on", {"entity_id": "light.kitchen_light"}, True))
        reply = handler.call("perform", {"intent": "AreaOn", "parameters": {"area": "living_room"}})
        self.assertEqual(reply["result"]["detail"], "The lights in the living room are on.")
        self.assertEqual(self.recorded()[-1]["body"], {"area_id": "living_room"})

    def test_a_lock_is_asked_about_and_locked(self):
        handler = self.start_handler(self.start_server())
        handler.wait_for_names()
        reply = handler.call("perform", {"intent": "IsLocked", "parameters": {"lock": "lock.back_door"}})
        self.assertEqual(reply["result"]["dialog"], "The back door is locked.")
        reply = handler.call("perform", {"intent": "Lock", "parameters": {"lock": "lock.front_door"}})
        self.assertEqual(reply["result"]["detail"], "The front door is locked.")
        self.assertEqual(self.recorded()[-1]["path"], "/api/services/lock/lock")

    def test_unlocking_says_the_door_by_name(self):
        handler = self.start_handler(self.start_server())
        handler.wait_for_names()
        reply = handler.call("confirmation", {"intent": "Unlock", "parameters": {"lock": "lock.front_door"}})
        self.assertEqual(reply["result"], {"dialog": "Unlock the front door."})

    def test_a_missing_token_is_named_with_the_file(self):
        path = os.path.join(self.dir.name, "home-assistant.json")
        with open(path, "w") as file:
            json.dump({"url": "http://127.0.0.1:1"}, file)
        self.handler = Handler(path)
        reply = self.handler.call("perform", {"intent": "TurnOn", "parameters": {"target": "light.kitchen_light"}})
        self.assertEqual(reply["error"]["message"], "Home Assistant is not set up: %s has no \"token\" key "
                         "(a long-lived access token from your Home Assistant profile)." % path)
        self.assertEqual(self.handler.call("options", {"intent": "TurnOn", "parameter": "target"})["result"], {"options": []})

    def fault(self, mode, sentence, **settings):
        handler = self.start_handler(self.start_server(), **settings)
        handler.wait_for_names()
        self.set_mode(mode)
        reply = handler.call("perform", {"intent": "TurnOn", "parameters": {"target": "light.kitchen_light"}})
        self.assertEqual(reply["error"], {"code": 1, "message": sentence})

    def test_a_revoked_token_is_said(self):
        self.fault("unauthorized", "Home Assistant refused my token; make a new long-lived token.")

    def test_garbage_is_said(self):
        self.fault("garbage", "Home Assistant gave an answer I could not understand.")

    def test_a_slow_home_assistant_is_said(self):
        self.fault("slow", "Home Assistant did not answer in time.", timeout=0.5)

    def test_an_unreachable_home_assistant_is_said(self):
        handler = self.start_handler("http://127.0.0.1:%d" % closed_port())
        reply = handler.call("perform", {"intent": "IsLocked", "parameters": {"lock": "lock.back_door"}})
        self.assertEqual(reply["error"]["message"], "I cannot reach Home Assistant.")

    def test_names_are_fetched_again_with_back_off_until_they_come(self):
        handler = self.start_handler(self.start_server(mode="unauthorized"))
        self.assertEqual(handler.call("options", {"intent": "TurnOn", "parameter": "target"})["result"], {"options": []})
        # The first try has failed once the handler says when it tries again.
        for _ in range(600):
            if "trying again in 2 s" in "".join(handler.stderr):
                break
            time.sleep(0.05)
        self.set_mode("ok")
        handler.wait_for_names()
        self.assertTrue(handler.call("options", {"intent": "TurnOn", "parameter": "target"})["result"]["options"])
        tries = [r["path"] for r in self.recorded() if r["path"] == "/api/states"]
        self.assertGreaterEqual(len(tries), 2, tries)
        self.assertIn("cannot fetch names (GET /api/states: 401); trying again in 2 s", "".join(handler.stderr))


class LiveTests(unittest.TestCase):
    """Against the real Home Assistant of scripts/eval-home-assistant.sh."""

    def test_the_demo_home(self):
        with open(os.environ["HOME_ASSISTANT_CONFIG"]) as file:
            config = json.load(file)
        handler = Handler(os.environ["HOME_ASSISTANT_CONFIG"])
        try:
            handler.wait_for_names()
            targets = handler.call("options", {"intent": "TurnOn", "parameter": "target"})["result"]["options"]
            self.assertIn({"value": "light.kitchen_light", "display": "kitchen light"}, targets)
            reply = handler.call("perform", {"intent": "TurnOn", "parameters": {"target": "light.kitchen_light"}})
            self.assertEqual(reply["result"]["dialog"], "Done.", reply)

            def state(entity):
                request = urllib.request.Request(config["url"] + "/api/states/" + entity,
                                                 headers={"Authorization": "Bearer " + config["token"]})
                return json.load(urllib.request.urlopen(request, timeout=10))["state"]

            self.assertEqual(state("light.kitchen_light"), "on")
            reply = handler.call("perform", {"intent": "IsLocked", "parameters": {"lock": "lock.back_door"}})
            self.assertEqual(reply["result"]["dialog"], "The back door is locked.", reply)
            handler.call("perform", {"intent": "Unlock", "parameters": {"lock": "lock.back_door"}})
            self.assertEqual(state("lock.back_door"), "unlocked")
            reply = handler.call("perform", {"intent": "AreaOff", "parameters": {"area": "kitchen"}})
            self.assertEqual(reply["result"]["detail"], "The lights in the kitchen are off.", reply)
            self.assertEqual(state("light.kitchen_light"), "off")
        finally:
            log = handler.close()
            self.assertNotIn(config["token"], log)


if __name__ == "__main__":
    live = "--live" in sys.argv
    if live:
        sys.argv.remove("--live")
    unittest.main(defaultTest="LiveTests" if live else "ReplayTests", verbosity=2)
