#!/usr/bin/env python3
"""Kitchen Lights: a Parley handler switching relays on GPIO lines.

Speaks JSON-RPC 2.0, one object per line, on standard input and output
(docs/external-apps.md). Each room's relay is held by a `gpioset
--mode=signal` process (libgpiod's tools), so the line keeps its value while
the handler runs; switching a room stops that process and starts another.

lights.json (beside this file, or the file named by KITCHEN_LIGHTS_CONFIG):
  chip        the GPIO chip ("gpiochip0")
  rooms       room value -> line offset; a room missing here is not wired up
  active-low  true for the common relay boards that switch on a low level
  dry-run     true: no GPIO, the state is only remembered and logged
"""
import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DISPLAY = {"kitchen": "kitchen", "hall": "hall", "living-room": "living room"}


def log(text):
    # Standard error goes to Parley's log, prefixed with the app.
    print(text, file=sys.stderr, flush=True)


class Lights:
    def __init__(self, config):
        self.chip = config.get("chip", "gpiochip0")
        self.rooms = {room: int(line) for room, line in config.get("rooms", {}).items()}
        self.active_low = bool(config.get("active-low", False))
        self.dry_run = bool(config.get("dry-run", False)) or os.environ.get("KITCHEN_LIGHTS_DRY_RUN") == "1"
        self.state = {room: False for room in self.rooms}
        self.holders = {}

    def set(self, room, on):
        if not self.dry_run:
            self.release(room)
            arguments = ["gpioset", "--mode=signal"]
            if self.active_low:
                arguments.append("--active-low")
            arguments += [self.chip, "%d=%d" % (self.rooms[room], 1 if on else 0)]
            holder = subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                # gpioset exits at once only when it cannot set the line.
                holder.wait(timeout=0.2)
                raise RuntimeError(holder.stderr.read().decode(errors="replace").strip() or "gpioset failed")
            except subprocess.TimeoutExpired:
                self.holders[room] = holder
        self.state[room] = on
        log("%s light %s%s" % (room, "on" if on else "off", " (dry run)" if self.dry_run else ""))

    def release(self, room):
        holder = self.holders.pop(room, None)
        if holder:
            holder.send_signal(signal.SIGTERM)
            holder.wait()

    def close(self):
        for room in list(self.holders):
            self.release(room)


class AppError(Exception):
    pass


def handle(lights, method, params):
    intent = params.get("intent")
    values = params.get("parameters", {})
    if method == "resolve":
        if params.get("parameter") == "room" and params.get("proposed") is not None:
            room = params["proposed"]
            if room not in lights.rooms:
                return {"resolution": "unsupported", "reason": "The %s light is not wired up." % DISPLAY.get(room, room)}
            return {"resolution": "success", "value": room}
        raise NotImplementedError
    if method != "perform":
        raise NotImplementedError
    if intent == "SetLight":
        room, on = values["room"], values["state"] == "on"
        if room not in lights.rooms:
            raise AppError("The %s light is not wired up." % DISPLAY.get(room, room))
        if lights.state.get(room) == on:
            return {"dialog": "The %s light is already %s." % (DISPLAY[room], values["state"])}
        try:
            lights.set(room, on)
        except (OSError, RuntimeError) as error:
            log("cannot switch %s: %s" % (room, error))
            raise AppError("I could not switch the %s light." % DISPLAY[room])
        return {"dialog": "Done.", "detail": "The %s light is %s." % (DISPLAY[room], values["state"]),
                "output": {"on": on}}
    if intent == "GetLight":
        room = values["room"]
        if room not in lights.rooms:
            raise AppError("The %s light is not wired up." % DISPLAY.get(room, room))
        state = "on" if lights.state[room] else "off"
        return {"dialog": "The %s light is %s." % (DISPLAY[room], state), "output": {"on": lights.state[room]}}
    if intent == "AllOff":
        switched = [room for room, on in lights.state.items() if on]
        for room in switched:
            lights.set(room, False)
        if not switched:
            return {"dialog": "Every light is already off."}
        return {"dialog": "Done.", "detail": "%d %s off." % (len(switched), "light is" if len(switched) == 1 else "lights are")}
    raise NotImplementedError


def main():
    path = os.environ.get("KITCHEN_LIGHTS_CONFIG", os.path.join(HERE, "lights.json"))
    with open(path) as file:
        lights = Lights(json.load(file))
    log("ready: %d rooms wired on %s%s" % (len(lights.rooms), lights.chip, ", dry run" if lights.dry_run else ""))
    try:
        for line in sys.stdin:
            try:
                message = json.loads(line)
            except ValueError:
                log("ignored a line that is not JSON")
                continue
            method, request_id = message.get("method"), message.get("id")
            if method == "shutdown":
                break
            if request_id is None:
                continue
            try:
                reply = {"jsonrpc": "2.0", "id": request_id, "result": handle(lights, method, message.get("params") or {})}
            except NotImplementedError:
                reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "not implemented"}}
            except AppError as error:
                reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": 1, "message": str(error)}}
            except (KeyError, TypeError) as error:
                reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": "Kitchen Lights did not get the %s." % error}}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    finally:
        lights.close()


if __name__ == "__main__":
    main()
