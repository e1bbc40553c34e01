import Foundation
import ParleyTestKit
import Testing

/// `parley chat --shortcuts DIR` through the real executable: a folder with
/// a good and a bad file, a phrase, an input line, a time trigger, a button
/// trigger and cancel in the middle.
@Suite struct ShortcutChatTests {
    @Test func aShortcutFolderAtTheConsole() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("chat-shortcuts-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func write(_ name: String, _ text: String) throws { try Data(text.utf8).write(to: dir.appendingPathComponent(name)) }
        try write("lunch.yaml", """
            name: Lunch
            phrases: [lunch time]
            triggers: [{input: door}]
            actions:
              - run: SoupChef.OrderSoup
                with: { soup: ask, quantity: 2, orderType: pickup, store: lewis }
                as: order
              - speak: "Total {order.total}."
            """)
        try write("noon.yaml", "name: Noon\ntriggers: [{time: \"12:00\"}]\nactions: [{speak: It is noon.}]\n")
        try write("double.yaml", "name: Double\ntriggers: [{button: double-press}]\nactions: [{speak: Double pressed.}]\n")
        try write("bad.yaml", "name: Bad\nactions: [{shout: x}]\n")
        let outcome = try await ChatConsoleTests().chat([
            "lunch time", "tomato", ":press",
            ":input door", "cancel",
            ":double-press",
            ":wait 86400",
        ], arguments: ["--primary-app", "none", "--no-tips", "--shortcuts", dir.path])
        #expect(outcome.status == 0)
        #expect(outcome.stdout.filter { $0.hasPrefix("device: ") } == [
            "device: Which soup? Clam chowder, tomato or chicken noodle?",
            "device: Two tomato soups for pickup from Lewis Avenue, six dollars fifty. Press the button to order, or say cancel.",
            "device: Ordered. Your two tomato soups will be ready at Lewis Avenue in twelve minutes, total six dollars fifty.",
            "device: Total 6.50.",
            "device: Which soup? Clam chowder, tomato or chicken noodle?",
            "device: Cancelled.",
            "device: Stopped Lunch. Nothing was done.",
            "device: Double pressed.",
            "device: It is noon.",
        ])
        #expect(outcome.stdout.filter { $0.hasPrefix("performed: ") }
            == ["performed: SoupChef.OrderSoup {\"orderType\":\"pickup\",\"quantity\":\"2\",\"soup\":\"tomato\",\"store\":\"lewis\"}"])
        #expect(outcome.stderr.contains("\(dir.path)/bad.yaml:2:12: unknown action 'shout'"))
    }
}
