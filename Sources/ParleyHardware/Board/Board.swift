import ParleyDevice
import Foundation

/// A board file: the facts about one board (pins, active levels, timings, LED
/// roles, audio devices, boot configuration), loaded from `board/<name>/board.yaml`.
///
/// Everything a wiring can change lives here and nowhere in code.
public struct Board: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Real GPIO through libgpiod.
        case gpio
        /// No GPIO: presses are injected, LED states observed (`SimulatedBoard`).
        case simulated
    }

    public var name: String
    public var description: String
    public var kind: Kind
    /// GPIO chip candidates, tried in order with `gpiod_chip_open_lookup`
    /// (a label such as `pinctrl-rp1`, a name such as `gpiochip4`, a path or a number).
    public var chips: [String]
    public var button: ButtonSettings
    public var muteSwitch: InputLine?
    public var leds: [LED]
    public var ledTiming: LEDTiming
    /// For every device state, the pattern of each LED it names (LEDs not named are off).
    public var states: [DeviceState: [String: LEDPattern]]
    public var audio: Audio
    public var boot: Boot
    /// Named input lines (a door contact, a motion sensor) whose edges start
    /// shortcuts (`input:` triggers, docs/shortcuts.md).
    public var inputs: [NamedInput]
    /// Buttons that step the volume (`volume-buttons:`); nil on boards
    /// with the one button, whose gestures stay as they are.
    public var volumeButtons: VolumeButtons?
    /// Where it was loaded from, for messages.
    public var file: String

    public init(
        name: String, description: String, kind: Kind, chips: [String], button: ButtonSettings,
        muteSwitch: InputLine?, leds: [LED], ledTiming: LEDTiming, states: [DeviceState: [String: LEDPattern]],
        audio: Audio, boot: Boot, inputs: [NamedInput] = [], volumeButtons: VolumeButtons? = nil, file: String
    ) {
        self.name = name
        self.description = description
        self.kind = kind
        self.chips = chips
        self.button = button
        self.muteSwitch = muteSwitch
        self.leds = leds
        self.ledTiming = ledTiming
        self.states = states
        self.audio = audio
        self.boot = boot
        self.inputs = inputs
        self.volumeButtons = volumeButtons
        self.file = file
    }
}

/// The volume buttons: each press steps the volume once (gesture `volume-up`
/// or `volume-down`). A simulated board has no lines; `parley press
/// volume-up` presses them.
public struct VolumeButtons: Equatable, Sendable {
    public var up: InputLine?
    public var down: InputLine?

    public init(up: InputLine?, down: InputLine?) {
        self.up = up
        self.down = down
    }
}

/// Which electrical level means "active" (pressed, switch on, LED lit).
public enum ActiveLevel: String, Sendable, CaseIterable {
    case high
    case low
}

/// The line's internal resistor, set through libgpiod's bias request flags (kernel 5.5+).
public enum Bias: String, Sendable, CaseIterable {
    /// Leave it as the firmware or device tree set it.
    case asIs = "as-is"
    case disable
    case pullUp = "pull-up"
    case pullDown = "pull-down"
}

/// An input line (the button, the mute switch).
public struct InputLine: Equatable, Sendable {
    public var line: UInt32
    public var active: ActiveLevel
    public var bias: Bias
    /// Edges within this time after an accepted edge are bounce.
    public var debounceMilliseconds: Int

    public init(line: UInt32, active: ActiveLevel, bias: Bias, debounceMilliseconds: Int) {
        self.line = line
        self.active = active
        self.bias = bias
        self.debounceMilliseconds = debounceMilliseconds
    }
}

/// An input line named in the board file's `inputs:` section.
public struct NamedInput: Equatable, Sendable {
    public var name: String
    /// The line; a simulated board's inputs may have none (they are toggled
    /// by `parley chat`'s `:input NAME` and `SimulatedBoard.setInput`).
    public var line: InputLine?

    public init(name: String, line: InputLine?) {
        self.name = name
        self.line = line
    }
}

/// What a short press means when nothing is going on.
public enum IdleButtonAction: String, Sendable, CaseIterable {
    /// Start listening, as the wake word would.
    case pushToTalk = "push-to-talk"
    /// Offer the usual action for this time of day (docs/spec.md §7).
    case suggestion
}

/// What a double press does.
public enum DoublePressAction: Equatable, Sendable {
    case none
    /// Say the last line again.
    case repeatLast
    /// "What can I say?"
    case listShortcuts
    /// Run the shortcut with this name.
    case runShortcut(String)

    /// Board-file spelling: `none`, `repeat`, `what-can-i-say`, `shortcut:<name>`.
    public init?(boardValue: String) {
        switch boardValue {
        case "none": self = .none
        case "repeat": self = .repeatLast
        case "what-can-i-say": self = .listShortcuts
        default:
            guard boardValue.hasPrefix("shortcut:") else { return nil }
            let name = boardValue.dropFirst("shortcut:".count).trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            self = .runShortcut(name)
        }
    }

    static let boardSpellings = "none, repeat, what-can-i-say or shortcut:<name>"
}

