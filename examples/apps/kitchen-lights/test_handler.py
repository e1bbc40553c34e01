#!/usr/bin/env python3
"""Tests of the Kitchen Lights handler through its real protocol: the handler
runs as Parley runs it, with a stand-in gpioset on the PATH that records how
it was called and holds the line until it is signalled, as the real one does."""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))

FAKE_GPIOSET = """#!/bin/sh
echo "$@" >> "$GPIOSET_LOG"
trap 'exit 0' TERM
while :; do sleep 1; done
"""


class Handler:
    def __init__(self, config, extra_env=None):
        self.dir = tempfile.mkdtemp()
        with open(os.path.join(self.dir, "lights.json"), "w") as file:
            json.dump(config, file)
        bin_dir = os.path.join(self.dir, "bin")
        os.mkdir(bin_dir)
        with open(os.path.join(bin_dir, "gpioset"), "w") as file:
            file.write(FAKE_GPIOSET)
        os.chmod(os.path.join(bin_dir, "gpioset"), 0o755)
        self.log = os.path.join(self.dir, "gpioset.log")
        env = dict(os.environ, KITCHEN_LIGHTS_CONFIG=os.path.join(self.dir, "lights.json"), GPIOSET_LOG=self.log,
                   PATH=bin_dir + os.pathsep + os.environ["PATH"])
        env.pop("KITCHEN_LIGHTS_DRY_RUN", None)
        env.update(extra_env or {})
        self.process = subprocess.Popen([sys.executable, os.path.join(HERE, "handler.py")], cwd=HERE, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.next_id = 1

    def call(self, method, params):
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        reply = json.loads(self.process.stdout.readline())
        self.assert_id(reply, request["id"])
        return reply

    @staticmethod
    def assert_id(reply, expected):
        if reply.get("id") != expected or reply.get("jsonrpc") != "2.0":
            raise AssertionError("reply %r does not answer request %d" % (reply, expected))

    def calls(self):
        # The stand-in appends a line per start; wait for the started ones to have written it.
        for _ in range(50):
            if os.path.exists(self.log):
                with open(self.log) as file:
                    return [line.strip() for line in file]
            time.sleep(0.05)
        return []

    def shutdown(self):
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "shutdown"}) + "\n")
        self.process.stdin.flush()
        code = self.process.wait(timeout=10)
        self.process.stdout.close()
        self.process.stderr.close()
        self.process.stdin.close()
        return code


WIRED = {"chip": "gpiochip0", "active-low": True, "dry-run": False, "rooms": {"kitchen": 17, "hall": 27}}


class KitchenLightsTests(unittest.TestCase):
    def test_switching_runs_gpioset_holding_the_line(self):
        handler = Handler(WIRED)
        reply = handler.call("perform", {"intent": "SetLight", "parameters": {"room": "kitchen", "state": "on"}})
        self.assertEqual(reply["result"]["detail"], "The kitchen light is on.")
        self.assertEqual(reply["result"]["output"], {"on": True})
        self.assertEqual(handler.call("perform", {"intent": "GetLight", "parameters": {"room": "kitchen"}})["result"]["dialog"],
                         "The kitchen light is on.")
        handler.call("perform", {"intent": "SetLight", "parameters": {"room": "kitchen", "state": "off"}})
        self.assertEqual(handler.calls(), ["--mode=signal --active-low gpiochip0 17=1", "--mode=signal --active-low gpiochip0 17=0"])
        self.assertEqual(handler.shutdown(), 0)

    def test_already_in_that_state_does_not_touch_the_line(self):
        handler = Handler(WIRED)
        reply = handler.call("perform", {"intent": "SetLight", "parameters": {"room": "hall", "state": "off"}})
        self.assertEqual(reply["result"]["dialog"], "The hall light is already off.")
        self.assertEqual(handler.calls(), [])
        handler.shutdown()

    def test_a_room_without_a_line_is_unsupported_when_resolved_and_an_error_when_performed(self):
        handler = Handler(WIRED)
        reply = handler.call("resolve", {"intent": "SetLight", "parameter": "room", "proposed": "living-room", "parameters": {}})
        self.assertEqual(reply["result"], {"resolution": "unsupported", "reason": "The living room light is not wired up."})
        reply = handler.call("resolve", {"intent": "SetLight", "parameter": "room", "proposed": "kitchen", "parameters": {}})
        self.assertEqual(reply["result"], {"resolution": "success", "value": "kitchen"})
        reply = handler.call("perform", {"intent": "SetLight", "parameters": {"room": "living-room", "state": "on"}})
        self.assertEqual(reply["error"]["message"], "The living room light is not wired up.")
        handler.shutdown()

    def test_steps_it_leaves_to_parley_answer_method_not_found(self):
        handler = Handler(WIRED)
        for method, params in [("options", {"intent": "SetLight", "parameter": "room"}),
                               ("confirmation", {"intent": "SetLight", "parameters": {}}),
                               ("resolve", {"intent": "SetLight", "parameter": "state", "proposed": None, "parameters": {}})]:
            self.assertEqual(handler.call(method, params)["error"]["code"], -32601, method)
        handler.shutdown()

    def test_all_off_switches_only_lights_that_are_on(self):
        handler = Handler(WIRED)
        handler.call("perform", {"intent": "SetLight", "parameters": {"room": "kitchen", "state": "on"}})
        reply = handler.call("perform", {"intent": "AllOff", "parameters": {}})
        self.assertEqual(reply["result"]["detail"], "1 light is off.")
        self.assertEqual(handler.call("perform", {"intent": "AllOff", "parameters": {}})["result"]["dialog"], "Every light is already off.")
        handler.shutdown()

    def test_dry_run_never_runs_gpioset(self):
        handler = Handler(WIRED, {"KITCHEN_LIGHTS_DRY_RUN": "1"})
        reply = handler.call("perform", {"intent": "SetLight", "parameters": {"room": "kitchen", "state": "on"}})
        self.assertEqual(reply["result"]["dialog"], "Done.")
        self.assertFalse(os.path.exists(handler.log))
        handler.shutdown()

    def test_a_failing_gpioset_is_the_apps_spoken_error(self):
        handler = Handler(dict(WIRED, chip="no-such-chip"))
        with open(os.path.join(handler.dir, "bin", "gpioset"), "w") as file:
            file.write("#!/bin/sh\necho 'error setting the GPIO line values' >&2\nexit 1\n")
        reply = handler.call("perform", {"intent": "SetLight", "parameters": {"room": "kitchen", "state": "on"}})
        self.assertEqual(reply["error"]["message"], "I could not switch the kitchen light.")
        handler.shutdown()


if __name__ == "__main__":
    unittest.main()
