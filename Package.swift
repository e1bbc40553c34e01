// swift-tools-version:6.1
// Parley: an offline voice-shortcuts runtime for a Raspberry-Pi-class speaker.
//
// Layering (see README "Architecture"):
//   C system libraries  CALSA CPocketSphinx CGPIOD CESpeakNG CSpeexDSP (SQLite through GRDB)
//   pure Swift          ParleyIntents -> ParleyCore -> ParleyApps   (no C needed)
//   device wrappers     ParleyAudio (ALSA) ParleySpeech (PocketSphinx, espeak-ng)
//                       ParleyHardware (libgpiod) ParleyStore (SQLite, GRDB)
//   wiring              ParleyDaemon -> parleyd, parley
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
        // Yams reads shortcut files; it builds its vendored libyaml as a Swift-package
        // C target, so ParleyCore still needs no system library.
        .target(name: "ParleyCore", dependencies: ["ParleyIntents", "Yams"]),
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
        .target(
            name: "ParleySpeech",
            dependencies: [
                "CPocketSphinx", "CESpeakNG", "ParleyCore", "ParleyAudio", "Yams",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "ParleyHardware",
            dependencies: ["CGPIOD", "ParleyCore", "Yams", .product(name: "Logging", package: "swift-log")]),

        // MARK: The device learns its room: kept confirmed audio, MLLR with sphinxtrain.
        .target(name: "ParleyRoom", dependencies: ["ParleyAudio", "ParleySpeech"]),

        // MARK: External apps: manifests, handler processes (posix_spawn through CParleyProcess).
        .target(name: "CParleyProcess"),
        .target(
            name: "ParleyExternal",
            dependencies: [
                "ParleyIntents", "ParleyCore", "CParleyProcess", "Yams", .product(name: "Logging", package: "swift-log"),
            ]),

        // MARK: Wiring and executables.
        .target(
            name: "ParleyDaemon",
            dependencies: [
                "ParleyIntents", "ParleyCore", "ParleyApps", "ParleyStore", "ParleyAudio",
                "ParleySpeech", "ParleyHardware", "ParleyExternal", "ParleyRoom", "Yams",
                "CParleyShims",   // parley_release_free_memory after the decoders load
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .executableTarget(
            name: "parleyd",
            dependencies: [
                "ParleyDaemon", "ParleyAudio", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "parley",
            dependencies: [
                "ParleyDaemon", "ParleyCore", "ParleyApps", "ParleyStore", "ParleySpeech", "ParleyAudio", "ParleyExternal", "ParleyHardware",
                "ParleyRoom",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "parley-bench",
            dependencies: [
                "ParleyIntents", "ParleyCore", "ParleyApps", "ParleyAudio", "ParleySpeech", "ParleyExternal", "ParleyDaemon",
                "ParleyStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Fuzz targets for every reader of outside input (scripts/fuzz.sh builds it
        // with libFuzzer; a normal build replays corpus files).
        .executableTarget(
            name: "parley-fuzz",
            dependencies: ["ParleyCore", "ParleyApps", "ParleyAudio", "ParleyDaemon", "ParleyExternal", "ParleyHardware"]),

        // MARK: Tests: one target per module, plus the command-line contracts.
        .testTarget(name: "ParleyIntentsTests", dependencies: ["ParleyIntents", "ParleyTestKit"]),
        .testTarget(name: "ParleyCoreTests", dependencies: ["ParleyCore", "ParleyApps", "ParleyTestKit"]),
        .testTarget(name: "ParleyAppsTests", dependencies: ["ParleyApps", "ParleyCore", "ParleyTestKit", "Yams"]),
        .testTarget(
            name: "ParleyStoreTests",
            dependencies: ["ParleyStore", "ParleyTestKit", .product(name: "GRDB", package: "GRDB.swift")]),
        // Test-only malloc interposer counting allocations per thread (audio loop proof).
        .target(name: "CParleyMallocCounter", path: "Tests/CParleyMallocCounter"),
        .testTarget(
            name: "ParleyAudioTests",
            dependencies: ["ParleyAudio", "CALSA", "CSpeexDSP", "CParleyMallocCounter", "ParleyTestKit"]),
        .testTarget(name: "ParleySpeechTests", dependencies: ["ParleySpeech", "ParleyAudio", "ParleyApps", "ParleyTestKit"]),
        .testTarget(name: "ParleyHardwareTests", dependencies: ["ParleyHardware", "ParleyCore"]),
        .testTarget(name: "ParleyRoomTests", dependencies: ["ParleyRoom", "ParleySpeech", "ParleyAudio", "ParleyApps", "ParleyTestKit"]),
        .testTarget(name: "ParleyDaemonTests", dependencies: ["ParleyDaemon", "ParleySpeech", "ParleyRoom", "ParleyTestKit"]),
        .testTarget(name: "ParleyCLITests", dependencies: ["ParleyTestKit"]),
        .testTarget(name: "ParleyExternalTests", dependencies: ["ParleyExternal", "ParleyApps", "ParleyTestKit"]),
    ],
    swiftLanguageModes: [.v6]
)
