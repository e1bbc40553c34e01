import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import ParleyConfiguration
import ParleyWeb

/// The page's request parsing: a connection's bytes through NIO's HTTP/1
/// decoder (the parser Hummingbird serves the page with), then every rule
/// the page applies to what a request carries (Host, Origin, Cookie, the
/// form body, a pairing code) and the settings overlay a form's values end
/// in. Bad input must be refused, never crash, hang or grow without bound.
enum PageFuzz {
    static func run(_ data: Data) {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        guard (try? channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))) != nil else { return }
        var buffer = channel.allocator.buffer(capacity: data.count)
        buffer.writeBytes(data)
        _ = try? channel.writeInbound(buffer)
        var head: HTTPRequestHead?
        var body = ""
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            switch part {
            case .head(let h):
                head = h
                body = ""
            case .body(var bytes):
                // The page reads at most this much of a form.
                if body.utf8.count < RequestRules.maximumBodyBytes { body += bytes.readString(length: bytes.readableBytes) ?? "" }
            case .end:
                if let head { rules(head, body) }
                head = nil
            }
        }
        // Headers the decoder never finished still reach the rules as text.
        rules(text: String(decoding: data.prefix(RequestRules.maximumBodyBytes), as: UTF8.self))
    }

    static func rules(_ head: HTTPRequestHead, _ body: String) {
        let host = head.headers["host"].first
        _ = RequestRules.hostAllowed(host, machineName: "speaker")
        _ = RequestRules.originAllowed(origin: head.headers["origin"].first, host: host)
        let fields = RequestRules.formFields(body)
        if let token = RequestRules.sessionToken(cookieHeader: head.headers["cookie"].first) {
            _ = RequestRules.formTokenValid(fields?["form_token"], session: token)
        }
        var gate = PairingGate()
        _ = gate.requestCode(from: host ?? "", at: Date(timeIntervalSince1970: 0), random: { 123_456 })
        _ = gate.attempt(fields?["code"] ?? body, from: host ?? "", at: Date(timeIntervalSince1970: 1))
    }

    static func rules(text: String) {
        _ = RequestRules.hostAllowed(text, machineName: "speaker")
        _ = RequestRules.sessionToken(cookieHeader: text)
        _ = RequestRules.formFields(text)
        _ = try? SettingsOverlay.entries(text, file: "fuzz/settings.yaml")
    }
}
