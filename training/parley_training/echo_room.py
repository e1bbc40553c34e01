#!/usr/bin/env python3
"""The simulated room of training/bin/eval-echo.sh (issue 28): no machine here has
a speaker and a microphone, so the microphone signal is made.

  echo    the device's own speech (parley-bench audio device-speech) through a
          synthetic room impulse response from the device's speaker to its
          microphone 6 cm away, heard `--latency-ms` after it was queued: ALSA's
          delays account for `--known-ms` of it (the reference is placed there),
          the rest (converters, FIFOs) the canceller's filter must absorb;
  person  recorded words through the room's response from where the person
          stands to the microphone, at an SNR relative to the echo;
  noise   the microphone's own noise, white at -70 dBFS.

The room impulse responses come from the image-source model of Allen and
Berkley ("Image method for efficiently simulating small-room acoustics",
JASA 65(4), 1979): a shoebox room whose walls reflect with one coefficient
beta, set from the reverberation time by Sabine's formula; every image up to
the reverberation time contributes beta^reflections / (4 pi distance) at its
delay, computed at 4x the rate and decimated (fractional delays), then
high-passed at 50 Hz as the paper does.

Outputs, in --out:
  rir-device.wav, rir-person.wav   the two impulse responses (16 kHz, peak-normalised)
  echo.wav          the echo alone, over all of the device's speech (false wakes/stops, ERLE)
  mix-<snr>.wav     the echo of the first --mix-minutes with the person's events at <snr> dB
                    (after the first 10 s; mix-clean.wav: the person's events alone)
  events-<snr>.tsv  kind (stop|wake), first sample, end sample, label
  stops/            the synthetic "stop"s (espeak-ng voices other than the device's:
                    the evaluation data holds no recording of "stop")
  room.txt          the room's parameters and the levels
Needs numpy and scipy (scripts/setup.sh installs python3-numpy and python3-scipy).
"""
import argparse
import glob
import os
import random
import subprocess
import sys
import wave

import numpy as np
from scipy import signal

RATE = 16_000
C = 343.0


def read_wav(path):
    with wave.open(path) as w:
        if w.getframerate() != RATE or w.getnchannels() != 1 or w.getsampwidth() != 2:
            sys.exit(f"room.py: {path}: expected 16 kHz mono 16-bit")
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float64)


def write_wav(path, x):
    peak = np.max(np.abs(x)) if len(x) else 0
    if peak > 32767:
        sys.exit(f"room.py: {path} would clip (peak {peak:.0f}): lower --echo-dbfs")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(np.round(x).astype(np.int16).tobytes())


def image_source_rir(room, source, mic, rt60, length_s, oversample=4):
    """Allen & Berkley's image method; Sabine's reflection coefficient."""
    lx, ly, lz = room
    volume = lx * ly * lz
    surface = 2 * (lx * ly + lx * lz + ly * lz)
    alpha = min(0.999, 0.161 * volume / (surface * rt60))
    beta = np.sqrt(1 - alpha)
    fs = RATE * oversample
    n_taps = int(length_s * fs)
    h = np.zeros(n_taps)
    reach = C * length_s
    orders = [int(np.ceil(reach / (2 * d))) + 1 for d in room]
    ranges = [np.arange(-o, o + 1) for o in orders]
    mx, my, mz = np.meshgrid(*ranges, indexing="ij")
    mx, my, mz = mx.ravel(), my.ravel(), mz.ravel()
    for px in (0, 1):
        for py in (0, 1):
            for pz in (0, 1):
                # Image position: (1 - 2p) * s + 2 m L; reflections |m - p| + |m|.
                ix = (1 - 2 * px) * source[0] + 2 * mx * lx
                iy = (1 - 2 * py) * source[1] + 2 * my * ly
                iz = (1 - 2 * pz) * source[2] + 2 * mz * lz
                d = np.sqrt((ix - mic[0]) ** 2 + (iy - mic[1]) ** 2 + (iz - mic[2]) ** 2)
                refl = np.abs(mx - px) + np.abs(mx) + np.abs(my - py) + np.abs(my) + np.abs(mz - pz) + np.abs(mz)
                tap = np.round(d / C * fs).astype(np.int64)
                keep = tap < n_taps
                np.add.at(h, tap[keep], beta ** refl[keep] / (4 * np.pi * d[keep]))
    h = signal.resample_poly(h, 1, oversample)
    b, a = signal.butter(2, 50 / (RATE / 2), "highpass")
    return signal.lfilter(b, a, h), alpha


