#!/usr/bin/env python3
"""Home Assistant: a Parley handler calling Home Assistant's REST API.

Speaks JSON-RPC 2.0, one object per line, on standard input and output
(docs/external-apps.md). Python 3's standard library only (urllib), so it
runs on the device image without pip.

Configuration: a JSON file, /etc/parley/home-assistant.json (or the file
named by HOME_ASSISTANT_CONFIG):
  url      Home Assistant's address, e.g. "http://homeassistant.local:8123"
  token    a long-lived access token (Home Assistant: your profile, Security,
           "Long-lived access tokens"); never logged
  timeout  seconds one request may take (default 4; perform's limit is 12)

The names of lights, switches, locks and areas are fetched from Home
Assistant (GET /api/states; the areas through the template API, POST
/api/template) in a thread of their own, again every `refresh` seconds
(default 600), and after a failure with back-off (2, 5, 10, 30, 60 s, then
every 60 s). Each time they change, the handler sends Parley the
`options-changed` notification and Parley asks `options` again and compiles
the names into its phrases. Until names are fetched the app has no phrases
to match; Parley's own shortcuts are not affected.
"""
import json
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.request

CONFIG = os.environ.get("HOME_ASSISTANT_CONFIG", "/etc/parley/home-assistant.json")
BACKOFF = [2, 5, 10, 30, 60]
SWITCHABLE = ("light", "switch", "fan")

# One template renders every area with its entities as JSON (Home Assistant's
# template functions areas(), area_name() and area_entities()).
AREAS_TEMPLATE = (
    "[{% for area in areas() %}{\"id\": {{ area | tojson }}, \"name\": {{ area_name(area) | tojson }}, "
    "\"entities\": {{ area_entities(area) | tojson }}}{{ \",\" if not loop.last }}{% endfor %}]"
)


def log(text):
    # Standard error goes to Parley's log, prefixed with the app.
    print(text, file=sys.stderr, flush=True)


class AppError(Exception):
    """A sentence Parley says as it is."""


class Problem(Exception):
    """Home Assistant could not be used: `sentence` is said, `detail` logged."""

    def __init__(self, sentence, detail):
        super().__init__(detail)
        self.sentence = sentence


def read_config(path):
    """The settings, or an AppError naming the file and the key."""
    try:
        with open(path) as file:
            config = json.load(file)
    except FileNotFoundError:
        raise AppError("Home Assistant is not set up: %s is missing." % path)
    except (OSError, ValueError) as error:
        raise AppError("Home Assistant is not set up: %s cannot be read (%s)." % (path, error.__class__.__name__))
    if not isinstance(config, dict):
        raise AppError("Home Assistant is not set up: %s must hold a JSON object." % path)
    for key, what in (("url", "Home Assistant's address, such as http://homeassistant.local:8123"),
                      ("token", "a long-lived access token from your Home Assistant profile")):
        value = config.get(key)
        if not isinstance(value, str) or not value.strip():
            raise AppError("Home Assistant is not set up: %s has no \"%s\" key (%s)." % (path, key, what))
    if not re.match(r"^https?://", config["url"]):
        raise AppError("Home Assistant is not set up: \"url\" in %s must start with http:// or https://." % path)
    timeout = config.get("timeout", 4)
    if not isinstance(timeout, (int, float)) or not 0.1 <= timeout <= 10:
        raise AppError("Home Assistant is not set up: \"timeout\" in %s must be seconds from 0.1 to 10." % path)
    refresh = config.get("refresh", 600)
    if not isinstance(refresh, (int, float)) or refresh < 5:
        raise AppError("Home Assistant is not set up: \"refresh\" in %s must be at least 5 seconds." % path)
    return {"url": config["url"].rstrip("/"), "token": config["token"].strip(), "timeout": float(timeout),
            "refresh": float(refresh)}


