import ArgumentParser
import Foundation
import ParleyAudio
import ParleySpeech

/// `parley-bench audio …`: capture-path CPU cost, endpointing on the shared
/// recordings, playback stop latency. Run in release mode (scripts/bench-audio.sh,
/// training/bin/eval-endpoint.sh).
struct AudioBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audio", abstract: "Audio capture, endpointing and playback benchmarks.",
        subcommands: [CaptureCPU.self, Endpointing.self, PlaybackStop.self, Mix.self, Pauses.self, FrontEndCost.self,
                      DeviceSpeech.self, EchoRoom.self, Denoise.self])

    /// Writes recordings mixed with noise the published way, so tools that
    /// take files (`parley understand`) can be evaluated in noise. The slice
    /// for the i-th file is seeded as `speech-coffee` seeds it (0x5EED + i).
    struct Mix: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mix", abstract: "Mix 16 kHz mono WAV files with noise at an SNR (peak-frame definition) into a folder.")
        @Option(help: "SNR in dB.") var snr: Double
        @Option(help: "Noise WAV (16 kHz mono); default: the evaluation data's noise/kitchen.wav.") var noise: String?
        var noiseFile: URL { noise.map { URL(fileURLWithPath: $0) } ?? sharedData("noise/kitchen.wav") }
        @Option(help: "Output folder (created; files keep their names).") var out: String
        @Argument(help: "WAV files.") var files: [String]

        func run() throws {
            let noiseSamples = try WAVFile.read(noiseFile).samples
            let folder = URL(fileURLWithPath: out)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (index, file) in files.enumerated() {
                let url = URL(fileURLWithPath: file)
                let (samples, rate) = try WAVFile.read(url)
                guard rate == 16_000 else { throw ValidationError("\(file): \(rate) Hz; expected 16 kHz mono") }
                guard noiseSamples.count >= samples.count else {
                    throw ValidationError("\(file): \(samples.count) samples, longer than the noise \(noiseFile.path) (\(noiseSamples.count)); expected noise at least as long as each file")
                }
                let mixed = NoiseMixer.mix(speech: samples, noise: noiseSamples, snrDB: snr, seed: UInt64(index) &+ 0x5EED)
                try WAVFile.write(mixed, sampleRate: rate, to: folder.appendingPathComponent(url.lastPathComponent))
            }
        }
    }

    struct CaptureCPU: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "capture-cpu",
            abstract: "CPU time of the capture thread (ALSA file plugin read, conversion, ring) per second of audio.")
        @Option(help: "Seconds of audio per run.") var seconds = 300
        @Option(help: "Device sample rate.") var rate = 16_000
        @Option(help: "Device channels.") var channels = 1
        @Option(help: "Runs (the median is reported).") var runs = 5

        func run() throws {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-\(getpid())")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let frames = seconds * rate
            var rng = SplitMix64(seed: 7)
            var samples = [Int16](repeating: 0, count: frames * channels)
            for i in samples.indices { samples[i] = Int16(truncatingIfNeeded: Int(rng.next() % 8_000) - 4_000) }
            let raw = dir.appendingPathComponent("in.raw")
            try FileAudioDevice.writeRaw(samples, to: raw)
            let period = rate / 100
            var perSecond: [Double] = []
            for _ in 0..<runs {
                let service = try CaptureService(configuration: CaptureConfiguration(
                    device: FileAudioDevice.capture(rawInput: raw),
                    format: PCMFormat(sampleRate: rate, channels: channels, periodFrames: period, bufferFrames: period * 8),
                    realtimePriority: nil, inputFrameLimit: frames))
                try service.start()
                while service.status.state != .endOfInput { usleep(2_000) }
                service.stop()
                perSecond.append(Double(service.status.cpuNanoseconds) / Double(service.status.frames) * Double(rate))
            }
            perSecond.sort()
            let median = perSecond[perSecond.count / 2]
            print(String(format: "capture %d Hz %d ch -> 16 kHz mono, %d s x %d runs: median %.1f µs CPU per second of audio = %.4f%% of one core (min %.1f, max %.1f µs)",
                         rate, channels, seconds, runs, median / 1_000, median / 1e9 * 100, perSecond.first! / 1_000, perSecond.last! / 1_000))
        }
    }

    struct Endpointing: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "endpoint",
            abstract: "Endpointer on the evaluation data's coffee-maker/clean, clean and mixed with kitchen noise.")
        @Option(help: "Folder of clean 16 kHz recordings; default: the evaluation data's coffee-maker/clean.") var clean: String?
        @Option(help: "Noise WAV file; default: the evaluation data's noise/kitchen.wav.") var noise: String?
        var noiseFile: URL { noise.map { URL(fileURLWithPath: $0) } ?? sharedData("noise/kitchen.wav") }
        @Option(help: "Comma-separated SNRs in dB.") var snrs = "6,9,12,15,18,21,24"
        @Option(help: "Trailing silence in milliseconds (comma-separated to sweep).") var trailingMs = "600"
        @Option(help: "Noise slice seed (recording i uses seed + i).") var seed: UInt64 = 20_240_611
        @Option(help: "Override the start margin (dB).") var startDb: Double?
        @Option(help: "Override the start spread factor.") var startSpread: Double?
        @Option(help: "Override the continue margin (dB).") var continueDb: Double?
        @Option(help: "Override the continue spread factor.") var continueSpread: Double?
        @Option(help: "Override the onset frames.") var onsetFrames: Int?
        @Option(help: "Override the onset window.") var onsetWindow: Int?
        @Option(help: "Override the post-roll (ms).") var postRollMs: Int?
        @Option(help: "Override the voiced onset frames.") var onsetVoiced: Int?
        @Option(help: "Override the voicing threshold.") var voicing: Double?
        @Option(help: "Override which frames teach the noise model: always, belowContinue, deferredInRuns.") var noiseLearning: NoiseLearning?
        @Option(help: "Override the onset look-back (ms).") var lookbackMs: Int?
        @Option(help: "Override the noisy-segment peak margin (dB; 0: off).") var noisyPeakDb: Double?
        @Option(help: "Override the noisy-segment post-roll (ms).") var noisyPostRollMs: Int?

        func tuned(_ trailing: Int) -> EndpointerConfiguration {
            var c = EndpointerConfiguration(trailingSilenceMilliseconds: trailing)
            if let startDb { c.startThresholdDB = startDb }
            if let startSpread { c.startSpread = startSpread }
            if let continueDb { c.continueThresholdDB = continueDb }
            if let continueSpread { c.continueSpread = continueSpread }
            if let onsetFrames { c.onsetFrames = onsetFrames }
            if let onsetWindow { c.onsetWindow = onsetWindow }
            if let postRollMs { c.postRollMilliseconds = postRollMs }
            if let onsetVoiced { c.onsetVoicedFrames = onsetVoiced }
            if let voicing { c.voicingThreshold = voicing }
            if let noiseLearning { c.noiseLearning = noiseLearning }
            if let lookbackMs { c.onsetLookbackMilliseconds = lookbackMs }
            if let noisyPeakDb { c.noisySegmentPeakDB = noisyPeakDb }
            if let noisyPostRollMs { c.noisyPostRollMilliseconds = noisyPostRollMs }
            return c
        }

        @Option(help: "Print each recording's segments at this SNR (dB) instead of the summary.") var detail: Double?
        @Flag(help: "Print one JSON line per recording and condition (one, some, first) instead of the summary.") var outcomes = false

        /// The listening path's decoder lead-in, for the "first utterance" column.
        var leadIn: Int { UtteranceListening().decoderLeadInMilliseconds }

        func run() throws {
            let folder = clean.map { URL(fileURLWithPath: $0) } ?? sharedData("coffee-maker/clean")
            let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "wav" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
            let snrList = snrs.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            if let detail {
                try printDetail(files: files, snr: detail)
                return
            }
            if outcomes {
                let config = tuned(Int(trailingMs.split(separator: ",")[0]) ?? 600)
                for entry in try EndpointEvaluation.outcomes(recordings: files, noise: noiseFile, snrs: snrList,
                                                             seed: seed, configuration: config, leadInMilliseconds: leadIn) {
                    let o = entry.outcome
                    print("{\"file\":\"\(entry.recording.lastPathComponent)\",\"condition\":\"\(entry.condition)\",\"one\":\(o.oneSegmentWithAllSpeech),\"some\":\(o.someSegmentWithAllSpeech),\"first\":\(o.firstUtteranceWithAllSpeech),\"delay\":\(o.endDelaySeconds ?? -1)}")
                }
                return
            }
            try printCPU(files: files)
            for trailing in trailingMs.split(separator: ",").compactMap({ Int($0) }) {
                let config = tuned(trailing)
                let results = try EndpointEvaluation.run(
                    recordings: files, noise: noiseFile, snrs: snrList, seed: seed, configuration: config,
                    leadInMilliseconds: leadIn)
                print("trailing silence \(trailing) ms, \(files.count) recordings, true extent: 10 ms frames within \(Int(SpeechExtent.defaultThresholdDB)) dB of the loudest, in runs of >= \(SpeechExtent.defaultMinimumRunFrames * 10) ms")
                print("| condition | one segment with all speech | some segment with all speech | first utterance (\(leadIn) ms lead-in) with all speech | end delay median | end delay p90 |")
                print("|---|---|---|---|---|---|")
                for c in results {
                    print(String(format: "| %@ | %.1f%% | %.1f%% | %.1f%% | %.0f ms | %.0f ms |", c.label, c.oneSegmentShare * 100,
                                 c.someSegmentShare * 100, c.firstUtteranceShare * 100, c.medianEndDelaySeconds * 1000,
                                 c.p90EndDelaySeconds * 1000))
                }
            }
        }

        /// CPU time of the endpointer itself (this thread), per second of audio, over the clean set.
        func printCPU(files: [URL]) throws {
            let recordings = try files.map { try WAVFile.read($0).samples }
            let seconds = Double(recordings.reduce(0) { $0 + $1.count }) / 16_000
            var runs: [Double] = []
            for _ in 0..<5 {
                var t0 = timespec(), t1 = timespec()
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0)
                for samples in recordings {
                    let endpointer = Endpointer(configuration: tuned(600))
                    samples.withUnsafeBufferPointer { endpointer.process($0) { _ in } }
                }
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1)
                let ns = Double(t1.tv_sec - t0.tv_sec) * 1e9 + Double(t1.tv_nsec - t0.tv_nsec)
                runs.append(ns / seconds)
            }
            runs.sort()
            print(String(format: "endpointer CPU: median %.1f µs per second of audio (%.3f%% of one core), %.0f s of audio x 5 runs",
                         runs[2] / 1_000, runs[2] / 1e9 * 100, seconds))
        }

        func printDetail(files: [URL], snr: Double) throws {
            let noiseSamples = try WAVFile.read(noiseFile).samples
            let config = tuned(Int(trailingMs.split(separator: ",")[0]) ?? 600)
            for (index, url) in files.enumerated() {
                let clean = try WAVFile.read(url).samples
                guard let truth = SpeechExtent.of(clean) else { continue }
                let padded = clean + [Int16](repeating: 0, count: Int(EndpointEvaluation.tailSeconds * 16_000))
                let input = snr >= 100 ? padded
                    : NoiseMixer.mix(speech: padded, noise: noiseSamples, snrDB: snr, seed: seed &+ UInt64(index))
                let outcome = EndpointEvaluation.evaluate(input, truth: truth, configuration: config)
                let segments = outcome.segments.map { String(format: "%.2f-%.2f@%.2f", Double($0.start) / 16_000, Double($0.end) / 16_000, Double($0.reportedAt) / 16_000) }
                print(String(format: "%@ truth %.2f-%.2f %@ %@", url.lastPathComponent.prefix(8).description,
                             Double(truth.lowerBound) / 16_000, Double(truth.upperBound) / 16_000,
                             outcome.oneSegmentWithAllSpeech ? "OK  " : "FAIL", segments.joined(separator: " ")))
            }
        }
    }

    struct PlaybackStop: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "playback-stop",
            abstract: "Wall time from stopSpeaking() to silence, file device paced in real time.")
        @Option(help: "Stops to measure.") var stops = 20

        func run() throws {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-\(getpid())")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let service = try PlaybackService(configuration: PlaybackConfiguration(
                device: FileAudioDevice.playback(output: dir.appendingPathComponent("out.wav")), pacing: .realTime))
            try service.start()
            defer { service.shutdown() }
            let tone = (0..<22_050).map { Int16(8_000 * sin(2 * Double.pi * 440 * Double($0) / 22_050)) }
            var latencies: [Double] = []
            var afterStop: [Int] = []
            for _ in 0..<stops {
                service.enqueue(tone, sampleRate: 22_050)
                while !service.isSpeaking { usleep(500) }
                usleep(100_000)
                let t0 = DispatchTime.now().uptimeNanoseconds
                service.stopSpeaking()
                latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
                afterStop.append(service.framesWrittenAfterLastStop)
            }
            latencies.sort()
            print(String(format: "playback stop: median %.2f ms, max %.2f ms over %d stops; frames written after the stop request: max %d (device period %d frames at %d Hz)",
                         latencies[latencies.count / 2], latencies.last!, stops, afterStop.max()!, service.configuration.format.periodFrames, service.deviceSampleRate))
        }
    }
}

/// `--noise-learning always|belowContinue|deferredInRuns`; anything else is refused naming the choices.
extension NoiseLearning: ExpressibleByArgument {}