def active_rms(x, frame=320, floor_db=-40):
    """RMS over the frames within floor_db of the loudest (the speech, not its pauses)."""
    n = len(x) // frame
    energies = (x[: n * frame].reshape(n, frame) ** 2).mean(axis=1)
    loud = energies > energies.max() * 10 ** (floor_db / 10)
    return np.sqrt(energies[loud].mean())


def trim(x, frame=160, floor_db=-35):
    """Cuts the leading and trailing silence of a recording (a little margin kept)."""
    n = len(x) // frame
    energies = (x[: n * frame].reshape(n, frame) ** 2).mean(axis=1)
    loud = np.nonzero(energies > energies.max() * 10 ** (floor_db / 10))[0]
    if len(loud) == 0:
        return x
    return x[max(0, (loud[0] - 5) * frame): min(len(x), (loud[-1] + 6) * frame)]


def synthetic_stops(work, count, rng):
    """'stop' in espeak-ng voices other than the device's: synthetic, labelled so."""
    voices = ["en-us+f2", "en-us+f4", "en-us+m3", "en-us+m7", "en+f3", "en+m2", "en-gb-x-rp+f1", "en-gb-scotland+m4",
              "en-us+klatt2", "en-029+f5", "en-us+croak", "en+whisperf"]
    stops = []
    os.makedirs(work, exist_ok=True)
    for i in range(count):
        voice, speed, pitch = voices[i % len(voices)], rng.randint(130, 200), rng.randint(30, 70)
        path = os.path.join(work, f"stop-{i}.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w", path + ".raw.wav", "stop"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with wave.open(path + ".raw.wav") as w:
            x = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float64)
            rate = w.getframerate()
        stops.append((trim(signal.resample_poly(x, RATE, rate)), f"stop ({voice}, synthetic)"))
    return stops


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--speech", required=True, help="the device's speech (device-speech's WAV)")
    p.add_argument("--lines", required=True, help="device-speech's TSV of lines")
    p.add_argument("--data", required=True, help="the evaluation recordings (PARLEY_SHARED_DATA)")
    p.add_argument("--out", required=True)
    p.add_argument("--snrs", default="0 -10 -20")
    p.add_argument("--mix-minutes", type=float, default=12)
    p.add_argument("--events", type=int, default=60, help="person events per mixture (half stop, half wake + command)")
    p.add_argument("--rt60", type=float, default=0.4)
    p.add_argument("--latency-ms", type=float, default=50, help="from queued to heard, all of it")
    p.add_argument("--known-ms", type=float, default=40, help="the part ALSA's delays report (the reference's placement)")
    p.add_argument("--echo-dbfs", type=float, default=-26, help="the echo's speech level at the microphone (active RMS)")
    p.add_argument("--seed", type=int, default=28)
    a = p.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)

    room = (5.0, 4.0, 2.7)
    device_speaker, device_mic, person = (1.0, 2.0, 0.75), (1.0, 2.06, 0.78), (3.5, 2.8, 1.6)
    rir_device, alpha = image_source_rir(room, device_speaker, device_mic, a.rt60, 0.5)
    rir_person, _ = image_source_rir(room, person, device_mic, a.rt60, 0.5)
    write_wav(os.path.join(a.out, "rir-device.wav"), rir_device / np.max(np.abs(rir_device)) * 30000)
    write_wav(os.path.join(a.out, "rir-person.wav"), rir_person / np.max(np.abs(rir_person)) * 30000)

    speech = read_wav(a.speech)
    delay = int(a.latency_ms * RATE / 1000)
    echo = np.concatenate([np.zeros(delay), signal.oaconvolve(speech, rir_device)[: len(speech) - delay]])
    echo *= 10 ** (a.echo_dbfs / 20) * 32768 / active_rms(echo)
    noise_rng = np.random.default_rng(a.seed)
    mic_noise = lambda n: noise_rng.normal(0, 32768 * 10 ** (-70 / 20), n)
    write_wav(os.path.join(a.out, "echo.wav"), echo + mic_noise(len(echo)))
    echo_level = active_rms(echo)

    lines = []
    for row in open(a.lines):
        first, end, _ = row.rstrip("\n").split("\t", 2)
        lines.append((int(first), int(end)))
    mix_end = int(a.mix_minutes * 60 * RATE)
    wakes = sorted(glob.glob(os.path.join(a.data, "wake-computer/clean/*.wav")))
    commands = sorted(glob.glob(os.path.join(a.data, "coffee-maker/clean/*.wav")))
    if not wakes or not commands:
        sys.exit(f"room.py: no wake-computer or coffee-maker recordings under {a.data}")
    stops = synthetic_stops(os.path.join(a.out, "stops"), a.events // 2, rng)
    # The person speaks while the device does: each event starts inside a
    # line of the device's, at least 8 s after the last one began.
    # Not in the first 10 s: the canceller adapts from silence once, at
    # start, and runs from then on.
    candidates, last = [], -10**9
    for first, end in lines:
        if first < 10 * RATE:
            continue
        if end > mix_end:
            break
        if end - first >= RATE * 2 and first - last >= 8 * RATE:
            candidates.append(first + rng.randint(RATE // 4, min(RATE, end - first - RATE)))
            last = first
    if len(candidates) < a.events:
        sys.exit(f"room.py: only {len(candidates)} device lines for {a.events} events in {a.mix_minutes} min: raise --mix-minutes")
    starts = sorted(rng.sample(candidates, a.events))
    person_events = []
    for i, start in enumerate(starts):
        if i % 2 == 0:
            words, label = stops[i // 2]
            kind = "stop"
        else:
            wake_path, command_path = wakes[(i // 2) % len(wakes)], commands[(i // 2) % len(commands)]
            words = np.concatenate([trim(read_wav(wake_path)), np.zeros(RATE // 4), trim(read_wav(command_path))])
            label = f"{os.path.basename(wake_path)} + {os.path.basename(command_path)}"
            kind = "wake"
        # Its level is the level at the microphone, as the echo's is.
        heard = signal.oaconvolve(words, rir_person)
        person_events.append((kind, start, heard / active_rms(heard), len(words), label))
    with open(os.path.join(a.out, "room.txt"), "w") as f:
        f.write(f"room {room} m, RT60 {a.rt60} s (Sabine alpha {alpha:.3f}), device speaker {device_speaker}, "
                f"microphone {device_mic}, person {person}\nlatency {a.latency_ms} ms, of which ALSA's delays report "
                f"{a.known_ms} ms; echo at {a.echo_dbfs} dBFS active RMS; microphone noise -70 dBFS\n")
    base = echo[:mix_end]
    for snr in a.snrs.split() + ["clean"]:
        # "clean": the person alone (at the echo's level), for what the
        # recogniser makes of the words without any echo.
        mix = base.copy() if snr != "clean" else np.zeros(len(base))
        level = echo_level * 10 ** ((0 if snr == "clean" else float(snr)) / 20)
        rows = []
        for kind, start, heard, length, label in person_events:
            end = min(len(mix), start + len(heard))
            mix[start:end] += heard[: end - start] * level
            rows.append(f"{kind}\t{start}\t{start + length}\t{label}\n")
        write_wav(os.path.join(a.out, f"mix-{snr}.wav"), mix + mic_noise(len(mix)))
        with open(os.path.join(a.out, f"events-{snr}.tsv"), "w") as f:
            f.writelines(rows)
    print(f"room (and mix-clean.wav, the person alone): echo {len(echo) / RATE / 60:.1f} min, mixtures of {a.mix_minutes} min with {a.events} events at {a.snrs} dB")


if __name__ == "__main__":
    main()
