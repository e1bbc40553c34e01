#!/usr/bin/env python3
"""Opens the speaker's page over HTTP and pairs with it, as a phone would:
asks for a code, reads the code the speaker said from its log (LOG_COMMAND,
a shell command printing the daemon's log: `journalctl -u parleyd` over SSH
for the image), types it, and checks the session opens the status page.

Then, with the session, saves one setting on the Settings page (the voice's
rate, SETTING below), as an owner would: the daemon writes it to
`<state>/settings.yaml`, which the caller checks on the device (issue 51:
settings saved through a file the daemon may write, on the booted image).

Usage: web-pair.py URL LOG_COMMAND
Prints "paired: <session id prefix>" and "saved: voice.rate=<rate>", and exits
0; else says what failed and exits 1.
Used by scripts/image-test.sh (check 5-web, over the VM's forwarded port 80).
"""
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

url, log_command = sys.argv[1].rstrip("/"), sys.argv[2]
origin = re.match(r"https?://[^/]+", url).group(0)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


opener = urllib.request.build_opener(NoRedirect)


SETTING = ("voice.rate", "165")


def post(path, fields, cookie=None):
    data = urllib.parse.urlencode(fields).encode()
    headers = {"Origin": origin}
    if cookie:
        headers["Cookie"] = cookie
    request = urllib.request.Request(url + path, data=data, headers=headers)
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def spoken_codes():
    log = subprocess.run(log_command, shell=True, capture_output=True, text=True).stdout
    return re.findall(r"spoke text=Your pairing code is ([\d ]+)\.", log)


before = len(spoken_codes())
status, _, body = post("/pair/code", {})
if status != 200:
    sys.exit(f"web-pair: asking for a code answered {status}: {body[:200]}")
code = None
for _ in range(300):  # bounded polls of the log, not a fixed wait
    codes = spoken_codes()
    if len(codes) > before:
        code = codes[-1].replace(" ", "")
        break
    time.sleep(0.1)
if not code:
    sys.exit("web-pair: the speaker's log shows no pairing code")
status, headers, body = post("/pair", {"code": code})
cookie = headers.get("Set-Cookie", "") if headers else ""
if status != 303 or "HttpOnly" not in cookie or "SameSite=Strict" not in cookie:
    sys.exit(f"web-pair: pairing answered {status}, cookie {cookie!r}")
session = cookie.split(";")[0]
request = urllib.request.Request(url + "/", headers={"Cookie": session})
with opener.open(request, timeout=30) as response:
    page = response.read().decode()
if "<h1>Status</h1>" not in page:
    sys.exit("web-pair: the paired session did not open the status page")
print(f"paired: {session.split('=', 1)[1][:6]}…")

# The Settings page: its form token, then one setting saved.
request = urllib.request.Request(url + "/settings", headers={"Cookie": session})
with opener.open(request, timeout=30) as response:
    page = response.read().decode()
token = re.search(r'name="form_token" value="([^"]+)"', page)
if not token:
    sys.exit("web-pair: the settings page has no form token")
status, _, body = post("/settings", {"form_token": token.group(1), SETTING[0]: SETTING[1]}, cookie=session)
if status != 200 or "Saved to" not in body:
    sys.exit(f"web-pair: saving {SETTING[0]}={SETTING[1]} answered {status}: {re.sub(r'<[^>]+>', ' ', body)[:300]}")
print(f"saved: {SETTING[0]}={SETTING[1]}")
