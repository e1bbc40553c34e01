import Foundation

/// A stand-in for RAUC's `rauc` tool and for `systemctl reboot`: shell
/// scripts in a temporary directory of the test's (never on the product's
/// path), steered by files beside them. `status` prints a fixture of
/// Tests/Fixtures/rauc; `install` records its bundle, may fail with a
/// message or wait for `release()`, then shows the "after" fixture; `info`
/// prints a bundle's version. The daemon finds them through PARLEY_RAUC
/// and PARLEY_REBOOT (`environment`).
public final class FakeRauc: Sendable {
    public let directory: TemporaryDirectory
    public var path: String { directory.file("rauc") }
    public var rebootPath: String { directory.file("reboot") }
    public var environment: [String: String] { ["PARLEY_RAUC": path, "PARLEY_REBOOT": rebootPath] }

    /// `status`: a fixture name ("status-as-built"), or nil for a rauc that cannot tell its status.
    public init(status: String?) throws {
        directory = try TemporaryDirectory()
        try writeExecutable(Self.script, toFile: path)
        try writeExecutable("#!/bin/sh\necho reboot >>\"$(dirname \"$0\")/reboots\"\n", toFile: rebootPath)
        try setStatus(status)
    }

    public func setStatus(_ fixture: String?) throws {
        try? FileManager.default.removeItem(atPath: directory.file("status.json"))
        if let fixture { try FileManager.default.copyItem(atPath: Fixtures.raucStatus(fixture).path, toPath: directory.file("status.json")) }
    }

    /// What `status` prints once an install succeeded.
    public func afterInstall(_ fixture: String) throws {
        try FileManager.default.copyItem(atPath: Fixtures.raucStatus(fixture).path, toPath: directory.file("after.json"))
    }

    /// The next installs fail with `message` as RAUC's LastError.
    public func failInstall(_ message: String) throws {
        try message.write(toFile: directory.file("install-error"), atomically: true, encoding: .utf8)
    }

    /// Installs wait (up to 60 s) until `release()`.
    public func hold() { _ = FileManager.default.createFile(atPath: directory.file("hold"), contents: nil) }
    public func release() { try? FileManager.default.removeItem(atPath: directory.file("hold")) }

    /// `info` answers `version` for a bundle of that file name.
    public func setVersion(_ version: String, forBundleNamed name: String) throws {
        try FileManager.default.createDirectory(atPath: directory.file("info"), withIntermediateDirectories: true)
        try version.write(toFile: directory.file("info/\(name)"), atomically: true, encoding: .utf8)
    }

    /// The bundles `install` was given, in order (a held install is listed once it started).
    public var installs: [String] { lines("installs") }
    /// How many times the reboot command ran.
    public var reboots: Int { lines("reboots").count }

    private func lines(_ name: String) -> [String] {
        ((try? String(contentsOfFile: directory.file(name), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    static let script = #"""
        #!/bin/sh
        # A stand-in for rauc (ParleyTestKit's FakeRauc).
        d=$(dirname "$0")
        case "$1" in
        status)
            [ -f "$d/status.json" ] || { echo "rauc-Message: Failed to obtain status: no D-Bus service" >&2; exit 1; }
            cat "$d/status.json" ;;
        install)
            echo "$2" >>"$d/installs"
            echo "installing"
            i=0
            while [ -f "$d/hold" ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i + 1)); done
            if [ -f "$d/install-error" ]; then
                # As rauc 1.13 prints a failure: the reason on standard output, then a summary on standard error.
                echo "  0% Installing"; echo "LastError: $(cat "$d/install-error")"; echo "idle"
                echo "Installing \`$2\` failed" >&2; exit 1
            fi
            echo "100% Installing done."
            [ -f "$d/after.json" ] && cp "$d/after.json" "$d/status.json"
            echo "Installing \`$2\` succeeded" ;;
        info)
            b=$(basename "$3")
            [ -f "$d/info/$b" ] || { echo "$3: signature verification failed: unable to get local issuer certificate" >&2; exit 1; }
            printf '{"compatible":"parley-qemu-amd64","version":"%s","format":"verity"}\n' "$(cat "$d/info/$b")" ;;
        *) echo "fake rauc: unknown command $1" >&2; exit 2 ;;
        esac
        """#
}
