import Foundation
import ParleyTestKit
import Testing

/// `parley understand` and `parley detect-wake` through the real executable:
/// the JSON-lines contracts other tools rely on.
@Suite(.serialized) struct SpeechCommandsTests {
    func run(_ arguments: [String]) async throws -> (status: Int32, lines: [[String: Any]], stderr: String) {
        let exit = try await ChildProcess.run(try ChatConsoleTests.executable().path, arguments)
        let lines = try exit.standardOutput.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        return (exit.status, lines, exit.standardError)
    }

    @Test func understandPrintsOneJSONObjectPerFile() async throws {
        let file = try Fixtures.coffeeRecording("0075d273-51bb-47cb-b323-4437bd0de029.wav").path
        let outcome = try await run(["understand", "--app", "coffee-maker", file])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let line = try #require(outcome.lines.first)
        #expect(outcome.lines.count == 1)
        #expect(line["file"] as? String == file)
        #expect(line["intent"] as? String == "orderDrink")
        #expect(line["slots"] as? [String: String] == ["coffeeDrink": "coffee", "roast": "light roast", "size": "twelve ounce"])
        #expect((line["transcript"] as? String)?.contains("twelve ounce") == true)
        #expect(((line["audio_seconds"] as? Double) ?? 0) > 1)
        #expect(line["decode_seconds"] is Double)
        #expect(line["accepted"] as? Bool == true)
        #expect(((line["confidence"] as? Double) ?? -10) >= -1)
        #expect(line["builtin"] is NSNull)
    }

    @Test func understandMeasuringRejectionWhileSpokenPrintsItsLooks() async throws {
        let file = try Fixtures.coffeeRecording("0075d273-51bb-47cb-b323-4437bd0de029.wav").path
        let outcome = try await run(["understand", "--app", "coffee-maker", "--reject-early", "measure", file])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let line = try #require(outcome.lines.first)
        // Measuring gives nothing up: the order is understood as without it.
        #expect(line["intent"] as? String == "orderDrink")
        let looks = try #require(line["looks"] as? [[Double]])
        #expect(!looks.isEmpty, "a recording over a second long is looked at")
        #expect(looks.allSatisfy { $0.count == 2 && $0[0] >= 0.75 }, "[seconds fed, margin], from 750 ms: \(looks)")
        #expect(zip(looks, looks.dropFirst()).allSatisfy { $1[0] > $0[0] }, "in the order they were taken")
        let segments = try #require(line["segment_looks"] as? [[[Double]]])
        #expect(segments.last == looks, "the last segment's looks are the result's")
        let plain = try await run(["understand", "--app", "coffee-maker", file])
        #expect((plain.lines.first?["looks"] as? [[Double]])?.isEmpty == true, "off by default, as in the daemon")
    }