class HomeAssistant:
    """Home Assistant's REST API with the token; every failure is a Problem."""

    def __init__(self, config):
        self.url = config["url"]
        self.token = config["token"]
        self.timeout = config["timeout"]

    def request(self, method, path, body=None, text=False):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": "Bearer " + self.token, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                raw = reply.read(4 * 1024 * 1024)
        except urllib.error.HTTPError as error:
            if error.code == 401:
                raise Problem("Home Assistant refused my token; make a new long-lived token.", "%s %s: 401" % (method, path))
            if error.code == 404:
                raise Problem("Home Assistant does not know that one.", "%s %s: 404" % (method, path))
            raise Problem("Home Assistant answered with an error.", "%s %s: HTTP %d" % (method, path, error.code))
        except (TimeoutError, OSError) as error:
            # urllib wraps a timeout during connect in URLError (an OSError).
            reason = getattr(error, "reason", error)
            if isinstance(reason, TimeoutError) or "timed out" in str(reason):
                raise Problem("Home Assistant did not answer in time.", "%s %s: no answer within %g s" % (method, path, self.timeout))
            raise Problem("I cannot reach Home Assistant.", "%s %s: %s" % (method, path, reason))
        if text:
            return raw.decode("utf-8", errors="replace")
        try:
            return json.loads(raw)
        except ValueError:
            raise Problem("Home Assistant gave an answer I could not understand.", "%s %s: not JSON: %r" % (method, path, raw[:80]))

    def names(self):
        """Lights and switches (with areas) and locks, as Parley options."""
        states = self.request("GET", "/api/states")
        areas = self.request("POST", "/api/template", {"template": AREAS_TEMPLATE}, text=True)
        try:
            areas = json.loads(areas)
        except ValueError:
            raise Problem("Home Assistant gave an answer I could not understand.", "the areas template did not render JSON")
        if not isinstance(states, list) or not isinstance(areas, list):
            raise Problem("Home Assistant gave an answer I could not understand.", "states or areas are not lists")
        switchable, locks = [], []
        for state in states:
            entity = state.get("entity_id") if isinstance(state, dict) else None
            if not isinstance(entity, str) or "." not in entity:
                continue
            name = spoken(state.get("attributes", {}).get("friendly_name") or entity.split(".", 1)[1])
            if not name:
                continue
            option = {"value": entity, "display": name}
            domain = entity.split(".", 1)[0]
            if domain in SWITCHABLE:
                switchable.append(option)
            elif domain == "lock":
                locks.append(option)
        rooms = []
        for area in areas:
            if not isinstance(area, dict) or not any(str(e).startswith("light.") for e in area.get("entities", [])):
                continue
            name = spoken(area.get("name") or "")
            if name:
                # "turn on the lights in the kitchen": every light of the area.
                rooms.append({"value": str(area.get("id")), "display": name})
        return {"target": dedupe(switchable), "area": dedupe(rooms), "lock": dedupe(locks)}


def spoken(name):
    """A name as it is said: lower case, words only ("Kitchen Light #2" -> "kitchen light 2")."""
    return " ".join(re.sub(r"[^a-z0-9']+", " ", str(name).lower()).split())


def dedupe(options):
    seen, result = set(), []
    for option in options:
        if option["display"] not in seen:
            seen.add(option["display"])
            result.append(option)
    return result


