import ArgumentParser
import Foundation
import ParleyControl

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show what the daemon is doing: state, LEDs, audio, recognitions, last intents.")

    @OptionGroup var options: ControlOptions

    func run() throws {
        guard let s = try options.send(.status).status else { return }
        output(options, Self.format(s))
    }

    static func format(_ s: DaemonStatus) -> String {
        var lines = [
            "parleyd \(s.version), pid \(s.pid), up \(formatUptime(s.uptimeSeconds))",
            "state:        \(s.state)",
            "board:        \(s.board)",
            "leds:         \(s.led ?? "not wired")",
        ]
        if let problem = s.buttonProblem {
            // Next to the LEDs: it explains why confirmations are refused aloud.
            lines.append("button:       not working (\(problem))")
        }
        lines += [
            "audio:        \(s.audio.state), capture \(s.audio.capture), playback \(s.audio.playback), \(s.audio.overruns) overruns"
                + (s.audio.speaking == true && !s.audio.state.contains("speaking") ? ", speaking" : ""),
            "recognitions: \(s.recognitions)",
            "grammar:      \(s.grammarSize) phrases",
            "last intents: \(s.lastIntents.isEmpty ? "none" : s.lastIntents.joined(separator: ", "))",
            "stored:       \(s.donations) donations, \(s.customPhrases) custom phrases in \(s.stateDirectory)",
            "config:       \(s.configFile ?? "defaults")",
        ]
        if let kept = s.keptRecordings {
            let transform = s.roomTransform.map { "room transform of \($0.formatted(date: .abbreviated, time: .shortened))" } ?? "no room transform"
            lines.append("adaptation:   \(kept) kept recordings (keeping \(s.keepAudio == true ? "on" : "off")), \(transform)")
        }
        if let slots = s.slots, !slots.isEmpty { lines.append("slots:        \(SlotSummary.line(slots))") }
        if let frontEnd = s.frontEnd { lines.append("front end:    \(frontEnd)") }
        if let link = s.homeAssistant { lines.append("home assistant: \(link)") }
        if let handler = s.homeAssistantHandler { lines.append("home assistant: \(handler)") }
        if let problem = s.audio.problem { lines.insert("microphone:   \(problem)", at: 4) }
        if !s.notWired.isEmpty { lines.append("not wired:    \(s.notWired.joined(separator: ", "))") }
        return lines.joined(separator: "\n")
    }

    static func formatUptime(_ seconds: Double) -> String {
        let total = Int(seconds)
        let (h, m, sec) = (total / 3600, total / 60 % 60, total % 60)
        return h > 0 ? "\(h)h \(m)m" : m > 0 ? "\(m)m \(sec)s" : "\(sec)s"
    }
}