    @Test func understandWithAnotherAppFindsNoCoffeeOrder() async throws {
        let file = try Fixtures.coffeeRecording("0075d273-51bb-47cb-b323-4437bd0de029.wav").path
        let outcome = try await run(["understand", "--app", "soup-chef", file])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.lines.first?["intent"] as? String != "orderDrink")
    }

    @Test func understandNamesABadFileAndAnUnknownApp() async throws {
        let bad = try await run(["understand", "--app", "coffee-maker", "/nonexistent/x.wav"])
        #expect(bad.status != 0 && bad.stderr.contains("/nonexistent/x.wav"))
        let app = try await run(["understand", "--app", "espresso-robot", "x.wav"])
        #expect(app.status != 0 && app.stderr.contains("espresso-robot"))
    }

    @Test func detectWakeReportsTheWakeWordTime() async throws {
        let files = try Fixtures.wavFiles(in: Fixtures.wakeComputer, atLeast: 3).prefix(3).map(\.path)
        let outcome = try await run(["detect-wake", "--wake", "computer", "--sensitivity", "0.7"] + files)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.lines.map { $0["file"] as? String } == files)
        let found = outcome.lines.filter { (($0["detections"] as? [Double]) ?? []).contains { $0 > 0 } }
        #expect(found.count >= 2)
        let range = try await run(["detect-wake", "--wake", "computer", "--sensitivity", "3", files[0]])
        #expect(range.status != 0 && range.stderr.contains("--sensitivity"))
    }

    /// The speech_embedding head is the default detector, as the daemon's; the
    /// keyword network and PocketSphinx's are there by name; a name with no
    /// head, or no such detector, is refused by name.
    @Test func detectWakeChoosesItsDetector() async throws {
        let files = try Fixtures.wavFiles(in: Fixtures.wakeComputer, atLeast: 3).prefix(3).map(\.path)
        let embedding = try await run(["detect-wake", "--wake", "computer", "--detector", "embedding"] + files)
        let plain = try await run(["detect-wake", "--wake", "hey computer"] + files)
        #expect(embedding.status == 0 && plain.status == 0, "\(embedding.stderr)\(plain.stderr)")
        #expect(embedding.lines.map { $0["detections"] as? [Double] } == plain.lines.map { $0["detections"] as? [Double] })
        #expect(embedding.lines.filter { (($0["detections"] as? [Double]) ?? []).count == 1 }.count == 3)
        #expect(embedding.lines.allSatisfy { ($0["peak"] as? Double).map { $0 > 0 } ?? false }, "a peak per file, above 0 on the word")
        let network = try await run(["detect-wake", "--wake", "computer", "--detector", "network"] + files)
        #expect(network.status == 0, "\(network.stderr)")
        #expect(network.lines.filter { (($0["detections"] as? [Double]) ?? []).count == 1 }.count == 3)
        let sphinx = try await run(["detect-wake", "--wake", "computer", "--detector", "pocketsphinx"] + files)
        #expect(sphinx.status == 0 && sphinx.lines.count == 3, "\(sphinx.stderr)")
        let unknownName = try await run(["detect-wake", "--wake", "jarvis", files[0]])
        #expect(unknownName.status != 0 && unknownName.stderr.contains("no speech_embedding head for \"jarvis\""))
        let noNetwork = try await run(["detect-wake", "--wake", "jarvis", "--detector", "network", files[0]])
        #expect(noNetwork.status != 0 && noNetwork.stderr.contains("no keyword network for \"jarvis\""))
        let bad = try await run(["detect-wake", "--wake", "computer", "--detector", "porcupine", files[0]])
        #expect(bad.status != 0 && bad.stderr.contains("--detector porcupine"))
    }

    /// `--front-end`: `none` is the detector alone; `denoise` runs the
    /// capture front end first and still finds the wake word in clean
    /// recordings; a bad value is named with what is expected.
    @Test func detectWakeRunsTheFrontEndFirst() async throws {
        let files = try Fixtures.wavFiles(in: Fixtures.wakeComputer, atLeast: 3).prefix(3).map(\.path)
        let plain = try await run(["detect-wake", "--wake", "computer"] + files)
        let none = try await run(["detect-wake", "--wake", "computer", "--front-end", "none"] + files)
        #expect(plain.status == 0 && none.status == 0, "\(plain.stderr)\(none.stderr)")
        #expect(none.lines.map { $0["detections"] as? [Double] } == plain.lines.map { $0["detections"] as? [Double] })
        let denoised = try await run(["detect-wake", "--wake", "computer", "--front-end", "denoise"] + files)
        #expect(denoised.status == 0, "\(denoised.stderr)")
        #expect(denoised.lines.map { $0["file"] as? String } == files)
        #expect(denoised.lines.filter { !(($0["detections"] as? [Double]) ?? []).isEmpty }.count >= 2)
        let bad = try await run(["detect-wake", "--wake", "computer", "--front-end", "loud", files[0]])
        #expect(bad.status != 0 && bad.stderr.contains("--front-end loud") && bad.stderr.contains("denoise+agc"))
    }
}
