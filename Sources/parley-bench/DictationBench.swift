import ArgumentParser
import Foundation
import ParleySpeech

/// `parley-bench dictation`: open-text answers (the daemon's `DictationDecoder`)
/// on the recorded coffee orders, fed in 100 ms blocks as the daemon does:
/// load time, real-time factor (an RTF below 1 means a decoder fed in real
/// time keeps up, and only the last block is left at the end), and how many
/// of each recording's labelled slot words appear in the transcript.
struct DictationBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dictation", abstract: "Free dictation (open-text answers): speed and slot-word recall on the coffee recordings.")

    @Option(help: "Only the first N recordings.")
    var limit: Int = 40

    func run() throws {
        var set = try LabelledSet.load(labels: sharedData("coffee-maker/labels.json"), folder: sharedData("coffee-maker/clean"))
        set.items = Array(set.items.prefix(max(1, limit)))
        let loadStart = DispatchTime.now().uptimeNanoseconds
        let decoder = try DictationDecoder()
        let loadMs = Double(DispatchTime.now().uptimeNanoseconds - loadStart) / 1e6
        var audioSeconds = 0.0, busySeconds = 0.0
        var slotWords = 0, foundWords = 0
        for item in set.items {
            let audio = try PCMAudio.read(item.file)
            let start = DispatchTime.now().uptimeNanoseconds
            decoder.begin()
            var offset = 0
            while offset < audio.samples.count {
                let end = min(audio.samples.count, offset + 1_600)
                decoder.feed(Array(audio.samples[offset..<end]))
                offset = end
            }
            let transcript = try decoder.finish()
            audioSeconds += audio.seconds
            busySeconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let heard = Set(transcript.split(separator: " ").map(String.init))
            for value in item.slots.values {
                for word in value.split(separator: " ").map(String.init) {
                    slotWords += 1
                    if heard.contains(word) { foundWords += 1 }
                }
            }
        }
        print(String(format: "dictation over %d recordings (%.0f s of audio): load %.0f ms, RTF %.3f, "
                     + "slot words in the transcript %d/%d (%.1f%%), peak memory %.0f MiB",
                     set.items.count, audioSeconds, loadMs, busySeconds / audioSeconds, foundWords, slotWords,
                     100 * Double(foundWords) / Double(max(1, slotWords)), peakMemoryMiB() ?? 0))
    }
}
