"""Onboards a fresh Home Assistant (scripts/eval-home-assistant.sh) and
prepares it for Parley: the owner's user, a long-lived access token, the
areas, and which entity is in which area. Runs with Home Assistant's own
Python (aiohttp is there). Prints the long-lived token on standard output.

Usage: ha_setup.py URL
"""
import asyncio
import json
import sys

import aiohttp

AREAS = {"Kitchen": ["light.kitchen_light", "switch.coffee_machine", "lock.back_door"],
         "Hall": ["light.hall_light", "lock.front_door"],
         "Living Room": ["light.reading_lamp"]}


async def main(url):
    client_id = url + "/"
    async with aiohttp.ClientSession() as session:
        async with session.post(url + "/api/onboarding/users", json={
                "client_id": client_id, "name": "Parley Owner", "username": "owner",
                "password": "parley-eval-only", "language": "en"}) as reply:
            reply.raise_for_status()
            code = (await reply.json())["auth_code"]
        async with session.post(url + "/auth/token", data={
                "grant_type": "authorization_code", "code": code, "client_id": client_id}) as reply:
            reply.raise_for_status()
            access = (await reply.json())["access_token"]
        headers = {"Authorization": "Bearer " + access}
        for step in ("core_config", "analytics"):
            async with session.post(url + "/api/onboarding/" + step, headers=headers, json={}) as reply:
                print("onboarding %s: %d" % (step, reply.status), file=sys.stderr)
        async with session.ws_connect(url + "/api/websocket") as ws:
            await ws.receive_json()
            await ws.send_json({"type": "auth", "access_token": access})
            assert (await ws.receive_json())["type"] == "auth_ok"
            counter = [0]

            async def call(message):
                counter[0] += 1
                message["id"] = counter[0]
                await ws.send_json(message)
                while True:
                    answer = await ws.receive_json()
                    if answer.get("id") == counter[0]:
                        if not answer.get("success"):
                            raise RuntimeError("%s: %s" % (message["type"], answer.get("error")))
                        return answer["result"]

            existing = {area["name"]: area["area_id"] for area in await call({"type": "config/area_registry/list"})}
            for name, entities in AREAS.items():
                area_id = existing.get(name) or (await call({"type": "config/area_registry/create", "name": name}))["area_id"]
                for entity in entities:
                    await call({"type": "config/entity_registry/update", "entity_id": entity, "area_id": area_id})
            token = await call({"type": "auth/long_lived_access_token", "client_name": "Parley", "lifespan": 3650})
    print(token)


asyncio.run(main(sys.argv[1]))
