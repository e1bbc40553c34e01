#!/usr/bin/env python3
"""A Wyoming handle client built on the real `wyoming` package (PyPI), as
Home Assistant's conversation agent for a Wyoming handle service uses it:
describe -> info, then one transcript per connection -> handled / not-handled.

usage: handle_client.py HOST PORT TEXT...   (one JSON line per TEXT on stdout)
       handle_client.py HOST PORT --garbage (malformed bytes; prints what came back)
"""
import asyncio
import json
import sys

from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong


async def describe(host, port):
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(Describe().event())
        event = await client.read_event()
        info = Info.from_event(event)  # raises if the info is not what the package reads
        handle = info.handle[0]
        return {"kind": "info", "handle": handle.name, "languages": handle.models[0].languages,
                "installed": handle.installed}


async def ask(host, port, text):
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(Ping(text="p").event())
        pong = Pong.from_event(await client.read_event())
        await client.write_event(Transcript(text=text, language="en").event())
        event = await client.read_event()
        if Handled.is_type(event.type):
            return {"transcript": text, "type": "handled", "text": Handled.from_event(event).text, "pong": pong.text}
        if NotHandled.is_type(event.type):
            return {"transcript": text, "type": "not-handled", "text": NotHandled.from_event(event).text, "pong": pong.text}
        return {"transcript": text, "type": event.type}


async def garbage(host, port):
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(b'{"type": "transcript", "data_length": "lots"}\n')
    await writer.drain()
    client = AsyncTcpClient(host, port)
    client._reader, client._writer = reader, writer
    event = await client.read_event()
    after = await client.read_event()
    result = {"kind": "garbage", "type": event.type if event else None,
              "text": Error.from_event(event).text if event and Error.is_type(event.type) else None,
              "closed": after is None}
    writer.close()
    return result


async def main():
    host, port, rest = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    print(json.dumps(await describe(host, port)), flush=True)
    if rest == ["--garbage"]:
        print(json.dumps(await garbage(host, port)), flush=True)
        return
    for text in rest:
        print(json.dumps(await ask(host, port, text)), flush=True)


asyncio.run(main())
