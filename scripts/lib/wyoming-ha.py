#!/usr/bin/env python3
"""A stand-in Home Assistant for scripts/bench-wyoming.sh, on the real
`wyoming` package: connects to the satellite (retrying while parleyd
starts), sends run-satellite, answers pings, and answers every pipeline the
satellite runs with 0.2 s of audio at 22,050 Hz, waiting for `played`.
Prints one line per pipeline: "pipeline <audio bytes received>".

usage: wyoming-ha.py HOST PORT
"""
import asyncio
import sys

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.ping import Ping, Pong
from wyoming.pipeline import RunPipeline
from wyoming.satellite import RunSatellite
from wyoming.snd import Played


async def main():
    host, port = sys.argv[1], int(sys.argv[2])
    for _ in range(600):
        try:
            client = AsyncTcpClient(host, port)
            await client.connect()
            break
        except OSError:
            await asyncio.sleep(0.05)
    else:
        sys.exit("wyoming-ha: the satellite never listened")
    await client.write_event(RunSatellite().event())
    print("connected", flush=True)
    received = None
    while True:
        event = await client.read_event()
        if event is None:
            return
        if Ping.is_type(event.type):
            await client.write_event(Pong(text=Ping.from_event(event).text).event())
        elif RunPipeline.is_type(event.type):
            received = 0
        elif AudioChunk.is_type(event.type) and received is not None:
            received += len(event.payload or b"")
        elif AudioStop.is_type(event.type) and received is not None:
            print(f"pipeline {received}", flush=True)
            received = None
            await client.write_event(AudioStart(rate=22050, width=2, channels=1).event())
            await client.write_event(AudioChunk(rate=22050, width=2, channels=1, audio=bytes(8820)).event())
            await client.write_event(AudioStop().event())
        elif Played.is_type(event.type):
            print("played", flush=True)


asyncio.run(main())