/// The confirm button: its line and how gestures are told apart.
public struct ButtonSettings: Equatable, Sendable {
    /// The line; a simulated board has none.
    public var input: InputLine?
    public var timings: GestureTimings
    public var whenIdle: IdleButtonAction
    public var doublePress: DoublePressAction

    public init(input: InputLine?, timings: GestureTimings, whenIdle: IdleButtonAction, doublePress: DoublePressAction) {
        self.input = input
        self.timings = timings
        self.whenIdle = whenIdle
        self.doublePress = doublePress
    }

    /// What `gesture` means in `context` (docs/spec.md §5 and §10).
    public func action(for gesture: ButtonGesture, in context: ButtonContext) -> ButtonAction {
        switch (gesture, context) {
        case (.longPress, _): return .cancel
        case (.press, .awaitingConfirmation): return .confirm
        case (.press, .idle): return whenIdle == .pushToTalk ? .pushToTalk : .suggestion
        case (.press, .busy): return .none
        case (.doublePress, .awaitingConfirmation): return .confirm
        case (.doublePress, _): return doublePress == .none ? .none : .doublePress(doublePress)
        // The volume buttons' own gestures: the confirm button never makes them.
        case (.volumeUp, _), (.volumeDown, _): return .none
        }
    }
}

/// Timings of the gesture recogniser.
public struct GestureTimings: Equatable, Sendable {
    public var debounceMilliseconds: Int
    public var longPressMilliseconds: Int
    /// Longest gap between the first release and the second press; 0 turns
    /// double press off, so a short press is reported at once on release.
    public var doublePressWindowMilliseconds: Int

    public init(debounceMilliseconds: Int = 20, longPressMilliseconds: Int = 800, doublePressWindowMilliseconds: Int = 350) {
        self.debounceMilliseconds = debounceMilliseconds
        self.longPressMilliseconds = longPressMilliseconds
        self.doublePressWindowMilliseconds = doublePressWindowMilliseconds
    }
}

/// One LED: a name the states refer to, and its line.
public struct LED: Equatable, Sendable {
    public var name: String
    /// The line; a simulated board has none.
    public var line: UInt32?
    public var active: ActiveLevel

    public init(name: String, line: UInt32?, active: ActiveLevel) {
        self.name = name
        self.line = line
        self.active = active
    }
}

/// How an LED shows a state.
public enum LEDPattern: String, Sendable, CaseIterable {
    case off
    case on
    /// Half a period on, half off.
    case blink
    /// A slow breath: software PWM when `pwm-hz` is set, otherwise an on/off heartbeat cadence.
    case pulse
    /// On for `flash-ms`, then back to what the LED showed before.
    case flash
}

/// Periods of the LED patterns.
public struct LEDTiming: Equatable, Sendable {
    /// One full blink (on plus off).
    public var blinkMilliseconds: Int
    /// One full breath of `pulse`.
    public var pulseMilliseconds: Int
    /// Software PWM frame rate for `pulse`; 0 shows pulse as an on/off heartbeat instead.
    public var pwmHertz: Int
    /// How long a flash (and a transient state such as success) lasts.
    public var flashMilliseconds: Int

    public init(blinkMilliseconds: Int = 500, pulseMilliseconds: Int = 1600, pwmHertz: Int = 0, flashMilliseconds: Int = 600) {
        self.blinkMilliseconds = blinkMilliseconds
        self.pulseMilliseconds = pulseMilliseconds
        self.pwmHertz = pwmHertz
        self.flashMilliseconds = flashMilliseconds
    }
}

/// ALSA device names for ParleyAudio.
public struct Audio: Equatable, Sendable {
    public var capture: String
    public var playback: String
    /// The playback volume control the level drives (`amixer scontrols`
    /// names it, e.g. "PCM", "Speaker"); nil: Parley scales its own samples.
    public var mixerControl: String?
    /// The card that control is on (`hw:0`, `hw:CARD=Device`); by default
    /// the card of the playback device.
    public var mixerCard: String?

    public init(capture: String, playback: String, mixerControl: String? = nil, mixerCard: String? = nil) {
        self.capture = capture
        self.playback = playback
        self.mixerControl = mixerControl
        self.mixerCard = mixerCard
    }

    /// The mixer's card: `mixer-card`, else the card of the playback device
    /// ("plughw:CARD=Device,DEV=0" -> "hw:CARD=Device", "hw:1,0" -> "hw:1"),
    /// else "default".
    public var resolvedMixerCard: String {
        if let mixerCard { return mixerCard }
        guard let colon = playback.firstIndex(of: ":"), playback.hasPrefix("hw:") || playback.hasPrefix("plughw:") else {
            return "default"
        }
        let first = playback[playback.index(after: colon)...].split(separator: ",").first.map(String.init) ?? ""
        return first.isEmpty ? "default" : "hw:\(first)"
    }
}

/// Boot configuration the image builder writes.
public struct Boot: Equatable, Sendable {
    /// Lines for /boot/firmware/config.txt (dtparam, dtoverlay, gpio=...).
    public var configTxt: [String]
    /// Debian packages the board needs beyond the base image (e.g. a sound-card driver).
    public var packages: [String]

    public init(configTxt: [String] = [], packages: [String] = []) {
        self.configTxt = configTxt
        self.packages = packages
    }
}
