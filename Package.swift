// swift-tools-version: 6.1
import PackageDescription

// Dependencies point inward: Core knows nothing else; System is the one Swift module that
// imports Glibc; DBus, Watchers and ALSA wrap their C library once, on top of System.
let log = Target.Dependency.product(name: "Logging", package: "swift-log")
let lifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")

let package = Package(
    name: "AudioRoute",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AudioRouteCore", targets: ["AudioRouteCore"]),
        .library(name: "AudioSession", targets: ["AudioSession"]),
        .library(name: "AudioSessionNotifications", targets: ["AudioSessionNotifications"]),
        .executable(name: "audioroute", targets: ["audioroute"]),
        .executable(name: "audiorouted", targets: ["audiorouted"]),
        .executable(name: "audioroute-ucm", targets: ["audioroute-ucm"]),
        .executable(name: "audioroute-pipewire", targets: ["audioroute-pipewire"]),
        .executable(name: "audioroute-pulse", targets: ["audioroute-pulse"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // Pure Swift: model, validation, resolver, tower, simulation. No C, no Foundation.
        .target(name: "AudioRouteCore"),

        // C: module maps and small shims, nothing else.
        // Linux and glibc interfaces Swift's Glibc module lacks (eventfd, signalfd, epoll,
        // evdev ioctls, prctl, posix_spawn's closefrom, mallopt). Imported by AudioRouteSystem only.
        .systemLibrary(name: "CLinux"),
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        // sd-bus and sd_notify.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // libbluetooth: bdaddr helpers, HCI adapter probe.
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        // libpipewire: its loop, registry, nodes and metadata, behind a few plain arpw_ functions
        // (the callback structs and proxies are macros). Linked by the PipeWire helper only.
        .target(
            name: "CPipeWire",
            // libpipewire's headers, where Debian and pkg-config (libpipewire-0.3, libspa-0.2) put
            // them on every architecture. Only pipewire.c includes them: its public header is
            // opaque, so pkg-config's -D_REENTRANT (refused by SwiftPM with a warning) is not needed.
            cSettings: [.unsafeFlags(["-I/usr/include/pipewire-0.3", "-I/usr/include/spa-0.2", "-D_REENTRANT"])],
            linkerSettings: [.linkedLibrary("pipewire-0.3")]
        ),
        // libpulse: its mainloop (polled by the caller), subscription and introspection, behind a
        // few plain arpa_ functions (its callbacks take structs). Linked by the PulseAudio helper only;
        // its header is opaque: libpulse's headers (in /usr/include, no flags needed) reach pulse.c alone.
        .target(name: "CPulse", linkerSettings: [.linkedLibrary("pulse")]),
        // libsndfile, and its memory file for sf_open_virtual.
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        // libmpg123, for MP3 (libsndfile's own MP3 stops at an estimated length), and its memory reader.
        .systemLibrary(name: "CMpg123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        // SoundTouch (C++, LGPL-2.1+): the player's time-stretch (rate keeping the pitch), behind a
        // small C ABI (one .cpp file) so that Swift calls C, not C++.
        .target(
            name: "CSoundTouch",
            linkerSettings: [.linkedLibrary("SoundTouch"), .linkedLibrary("stdc++")]
        ),
        // The Swift runtime's executor hooks (the one-thread executor).
        .systemLibrary(name: "CSwiftConcurrency"),

        // The one Swift module that imports Glibc: Errno, owned descriptors, threads, signals,
        // atomic files, child processes, the one-thread executor and its poll loop. No Foundation.
        .target(name: "AudioRouteSystem", dependencies: ["CLinux", "CSwiftConcurrency"]),
        // sd-bus wrapped once: connections, messages, the server and the client. No Foundation.
        .target(name: "AudioRouteDBus", dependencies: ["AudioRouteSystem", "CSystemd", log]),
        // The v1 D-Bus contract, once: names, signatures, errors, the wire encoding of ports,
        // routes and sessions. Used by the daemon and by clients.
        .target(name: "AudioRouteIPC", dependencies: ["AudioRouteCore", "AudioRouteDBus", "AudioRouteSystem"]),
        // The UCM helper's client: one `audioroute-ucm` process for every card, asked for each
        // card's ports (by the udev watcher) and told each route's verb and devices (by the
        // daemon's UCM applier). No libasound here: the helper links it.
        .target(name: "AudioRouteUCMHelper", dependencies: ["AudioRouteCore", "AudioRouteSystem", log]),
        // The hardware, as ports: Udev/ (libudev, evdev) and Bluetooth/ (BlueZ over sd-bus).
        .target(
            name: "AudioRouteWatchers",
            dependencies: ["AudioRouteCore", "AudioRouteSystem", "AudioRouteDBus", "AudioRouteUCMHelper", "CUdev", "CBluetooth", log]
        ),
        // alsa-info.sh reports as the watcher's records (docs/alsa-info.md): pure Swift, no C, no
        // Foundation; the classifier and the jack-control rule are the watchers' own.
        .target(name: "AudioRouteALSAInfo", dependencies: ["AudioRouteCore", "AudioRouteWatchers", "AudioRouteUCMHelper", "AudioRouteSystem"]),
        // libasound, for clients: configuration trees, PCMs, the player's output engine. The
        // daemon, which never plays audio, does not load it. The player moves through the ALSA
        // plugin's own mover (AudioRoutePlugin's ar_follower_open): one mover for both.
        .target(name: "AudioRouteALSA", dependencies: ["AudioRouteCore", "AudioRouteSystem", "AudioRouteMix", "AudioRoutePlugin", "CALSA"]),
        // libsndfile, for clients: the player's decoder (WAV, AIFF, CAF, FLAC, Ogg Vorbis, Opus),
        // and libmpg123 for MP3, streamed a window at a time into the engine's `FrameSource`.
        // Also the time-stretch (SoundTouch) the engine renders through when `rate` keeps the pitch.
        .target(name: "AudioRouteDecoding", dependencies: ["AudioRouteCore", "AudioRouteSystem", "CSndfile", "CMpg123", "CSoundTouch"]),
        // Gain and silence on samples, in C: the ALSA plugin compiles the same file into its .so
        // (scripts/build-alsa-plugin), the player calls it through AudioRouteALSA. No libasound.
        .target(name: "AudioRouteMix"),

        // The ALSA plugin's sources, in C (docs/decisions.md, "The ALSA plugin's language"): loaded
        // into any ALSA client, it links libasound and libsystemd (sd-bus, for its session in the
        // tower) only, and reads the route from the daemon's route file. Not a product: SwiftPM would link the Swift runtime into it; scripts/build-alsa-plugin
        // builds the shipped libasound_module_pcm_audioroute.so. This target is for the tests, and for
        // the player, which moves with the same code (audioroute_follower.h).
        .target(name: "AudioRoutePlugin", dependencies: ["AudioRouteMix"], linkerSettings: [.linkedLibrary("asound"), .linkedLibrary("systemd")]),

        // The daemon's services: route tower, persisted state, readiness, the D-Bus service.
        .target(
            name: "AudioRouteDaemon",
            dependencies: [
                "AudioRouteCore", "AudioRouteWatchers", "AudioRouteUCMHelper", "AudioRouteIPC", "AudioRouteDBus", "AudioRouteSystem",
                log, lifecycle,
            ]
        ),
        // The release and the git commit, for every binary's --version (the commit from Plugins/GitCommit).
        .target(name: "AudioRouteVersion", plugins: ["GitCommit"]),
        .plugin(name: "GitCommit", capability: .buildTool()),
        .executableTarget(
            name: "audiorouted", dependencies: ["AudioRouteDaemon", "AudioRouteUCMHelper", "AudioRouteWatchers", "AudioRouteSystem", "AudioRouteVersion", log, lifecycle]),
        // One UCM card's helper (docs/ucm.md): libasound's snd_use_case_* in a process of its
        // own, beside the daemon, on stdin/stdout. No ArgumentParser: it stays small.
        .executableTarget(name: "audioroute-ucm", dependencies: ["AudioRouteALSA", "AudioRouteCore", "AudioRouteSystem", "AudioRouteVersion", log]),
        // The PipeWire helper's client (docs/daemon.md, "The PipeWire helper"): libpipewire on a
        // loop the helper polls; the protocol and the mapping are AudioRouteCore's.
        .target(name: "AudioRoutePipeWire", dependencies: ["AudioRouteCore", "CPipeWire"]),
        // The PipeWire helper: the server's nodes out, the route's defaults in, on stdin/stdout,
        // so that the daemon never links libpipewire.
        .executableTarget(name: "audioroute-pipewire", dependencies: ["AudioRoutePipeWire", "AudioRouteCore", "AudioRouteSystem", "AudioRouteVersion", log]),

        // The PulseAudio helper's client (docs/daemon.md, "The PulseAudio helper"): libpulse on a
        // mainloop the helper polls; its objects as the PipeWire helper protocol's nodes.
        .target(name: "AudioRoutePulse", dependencies: ["AudioRouteCore", "CPulse"]),
        // The PulseAudio helper: the PipeWire helper's protocol on stdin/stdout, for PulseAudio, so
        // that the daemon never links libpulse.
        .executableTarget(name: "audioroute-pulse", dependencies: ["AudioRoutePulse", "AudioRouteCore", "AudioRouteSystem", "AudioRouteVersion", log]),

        // The client library: an app's AVAudioSession-like session on audiorouted, and the
        // player. No Foundation, no hardware watchers.
        .target(
            name: "AudioSession",
            dependencies: [
                "AudioRouteCore", "AudioRouteIPC", "AudioRouteDBus", "AudioRouteALSA", "AudioRouteDecoding", "AudioRouteMix", "AudioRouteSystem", log,
            ]
        ),
        // NotificationCenter bridging with iOS names and userInfo keys; the only client code that imports Foundation.
        .target(name: "AudioSessionNotifications", dependencies: ["AudioSession", "AudioRouteCore"]),
        // A private bus and audiorouted on it, once for the tests (AudioRouteTestKit) and the demo:
        // no Foundation, libc only through AudioRouteSystem (the demo ships in the CLI).
        .target(name: "AudioRouteTestbed", dependencies: ["AudioRouteSystem"]),
        // `audioroute demo`: a simulated phone, the real daemon, the player through a story.
        .target(
            name: "AudioRouteDemo",
            dependencies: ["AudioSession", "AudioRouteCore", "AudioRouteALSA", "AudioRouteIPC", "AudioRouteSystem", "AudioRouteTestbed"]
        ),
        // The CLI: the daemon's client (AudioSession), the watchers in-process for --direct, the demo.
        .executableTarget(
            name: "audioroute",
            dependencies: [
                "AudioRouteCore", "AudioSession", "AudioRouteIPC", "AudioRouteWatchers", "AudioRouteUCMHelper", "AudioRouteALSAInfo", "AudioRouteDemo", "AudioRouteSystem",
                "AudioRouteVersion", .product(name: "ArgumentParser", package: "swift-argument-parser"), log,
            ]
        ),

        // Benchmarks (docs/benchmarks.md): not products; `swift run -c release <name>`.
        .executableTarget(name: "audioroute-bench", dependencies: ["AudioRouteCore", "AudioRouteSystem"], path: "Benchmarks/audioroute-bench"),
        .executableTarget(
            name: "audioroute-bluez-bench", dependencies: ["AudioRouteCore", "AudioRouteWatchers", "AudioRouteSystem"],
            path: "Benchmarks/audioroute-bluez-bench"
        ),
        .executableTarget(
            name: "player-bench", dependencies: ["AudioRouteCore", "AudioRouteALSA", "AudioRouteDecoding", "AudioSession", "AudioRouteSystem"],
            path: "Benchmarks/player-bench"
        ),
        .executableTarget(
            name: "udev-bench", dependencies: ["AudioRouteCore", "AudioRouteWatchers", "AudioRouteSystem"],
            path: "Benchmarks/udev-bench"
        ),

        // Test helpers (not products): one AudioSession in its own process driven on stdin;
        // a state writer the crash-safety test kills.
        .executableTarget(name: "audiosession-probe", dependencies: ["AudioSession", "AudioRouteCore", "AudioRouteSystem"], path: "Tests/Helpers/audiosession-probe"),
        .executableTarget(name: "audiorouted-state-writer", dependencies: ["AudioRouteDaemon", "AudioRouteSystem"], path: "Tests/Helpers/audiorouted-state-writer"),
        // What the test targets share: temporary directories, child processes, the private
        // bus, the mock daemon, the umockdev and dbusmock testbeds, the running daemon.
        .target(
            name: "AudioRouteTestKit",
            dependencies: [
                "AudioRouteCore", "AudioRouteSystem", "AudioRouteDBus", "AudioRouteWatchers", "AudioRouteDaemon", "AudioSession",
                "AudioRouteTestbed", "CLinux", log,
            ],
            path: "Tests/AudioRouteTestKit"
        ),

        // Test targets mirror Sources/.
        .testTarget(
            name: "AudioRouteCoreTests",
            dependencies: ["AudioRouteCore", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        .testTarget(name: "AudioRouteSystemTests", dependencies: ["AudioRouteSystem", "AudioRouteTestKit"]),
        .testTarget(name: "AudioRouteDBusTests", dependencies: ["AudioRouteDBus", "AudioRouteSystem", "AudioRouteTestKit", log]),
        // The plugin's logic without a kernel, and aplay through the built plugin into file PCMs.
        .testTarget(
            name: "AudioRoutePluginTests",
            dependencies: ["AudioRoutePlugin", "AudioRouteMix", "AudioRouteCore", "AudioRouteIPC", "AudioRouteSystem", "AudioRouteTestKit"]
        ),
        .testTarget(name: "AudioRouteIPCTests", dependencies: ["AudioRouteIPC", "AudioRouteCore", "AudioRouteTestKit"]),
        .testTarget(
            name: "AudioRouteWatchersTests",
            dependencies: ["AudioRouteWatchers", "AudioRouteUCMHelper", "AudioRouteCore", "AudioRouteDBus", "AudioRouteSystem", "AudioRouteTestKit", log]
        ),
        // The report parser per section, its errors, the fuzzed reports, the public corpus
        // (Tests/Fixtures/alsa-info) through the classifier, the fake card's configuration.
        .testTarget(
            name: "AudioRouteALSAInfoTests",
            // "audioroute-ucm": so that it is built, for the corpus's UCM profiles.
            dependencies: [
                "AudioRouteALSAInfo", "AudioRouteWatchers", "AudioRouteCore", "AudioRouteSystem", "AudioRouteTestKit", "audioroute-ucm",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "AudioRouteALSATests",
            // "audioroute-ucm": so that it is built, for the helper's end-to-end test.
            // AudioRouteALSAInfo: StockProfileTests renders an alsa-info report's card as a fake card.
            dependencies: [
                "AudioRouteALSA", "AudioRouteALSAInfo", "AudioRouteCore", "AudioRouteSystem", "AudioRouteWatchers", "AudioSession", "AudioRouteTestKit",
                "audioroute-ucm",
            ]
        ),
        .testTarget(
            name: "AudioRouteDaemonTests",
            dependencies: [
                "AudioRouteDaemon", "AudioRouteIPC", "AudioRouteWatchers", "AudioRouteDBus", "AudioRouteSystem",
                "AudioRouteALSA", "AudioRouteTestKit", "AudioRouteTestbed", "CLinux", log, lifecycle,
                "AudioRouteDemo",  // GeneratedALSAConfigTests loads the demo's ALSA configuration
                "audioroute-pipewire",  // so that it is built: the daemon starts it beside itself (PipeWireDefaultsTests)
                "audioroute-pulse",  // the same for PulseAudio (PulseDefaultsTests)
            ]
        ),
        .testTarget(
            name: "AudioSessionTests",
            dependencies: [
                "AudioSession", "AudioSessionNotifications", "AudioRouteIPC", "AudioRouteCore", "AudioRouteALSA", "AudioRouteDecoding",
                "AudioRouteSystem", "AudioRouteTestKit", "AudioRouteMix", "CMpg123",
            ]
        ),
        // ar_mix_apply for every format, against AudioRouteCore's renderer.
        .testTarget(name: "AudioRouteMixTests", dependencies: ["AudioRouteMix", "AudioRouteCore"]),
        // Runs the built `audioroute demo`: "audioroute" is a dependency so that it is built.
        .testTarget(name: "AudioRouteDemoTests", dependencies: ["AudioRouteDemo", "audioroute", "AudioRouteCore", "AudioRouteTestKit"]),
        .testTarget(
            name: "audiorouteTests",
            dependencies: ["audioroute", "AudioRouteCore", "AudioRouteWatchers", "AudioRouteSystem", "AudioRouteTestKit"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
