// swift-tools-version:6.1
// Parley: an offline voice-shortcuts runtime for a Raspberry-Pi-class speaker.
//
// Layering (see README "Architecture"); "A -> B" means A uses B:
//   C system libraries  CALSA CPocketSphinx CGPIOD CESpeakNG CSpeexDSP (SQLite through GRDB)
//   pure Swift          ParleyDevice (device states, button gestures, SourceTree, BlockingMain)
//   (no C needed)       ParleyIntents    ParleyApps -> ParleyIntents
//                       ParleyCore -> ParleyIntents, ParleyDevice
//   device wrappers     ParleyAudio (ALSA, speexdsp front end) ParleySpeech (PocketSphinx, espeak-ng) ParleyStore (SQLite, GRDB)
//                       ParleyDenoise (DeepFilterNet3 through its C API, loaded at run time) -> ParleyAudio, ParleyDevice
//                       ParleyWake (speech_embedding streamed, wake heads; pure Swift) <- ParleySpeech
//                       ParleyHardware (libgpiod) -> ParleyDevice, never ParleyCore
//   between programs    ParleySocket (socket calls and errors, Unix and TCP listening, the accept/stop loop)
//                       ParleyConfiguration (parley.yaml: ParleyConfig, ConfigLoader) -> ParleySpeech, ParleyStore
//                       ParleyControl (control protocol, client, socket, server) -> ParleyCore, ParleyConfiguration, ParleySocket
//                       ParleyWyoming (Home Assistant) -> ParleyCore, ParleyExternal, ParleySocket
//   wiring              ParleyDaemon -> all of the above; parleyd -> ParleyDaemon
//   tools               parley -> ParleyControl, ParleyConfiguration and the wrappers: no daemon code
//                       parley-bench -> ParleyDaemon only for the app-install benchmark
import PackageDescription

