#!/usr/bin/env python3
"""Home Assistant's side of a Wyoming satellite, on the real `wyoming`
package (PyPI), in the order Home Assistant's wyoming integration
(assist_satellite.py) speaks: run-satellite, describe, pings; a pipeline the
satellite asks for with run-pipeline (asr -> tts) and streams audio to; then
transcript, synthesize and the answer's audio at 22,050 Hz, waiting for
`played`; an announcement (audio unasked, `played` awaited); timers; and
pause-satellite.

usage: ha_satellite.py HOST PORT OUT_DIR
Prints "ready" once the satellite has been described, then one JSON line of
what happened. Writes OUT_DIR/received.raw (the audio the satellite sent) and
OUT_DIR/answer.raw (the answer it was sent), 16-bit little-endian mono.
"""
import asyncio
import json
import math
import struct
import sys

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong
from wyoming.pipeline import PipelineStage, RunPipeline
from wyoming.satellite import PauseSatellite, RunSatellite
from wyoming.snd import Played
from wyoming.timer import TimerFinished, TimerStarted, TimerUpdated
from wyoming.tts import Synthesize

TTS_RATE = 22050


def tone(seconds, frequency):
    count = int(TTS_RATE * seconds)
    return b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * frequency * i / TTS_RATE))) for i in range(count))


async def send_audio(client, audio):
    await client.write_event(AudioStart(rate=TTS_RATE, width=2, channels=1, timestamp=0).event())
    for start in range(0, len(audio), 2048):  # 1024 samples, as Home Assistant chunks
        await client.write_event(AudioChunk(rate=TTS_RATE, width=2, channels=1, audio=audio[start:start + 2048]).event())
    await client.write_event(AudioStop().event())


async def expect(client, kind):
    while True:
        event = await asyncio.wait_for(client.read_event(), timeout=120)
        if event is None:
            raise ConnectionResetError(f"closed while waiting for {kind.__name__}")
        if kind.is_type(event.type):
            return event


async def main():
    host, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    result = {}
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(RunSatellite().event())
        await client.write_event(Describe().event())
        info = Info.from_event(await expect(client, Info))
        result["satellite"] = info.satellite.name
        result["area"] = info.satellite.area
        result["wake_words"] = info.satellite.active_wake_words
        await client.write_event(Ping(text="1").event())
        result["pong"] = Pong.from_event(await expect(client, Pong)).text
        print("ready", flush=True)

        # The satellite sends a command Parley rejected.
        run = RunPipeline.from_event(await expect(client, RunPipeline))
        result["start_stage"], result["end_stage"] = run.start_stage.value, run.end_stage.value
        start = AudioStart.from_event(await expect(client, AudioStart))
        result["rate"], result["width"], result["channels"] = start.rate, start.width, start.channels
        received = bytearray()
        chunks = 0
        while True:
            event = await asyncio.wait_for(client.read_event(), timeout=120)
            if AudioChunk.is_type(event.type):
                received += AudioChunk.from_event(event).audio
                chunks += 1
            elif AudioStop.is_type(event.type):
                break
        result["chunks"] = chunks
        open(f"{out}/received.raw", "wb").write(received)

        # Home Assistant's pipeline answers.
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(Transcript(text="turn on the kitchen light").event())
        await client.write_event(Synthesize(text="Turned on the kitchen light").event())
        answer = tone(0.5, 440)
        open(f"{out}/answer.raw", "wb").write(answer)
        await send_audio(client, answer)
        await expect(client, Played)
        result["played_answer"] = True

        # An announcement: audio unasked; played awaited as Home Assistant does.
        await send_audio(client, tone(0.25, 660))
        await expect(client, Played)
        result["played_announcement"] = True

        # A timer started for this satellite, updated, finished.
        await client.write_event(TimerStarted(id="t1", total_seconds=300, name="pasta", start_minutes=5).event())
        await client.write_event(TimerUpdated(id="t1", is_active=True, total_seconds=240).event())
        await client.write_event(TimerFinished(id="t1").event())

        # Muted in Home Assistant.
        await client.write_event(PauseSatellite().event())
        await client.write_event(Ping(text="2").event())
        result["pong_after_pause"] = Pong.from_event(await expect(client, Pong)).text
    print(json.dumps(result), flush=True)


asyncio.run(main())