class App:
    def __init__(self, write):
        self.write = write
        self.lock = threading.Lock()
        self.options = {"target": [], "area": [], "lock": []}
        self.problem = None
        try:
            self.config = read_config(CONFIG)
            self.hub = HomeAssistant(self.config)
            log("ready: Home Assistant at %s" % self.config["url"])
        except AppError as error:
            self.config, self.hub, self.problem = None, None, str(error)
            log(str(error))

    def fetch_names(self, stop):
        """Fetches the names now, again every `refresh` seconds, and after a failure with back-off."""
        failures = 0
        while self.hub and not stop.is_set():
            try:
                names = self.hub.names()
                failures = 0
                with self.lock:
                    changed = names != self.options
                    self.options = names
                if changed:
                    log("names fetched: %d to switch, %d areas with lights, %d locks"
                        % (len(names["target"]), len(names["area"]), len(names["lock"])))
                    self.write({"jsonrpc": "2.0", "method": "options-changed"})
                wait = self.config["refresh"]
            except Problem as problem:
                wait = BACKOFF[min(failures, len(BACKOFF) - 1)]
                failures += 1
                log("cannot fetch names (%s); trying again in %d s" % (problem, wait))
            stop.wait(wait)

    def display(self, parameter, value):
        with self.lock:
            for option in self.options.get(parameter, []):
                if option["value"] == value:
                    return option["display"]
        return value.split(".", 1)[-1].replace("_", " ")

    def handle(self, method, params):
        if method == "options":
            with self.lock:
                return {"options": list(self.options.get(params.get("parameter"), []))}
        if method == "confirmation":
            # The stakes in the names people say, not the entity ids of the summary.
            values = params.get("parameters", {})
            if params.get("intent") == "Unlock" and values.get("lock"):
                return {"dialog": "Unlock the %s." % self.display("lock", values["lock"])}
            raise NotImplementedError
        if method != "perform":
            raise NotImplementedError
        if self.problem:
            raise AppError(self.problem)
        intent, values = params.get("intent"), params.get("parameters", {})
        try:
            return self.perform(intent, values)
        except Problem as problem:
            log("%s: %s" % (intent, problem))
            raise AppError(problem.sentence)

    def perform(self, intent, values):
        if intent in ("TurnOn", "TurnOff"):
            target = values["target"]
            action = "turn_on" if intent == "TurnOn" else "turn_off"
            word = "on" if intent == "TurnOn" else "off"
            name = self.display("target", target)
            domain = target.split(".", 1)[0]
            self.hub.request("POST", "/api/services/%s/%s" % (domain, action), {"entity_id": target})
            return {"dialog": "Done.", "detail": "The %s is %s." % (name, word), "output": {"on": intent == "TurnOn"}}
        if intent in ("AreaOn", "AreaOff"):
            area = values["area"]
            word = "on" if intent == "AreaOn" else "off"
            self.hub.request("POST", "/api/services/light/turn_" + word, {"area_id": area})
            return {"dialog": "Done.", "detail": "The lights in the %s are %s." % (self.display("area", area), word)}
        if intent == "IsLocked":
            lock = values["lock"]
            state = self.hub.request("GET", "/api/states/" + lock)
            if not isinstance(state, dict) or not isinstance(state.get("state"), str):
                raise Problem("Home Assistant gave an answer I could not understand.", "a state without \"state\"")
            name = self.display("lock", lock)
            words = {"locked": "locked", "unlocked": "unlocked", "jammed": "jammed", "locking": "locking",
                     "unlocking": "unlocking", "open": "open", "unavailable": "not available"}
            said = words.get(state["state"], state["state"])
            return {"dialog": "The %s is %s." % (name, said), "output": {"locked": state["state"] == "locked"}}
        if intent in ("Lock", "Unlock"):
            lock = values["lock"]
            self.hub.request("POST", "/api/services/lock/" + intent.lower(), {"entity_id": lock})
            return {"dialog": "Done.", "detail": "The %s is %s." % (self.display("lock", lock), intent.lower() + "ed")}
        raise NotImplementedError


def main():
    out = threading.Lock()

    def write(message):
        with out:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    app = App(write)
    stop = threading.Event()
    threading.Thread(target=app.fetch_names, args=(stop,), daemon=True).start()
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
            reply = {"jsonrpc": "2.0", "id": request_id, "result": app.handle(method, message.get("params") or {})}
        except NotImplementedError:
            reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "not implemented"}}
        except AppError as error:
            reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": 1, "message": str(error)}}
        except (KeyError, TypeError, AttributeError) as error:
            reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": "Home Assistant did not get the %s." % error}}
        write(reply)
    stop.set()


if __name__ == "__main__":
    main()