let package = Package(
    name: "Parley",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "parleyd", targets: ["parleyd"]),
        .executable(name: "parley", targets: ["parley"]),
        .executable(name: "parley-bench", targets: ["parley-bench"]),
        .library(name: "ParleyIntents", targets: ["ParleyIntents"]),
        .library(name: "ParleyCore", targets: ["ParleyCore"]),
        .library(name: "ParleyTestKit", targets: ["ParleyTestKit"]),
    ],
    // libgpiod's API: v1 (Debian 12's 1.6) by default, v2 (Debian 13's 2.2)
    // with `--traits LibgpiodV2`, as scripts/cross-build.sh builds for the
    // device. The two APIs share no function, so the choice is made at build
    // time; ParleyHardware's GPIOD layer has one file per API.
    traits: [
        .trait(name: "LibgpiodV2", description: "Build the GPIO layer against libgpiod v2 (Debian 13) instead of v1 (Debian 12)."),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // The speaker's web page (ParleyWeb).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Hummingbird's own (already resolved): HTTPRequestPart for the page's connection limits.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
    ],
    targets: [
        // MARK: C libraries from Debian, one system-library module each.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(
            name: "CPocketSphinx", pkgConfig: "pocketsphinx",
            providers: [.apt(["libpocketsphinx-dev", "libsphinxbase-dev", "pocketsphinx-en-us"])]),
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .systemLibrary(name: "CESpeakNG", pkgConfig: "espeak-ng", providers: [.apt(["libespeak-ng-dev"])]),
        // The capture front end: speexdsp's preprocessor (noise suppression, AGC; echo cancellation later).
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),

        // MARK: Pure Swift: the app API, the engine, the bundled apps.
        .target(name: "ParleyIntents"),
        // What the engine and the board share (device states, button gestures), where
        // installed files are found and how executables start: ParleyHardware needs
        // these without the engine.
        .target(name: "ParleyDevice"),
        // ParleyYAML reads shortcut files; its Yams builds the vendored libyaml as a
        // Swift-package C target, so ParleyCore still needs no system library.
        .target(name: "ParleyCore", dependencies: ["ParleyIntents", "ParleyDevice", "ParleyYAML"]),
        // The one reader of Parley's YAML files (shortcuts, manifests, configuration,
        // boards): located nodes, typed reads, one error shape. On Yams alone, so
        // ParleyHardware can read board files without ParleyCore.
        .target(name: "ParleyYAML", dependencies: ["Yams"]),
        .target(name: "ParleyApps", dependencies: ["ParleyIntents"]),
        .target(
            name: "ParleyTestKit",
            dependencies: [
                "ParleyIntents", "ParleyCore", .product(name: "Logging", package: "swift-log"),
                // Tests that start programs drain their output while they run.
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]),

        // MARK: Device and storage wrappers.
        .target(name: "ParleyStore", dependencies: ["ParleyCore", .product(name: "GRDB", package: "GRDB.swift")]),
        // CParleyShims: futex helpers for the audio ring (syscall(2) is variadic)
        // and libasound's error handler (a variadic callback).
        .target(name: "CParleyShims", linkerSettings: [.linkedLibrary("asound")]),
        .target(
            name: "ParleyAudio",
            dependencies: ["CALSA", "CSpeexDSP", "CParleyShims", .product(name: "Logging", package: "swift-log")]),
        // The neural noise suppressor: libdeepfilter.so is opened with dlopen
        // (an optional stage: the daemon listens on without it), so nothing
        // links against it.
        .target(name: "ParleyDenoise", dependencies: ["ParleyAudio", "ParleyDevice"]),
        // Optimised in debug builds too: the test suite streams seconds of audio
        // through the embedding network, about 30 times slower unoptimised.
        .target(name: "ParleyWake", swiftSettings: [.unsafeFlags(["-O"])]),
        .target(
            name: "ParleySpeech",
            dependencies: [
                "CPocketSphinx", "CESpeakNG", "ParleyCore", "ParleyAudio", "ParleyDenoise", "ParleyWake", "Yams",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "ParleyHardware",
            dependencies: ["CGPIOD", "ParleyDevice", "ParleyYAML", .product(name: "Logging", package: "swift-log")]),

        // MARK: The device learns its room: kept confirmed audio, MLLR with sphinxtrain.
        .target(name: "ParleyRoom", dependencies: ["ParleyAudio", "ParleyDenoise", "ParleySpeech"]),

        // MARK: External apps: manifests, handler processes (posix_spawn through CParleyProcess).
        .target(name: "CParleyProcess"),
        // The handler sandbox's runner and the wire parleyd speaks to it
        // (Foundation and CParleyProcess only: the runner starts per handler).
        .target(name: "ParleySandbox", dependencies: ["CParleyProcess"]),
        .executableTarget(name: "parley-app-runner", dependencies: ["ParleySandbox"]),
        .target(
            name: "ParleyExternal",
            dependencies: [
                "ParleyIntents", "ParleyCore", "ParleyDevice", "ParleyYAML", "CParleyProcess", "ParleySandbox", "ParleySocket",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // MARK: Between programs: the control socket and the configuration file,
        // shared by the daemon and the `parley` tool (which links no daemon code).
        .target(name: "ParleyConfiguration", dependencies: ["ParleySpeech", "ParleyStore", "ParleyYAML"]),
        // What the control socket and Wyoming's servers share: socket calls as
        // errors, listening sockets, the accept thread and its stop. On swift-log
        // alone, so neither server drags the other (or the daemon) into `parley`.
        .target(name: "ParleySocket", dependencies: [.product(name: "Logging", package: "swift-log")]),
        // The client finds the socket through parley.yaml's control_socket.
        .target(
            name: "ParleyControl",
            dependencies: ["ParleyCore", "ParleyConfiguration", "ParleySocket", .product(name: "Logging", package: "swift-log")]),
        // MARK: Home Assistant over the Wyoming protocol: framing, events, the
        // satellite and handle roles (plain POSIX sockets, as the control socket).
        .target(
            name: "ParleyWyoming",
            dependencies: ["ParleyCore", "ParleyExternal", "ParleySocket", .product(name: "Logging", package: "swift-log")]),

        // MARK: Wiring and executables.
        .target(
            name: "ParleyDaemon",
            dependencies: [
                "ParleyIntents", "ParleyCore", "ParleyApps", "ParleyStore", "ParleyAudio", "ParleyDenoise",
                "ParleySpeech", "ParleyWake", "ParleyHardware", "ParleyExternal", "ParleyRoom", "ParleyControl",
                "ParleyConfiguration", "ParleyWyoming", "ParleySandbox",
                "ParleySocket",   // SystemdNotifier: the longest Unix socket path
                "CParleyShims",   // parley_release_free_memory after the decoders load
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // MARK: The speaker's web page, served by parleyd (Hummingbird); it asks the
        // daemon through the control socket's handler, never a second path.
        .target(
            name: "ParleyWeb",
            dependencies: [
                "ParleyDaemon", "ParleyControl", "ParleyConfiguration", "ParleyCore", "ParleySocket",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .executableTarget(
            name: "parleyd",
            dependencies: [
                "ParleyDaemon", "ParleyConfiguration", "ParleyDevice", "ParleyWeb", "ParleyAudio",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "parley",
            dependencies: [
                "ParleyControl", "ParleyConfiguration", "ParleyDevice", "ParleyCore", "ParleyApps", "ParleyStore", "ParleySpeech",
                "ParleyAudio", "ParleyDenoise", "ParleyExternal", "ParleyHardware", "ParleyRoom", "ParleyWake",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "parley-bench",
            dependencies: [
                // ParleyDaemon for the app-install benchmark, which measures the daemon's own wiring.
                "ParleyIntents", "ParleyCore", "ParleyApps", "ParleyAudio", "ParleySpeech", "ParleyExternal", "ParleyDaemon",
                "ParleyConfiguration", "ParleyDevice", "ParleyStore", "ParleyWake", "ParleyDenoise",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Fuzz targets for every reader of outside input (scripts/fuzz.sh builds it
        // with libFuzzer; a normal build replays corpus files).
        .executableTarget(
            name: "parley-fuzz",
            dependencies: [
                "ParleyCore", "ParleyApps", "ParleyAudio", "ParleyControl", "ParleyConfiguration", "ParleyExternal",
                "ParleyHardware", "ParleyWyoming", "ParleyWeb",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),

        // MARK: Tests: one target per module, plus the command-line contracts.
        .testTarget(name: "ParleyIntentsTests", dependencies: ["ParleyIntents", "ParleyTestKit"]),
        .testTarget(name: "ParleyYAMLTests", dependencies: ["ParleyYAML"]),
        .testTarget(name: "ParleyCoreTests", dependencies: ["ParleyCore", "ParleyApps", "ParleyTestKit"]),
        .testTarget(name: "ParleyAppsTests", dependencies: ["ParleyApps", "ParleyCore", "ParleyTestKit", "Yams"]),
        // parleyd: CrashDurabilityTests runs its store-stress writer, which
        // must be built from the same sources as the store it checks.
        .testTarget(
            name: "ParleyStoreTests",
            dependencies: ["ParleyStore", "ParleyTestKit", "parleyd", .product(name: "GRDB", package: "GRDB.swift")]),
        // Test-only malloc interposer counting allocations per thread (audio loop proof).
        .target(name: "CParleyMallocCounter", path: "Tests/CParleyMallocCounter"),
        // Test-only sound card control in the test process (alsa-lib's snd_ctl_ext), for the volume's mixer tests.
        .target(name: "CParleyTestMixer", path: "Tests/CParleyTestMixer", linkerSettings: [.linkedLibrary("asound")]),
        .testTarget(
            name: "ParleyAudioTests",
            dependencies: ["ParleyAudio", "CALSA", "CSpeexDSP", "CParleyMallocCounter", "CParleyTestMixer", "ParleyTestKit"]),
        .testTarget(name: "ParleyWakeTests", dependencies: ["ParleyWake", "ParleyAudio", "ParleyTestKit"]),
        .testTarget(name: "ParleyDenoiseTests", dependencies: ["ParleyDenoise", "ParleyAudio", "ParleyDevice", "ParleyTestKit"]),
        .testTarget(name: "ParleySpeechTests", dependencies: ["ParleySpeech", "ParleyAudio", "ParleyApps", "ParleyDenoise", "ParleyTestKit", "CParleyMallocCounter"]),
        .testTarget(name: "ParleyHardwareTests", dependencies: ["ParleyHardware", "ParleyDevice"]),
        .testTarget(name: "ParleyRoomTests", dependencies: ["ParleyRoom", "ParleySpeech", "ParleyAudio", "ParleyApps", "ParleyTestKit"]),
        .testTarget(
            name: "ParleyDaemonTests",
            dependencies: [
                "ParleyDaemon", "ParleyControl", "ParleyConfiguration", "ParleySpeech", "ParleyRoom", "ParleyWyoming",
                "ParleySocket",   // raw clients of the control socket (UnixSocket)
                "ParleyTestKit",
                // VolumeDaemonTests: the volume's output, store and board, the bridge in a service group.
                "ParleyAudio", "ParleyCore", "ParleyHardware", "ParleyStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .testTarget(
            name: "ParleyConfigurationTests",
            dependencies: ["ParleyConfiguration", "ParleyAudio", "ParleyStore", "ParleyTestKit"]),
        .testTarget(name: "ParleyCLITests", dependencies: ["ParleyTestKit"]),
        .testTarget(
            name: "ParleyWebTests",
            dependencies: [
                "ParleyWeb", "ParleyDaemon", "ParleyControl", "ParleyConfiguration", "ParleyStore", "ParleyTestKit", "ParleySocket",
                "ParleyHardware", "ParleyCore",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "ParleyWyomingTests", dependencies: ["ParleyWyoming", "ParleyApps", "ParleyCore", "ParleyTestKit"]),
        .testTarget(
            name: "ParleySocketTests",
            dependencies: ["ParleySocket", "ParleyTestKit", .product(name: "Logging", package: "swift-log")]),
        // parley-app-runner: the sandbox tests start the runner as systemd's socket would.
        .testTarget(name: "ParleyExternalTests", dependencies: [
            "ParleyExternal", "ParleyApps", "ParleyIntents", "ParleyCore", "ParleyTestKit", "ParleySandbox", "ParleySocket",
            "CParleyProcess", "parley-app-runner", .product(name: "Logging", package: "swift-log"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
