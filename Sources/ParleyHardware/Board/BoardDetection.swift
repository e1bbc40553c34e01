import Foundation

extension Board {
    /// Where the device tree gives the board's model ("Raspberry Pi 4 Model B Rev 1.4").
    public static let deviceTreeModelPath = "/proc/device-tree/model"

    /// The model string of this machine, or nil when it has no device tree (a PC, CI).
    public static func machineModel(path: String = deviceTreeModelPath) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        // The device tree string ends in a NUL.
        let text = String(decoding: data.prefix { $0 != 0 }, as: UTF8.self)
        return text.isEmpty ? nil : text
    }

    /// The board folder for a device-tree model, for first boot when no board is
    /// configured: the Pi reference wirings by model, `sim` for anything else.
    /// A HAT (respeaker-2mic) cannot be told from the model and is chosen in the configuration.
    public static func suggestedName(forModel model: String?) -> String {
        guard let model else { return "sim" }
        if model.hasPrefix("Raspberry Pi 5") { return "pi5" }
        if model.hasPrefix("Raspberry Pi 4") { return "pi4" }
        if model.hasPrefix("Raspberry Pi 3") { return "pi3" }
        return "sim"
    }
}
