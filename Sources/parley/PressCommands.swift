import ArgumentParser

/// `parley press`: a short press (confirm, or the idle suggestion).
struct PressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "press", abstract: "Simulate a short press of the button (confirm).")
    @OptionGroup var options: ControlOptions
    func run() throws { output(options, try options.send(.press(.short)).message ?? "") }
}

/// `parley long-press`: cancel whatever is going on.
struct LongPressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "long-press", abstract: "Simulate a long press of the button (cancel).")
    @OptionGroup var options: ControlOptions
    func run() throws { output(options, try options.send(.press(.long)).message ?? "") }
}

/// `parley double-press`: the board's configured double-press action.
struct DoublePressCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "double-press", abstract: "Simulate a double press of the button.")
    @OptionGroup var options: ControlOptions
    func run() throws { output(options, try options.send(.press(.double)).message ?? "") }
}
