import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import ParleyControl
import ParleyDaemon
import ParleyTestKit
import Testing

@testable import ParleyWeb

/// Settings' "Software update" (issue 52, item 4): a paired browser's
/// bundle streamed to the state directory under the page's rules, then
/// installed with RAUC (ParleyTestKit's FakeRauc).
@Suite struct WebUpdateTests {
    typealias Fixture = WebPageTests.Fixture
    static let boundary = "----parleyTestBoundary7MA4YWxkTrZu0gW"

    static func body(token: String?, file: [UInt8], filename: String = "parley-qemu.raucb") -> ByteBuffer {
        var text = ""
        if let token { text += "--\(boundary)\r\nContent-Disposition: form-data; name=\"form_token\"\r\n\r\n\(token)\r\n" }
        text += "--\(boundary)\r\nContent-Disposition: form-data; name=\"bundle\"; filename=\"\(filename)\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
        var buffer = ByteBuffer(string: text)
        buffer.writeBytes(file)
        buffer.writeString("\r\n--\(boundary)--\r\n")
        return buffer
    }

    static func upload(_ client: some TestClientProtocol, headers: HTTPFields, token: String?, file: [UInt8]) async throws -> TestResponse {
        var headers = headers
        headers[.contentType] = "multipart/form-data; boundary=\(boundary)"
        return try await client.execute(uri: "/settings/update", method: .post, headers: headers,
                                        body: body(token: token.map(RequestRules.formToken(forSession:)), file: file))
    }

    /// The page of the fixture with an updater over the fake rauc.
    static func page(_ fixture: Fixture, _ fake: FakeRauc, maxUploadBytes: Int = 1 << 20) -> (WebPage, Updater) {
        let updater = Updater(rauc: Rauc(path: fake.path), reboot: [fake.rebootPath], stateDirectory: fixture.directory.path,
                              logger: Logger(label: "test"))
        let sink = fixture.sink
        let page = WebPage(handler: fixture.page.handler, webDirectory: fixture.directory.appendingPathComponent("web"),
                           configFile: fixture.configFile.path, machineName: "speaker", announce: { await sink.emit(.spoke($0)) },
                           logger: Logger(label: "test"), updater: updater, maxUploadBytes: maxUploadBytes)
        return (page, updater)
    }

    /// Bytes that hold the boundary's start and CRLFs, as a real bundle may.
    static let bundleBytes: [UInt8] = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 7) }
        + Array("\r\n------parleyTest\r\n--".utf8) + [13, 10]

    @Test func theReaderGivesTheSameFieldsAndFileHoweverTheBodyIsCut() throws {
        let whole = Array(Self.body(token: "abc123", file: Self.bundleBytes).readableBytesView)
        for size in [1, 2, 7, 39, 40, 41, 1_000, 65_536, whole.count] {
            var reader = try #require(MultipartReader(contentType: "multipart/form-data; boundary=\"\(Self.boundary)\""))
            var fields: [String: String] = [:], file: [UInt8] = [], starts: [String] = [], ends = 0
            var at = 0
            while at < whole.count {
                for event in try reader.feed(whole[at..<min(whole.count, at + size)]) {
                    switch event {
                    case .field(let name, let value): fields[name] = value
                    case .fileStart(let name, let filename): starts.append("\(name) \(filename)")
                    case .fileData(let bytes): file += bytes
                    case .fileEnd: ends += 1
                    }
                }
                at += size
            }
            #expect(reader.finished, "chunks of \(size)")
            #expect(fields == ["form_token": "abc123"] && starts == ["bundle parley-qemu.raucb"] && ends == 1, "chunks of \(size)")
            #expect(file == Self.bundleBytes, "chunks of \(size)")
        }
    }

    @Test func theReaderRefusesWhatIsNotMultipart() throws {
        #expect(MultipartReader(contentType: "application/x-www-form-urlencoded") == nil)
        #expect(MultipartReader(contentType: "multipart/form-data") == nil)
        var reader = try #require(MultipartReader(contentType: "multipart/form-data; boundary=b"))
        #expect(throws: MultipartReader.Malformed.self) { try reader.feed(Array("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--".utf8)) }
        var long = try #require(MultipartReader(contentType: "multipart/form-data; boundary=b"))
        let field = "--b\r\nContent-Disposition: form-data; name=\"form_token\"\r\n\r\n" + String(repeating: "x", count: 5_000)
        #expect(throws: MultipartReader.Malformed.self) { try long.feed(Array(field.utf8)) }
    }

    @Test func aPairedBrowsersBundleIsStreamedToTheStateDirectoryAndInstalled() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        let fake = try FakeRauc(status: "status-as-built")
        try fake.afterInstall("status-b-installed")
        fake.hold()
        defer { fake.release() }
        let (page, updater) = Self.page(fixture, fake)
        let target = fixture.directory.appendingPathComponent("update/upload.raucb").path
        try await Application(router: page.router()).test(.router) { client in
            let (headers, token) = try await WebPageTests.pairedForm(client, fixture)
            let settings = String(buffer: try await client.execute(uri: "/settings", method: .get, headers: [.cookie: headers[.cookie]!]).body)
            #expect(settings.contains("<h2>Software update</h2>") && settings.contains("Slots: A (booted, good), B (bad)."), "\(settings)")
            #expect(settings.contains("enctype=\"multipart/form-data\"") && settings.contains(RequestRules.formToken(forSession: token)))

            let response = try await Self.upload(client, headers: headers, token: token, file: Self.bundleBytes)
            #expect(response.status == .ok)
            #expect(String(buffer: response.body).contains("Received parley-qemu.raucb (68 KiB). Installing it now"))
            try await Poll.until("rauc install was asked") { fake.installs == [target] }
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: target))) == Self.bundleBytes, "the bundle as sent")
            let busy = try await Self.upload(client, headers: headers, token: token, file: [1, 2, 3])
            #expect(busy.status == .conflict && String(buffer: busy.body).contains("is being installed"))
            fake.release()
            try await Poll.until("the restart after the install") { fake.reboots == 1 }
            try await Poll.until("the uploaded bundle removed") { !FileManager.default.fileExists(atPath: target) }
            #expect(updater.lastOutcome == "Installed upload.raucb (version 0.1.1+3f9c2e1a) into slot B; restarting.")
        }
    }

    @Test func anUploadWithoutThePagesRulesOrTooLargeWritesNothing() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        let fake = try FakeRauc(status: "status-as-built")
        let (page, _) = Self.page(fixture, fake, maxUploadBytes: 4_096)
        let folder = fixture.directory.appendingPathComponent("update").path
        try await Application(router: page.router()).test(.router) { client in
            let (headers, token) = try await WebPageTests.pairedForm(client, fixture)
            #expect(try await Self.upload(client, headers: headers, token: nil, file: [1, 2, 3]).status == .forbidden, "no form token")
            var foreign = headers
            foreign[.origin] = "http://evil.example"
            #expect(try await Self.upload(client, headers: foreign, token: token, file: [1, 2, 3]).status == .forbidden, "another origin")
            var unpaired = headers
            unpaired[.cookie] = nil
            #expect(try await Self.upload(client, headers: unpaired, token: token, file: [1, 2, 3]).status == .forbidden, "unpaired")
            let large = try await Self.upload(client, headers: headers, token: token, file: [UInt8](repeating: 7, count: 5_000))
            #expect(large.status == .contentTooLarge && String(buffer: large.body).contains("at most 4 KiB"))
            #expect(String(buffer: large.body).contains("update.max_upload_mib"))
            let left = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            #expect(left.isEmpty, "\(left)")
            #expect(fake.installs.isEmpty)
        }
    }
}
