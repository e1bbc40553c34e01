import ArgumentParser
import Foundation
import ParleyCore
import ParleySpeech

/// The daemon's streaming command decoder against the buffered
/// `CommandRecognizer` on the coffee-maker recordings: acceptance of each
/// (and how many results differ), false acceptance against the soup grammar,
/// and the time left after the last sample (streaming: ps_end_utt and
/// scoring; buffered: the whole decode, both passes).
struct SpeechStreaming: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speech-streaming", abstract: "Streaming vs buffered command decoding: acceptance and time after the last sample.")

    @Option(name: .customLong("snr"), parsing: .upToNextOption, help: "SNRs in dB; 'clean' for no noise.")
    var snrs: [String] = ["clean"]
    @Option(help: "Samples per fed chunk (1600 = 100 ms, as the daemon reads the ring).")
    var chunk: Int = 1_600
    @Option(help: "Only the first N recordings.")
    var limit: Int?
    @Flag(help: "Print each recording whose results differ.")
    var verbose = false

    func run() throws {
        guard chunk > 0 else { throw ValidationError("--chunk \(chunk): expected a positive number of samples") }
        var set = try LabelledSet.load(labels: sharedData("coffee-maker/labels.json"), folder: sharedData("coffee-maker/clean"))
        if let limit { set.items = Array(set.items.prefix(limit)) }
        let noise = try PCMAudio.read(sharedData("noise/kitchen.wav"))
        for falseAcceptance in [false, true] {
            let model = falseAcceptance ? BenchGrammars.soup : try RhinoContext.load(sharedData("coffee-maker/grammar.yaml"), app: "Coffee Maker")
            let buffered = try CommandRecognizer(model: model)
            let streaming = try StreamingCommandDecoder(model: model)
            // Its own instance: once a decoder was fed in blocks, PocketSphinx keeps it on live (prior) CMN.
            let parallel = try StreamingCommandDecoder(model: model)
            for snr in falseAcceptance ? ["clean"] : snrs {
                let level = snr == "clean" ? nil : Double(snr)
                if snr != "clean" && level == nil { throw ValidationError("--snr \(snr): expected a number or 'clean'") }
                var okBuffered = 0, okStreaming = 0, differ = 0, differParallel = 0
                var tailBuffered: [Double] = [], tailStreaming: [Double] = [], tailParallel: [Double] = []
                for (index, item) in set.items.enumerated() {
                    var audio = try PCMAudio.read(item.file)
                    if let level { audio = audio.mixed(with: noise, snr: level, seed: UInt64(index) &+ 0x5EED) }
                    var t = DispatchTime.now().uptimeNanoseconds
                    let a = try buffered.recognize(audio.samples)
                    tailBuffered.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
                    t = DispatchTime.now().uptimeNanoseconds
                    let c = try parallel.recognize(audio.samples)
                    tailParallel.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
                    if c != a { differParallel += 1 }
                    streaming.begin()
                    var offset = 0
                    while offset < audio.samples.count {
                        let end = min(offset + chunk, audio.samples.count)
                        if end == audio.samples.count {
                            // As in real time (decoding is faster than speech): all but the last chunk is decoded.
                            try streaming.waitUntilFed()
                            t = DispatchTime.now().uptimeNanoseconds
                        }
                        streaming.feed(Array(audio.samples[offset..<end]))
                        offset = end
                    }
                    let b = try streaming.finish()
                    tailStreaming.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
                    func ok(_ r: CommandResult) -> Bool {
                        falseAcceptance ? r.match == nil : isUnderstood(intent: item.intent, slots: item.slots, result: r.match)
                    }
                    if ok(a) { okBuffered += 1 }
                    if ok(b) { okStreaming += 1 }
                    if a.match != b.match || a.transcript != b.transcript {
                        differ += 1
                        if verbose {
                            emit(String(format: "  %@: buffered \"%@\" %.3f %@ | streaming \"%@\" %.3f %@", item.file.lastPathComponent,
                                        a.transcript, a.confidence, ok(a) ? "ok" : "fail", b.transcript, b.confidence, ok(b) ? "ok" : "fail"))
                        }
                    }
                }
                let label = falseAcceptance ? "soup false-accept" : "snr=\(snr) accuracy"
                let n = Double(set.items.count)
                func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
                emit(String(format: "%@ buffered=%.1f%% streaming=%.1f%% differing=%d/%d tail-ms median buffered=%.0f streaming=%.0f; parallel-buffered differing=%d tail-ms median=%.0f",
                            label, (falseAcceptance ? n - Double(okBuffered) : Double(okBuffered)) / n * 100,
                            (falseAcceptance ? n - Double(okStreaming) : Double(okStreaming)) / n * 100, differ, set.items.count,
                            median(tailBuffered), median(tailStreaming), differParallel, median(tailParallel)))
            }
        }
    }
}
