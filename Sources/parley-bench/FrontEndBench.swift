import ArgumentParser
import Foundation
import ParleyAudio

/// `parley-bench audio front-end`: the capture front end (and the echo
/// canceller, `--echo`) alone on a recording looped to `--seconds` of
/// audio, in 10 ms frames as the listen thread runs it. Run under callgrind at two lengths (training/bin/cost-front-end.sh):
/// the difference of the totals over the difference of the lengths is what
/// one second of audio costs, start-up cancelled.
struct FrontEndCost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "front-end", abstract: "Run the capture front end over a looped recording (for instruction counts).")

    @Option(help: "none, denoise or denoise+agc, optionally :dB (as speech.front_end).") var frontEnd = "denoise+agc"
    @Option(help: "Echo canceller before it: off, on or linear, optionally :tail ms (as speech.echo_cancel); the recording is its reference, and the microphone the recording 3 ms later at half level.")
    var echo = "off"
    @Option(help: "Seconds of audio to process.") var seconds = 10
    @Argument(help: "16 kHz mono WAV looped as input.") var file: String

    func run() throws {
        let settings: FrontEndSettings, echoSettings: EchoSettings
        do { settings = try FrontEndSettings(parsing: frontEnd) } catch { throw ValidationError("--front-end \(frontEnd): \(error)") }
        do { echoSettings = try EchoSettings(parsing: echo) } catch { throw ValidationError("--echo \(echo): \(error)") }
        guard seconds > 0 else { throw ValidationError("--seconds \(seconds): expected a positive whole number") }
        let recording = try WAVFile.read(URL(fileURLWithPath: file)).samples
        guard recording.count >= FrontEnd.frameSamples else { throw ValidationError("\(file): shorter than one 10 ms frame") }
        let total = seconds * FrontEnd.sampleRate
        let reference = (0..<total).map { recording[$0 % recording.count] }
        var audio = (0..<total).map { $0 >= 48 ? reference[$0 - 48] / 2 : 0 }
        let stage = try FrontEnd(settings)
        let canceller = try EchoCanceller(echoSettings)
        guard stage != nil || canceller != nil else { print("front end none, echo off: nothing runs"); return }
        audio.withUnsafeMutableBufferPointer { buffer in
            reference.withUnsafeBufferPointer { played in
                var offset = 0
                while offset + FrontEnd.frameSamples <= buffer.count {
                    let frame = UnsafeMutableBufferPointer(rebasing: buffer[offset..<offset + FrontEnd.frameSamples])
                    canceller?.process(frame, reference: UnsafeBufferPointer(rebasing: played[offset..<offset + FrontEnd.frameSamples]))
                    stage?.process(frame)
                    offset += FrontEnd.frameSamples
                }
            }
        }
        // Printed so the work cannot be optimised away.
        print("front end \(settings), echo \(echoSettings): \(stage?.frames ?? canceller?.frames ?? 0) frames, checksum \(audio.reduce(0) { $0 &+ Int($1) })")
    }
}
