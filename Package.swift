// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "AudioRoute",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AudioRouteCore", targets: ["AudioRouteCore"]),
        .library(name: "AudioRouteLinux", targets: ["AudioRouteLinux"]),
        .library(name: "AudioRouteALSA", targets: ["AudioRouteALSA"]),
        .library(name: "AudioSession", targets: ["AudioSession"]),
        .library(name: "AudioSessionNotifications", targets: ["AudioSessionNotifications"]),
        .executable(name: "audioroute", targets: ["audioroute"]),
        .executable(name: "audiorouted", targets: ["audiorouted"]),
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
        // libudev, evdev ioctls and epoll, wrapped once in AudioRouteLinux.
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        // sd-bus (BlueZ and BlueALSA over D-Bus). Module map and shim.h only.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // libbluetooth: bdaddr helpers, HCI adapter probe. Module map and shim.h only.
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        // libasound: module map plus shim.h, nothing else.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        // The Swift runtime's executor hooks (audiorouted's one-thread executor). Module map and shim.h only.
        .systemLibrary(name: "CSwiftConcurrency"),
        // glibc's posix_spawn_file_actions_addclosefrom_np, for children that inherit only 0-2. Module map and shim.h only.
        .systemLibrary(name: "CPosixSpawn"),
        // The daemon's side of the system: hardware watchers, BlueZ and D-Bus over sd-bus, the
        // route's ALSA file (text, no libasound). No Foundation.
        .target(
            name: "AudioRouteLinux",
            dependencies: [
                "AudioRouteCore", "CUdev", "CSystemd", "CBluetooth", "CSwiftConcurrency",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The clients' side: libasound (configuration trees, PCMs, the player's output engine).
        // Apart from AudioRouteLinux so that audiorouted, which never plays audio, does not load
        // libasound (docs/daemon.md, Memory). No Foundation.
        .target(
            name: "AudioRouteALSA",
            dependencies: ["AudioRouteCore", "CALSA"]
        ),
        // The daemon's services: route tower, persisted state, readiness. No Foundation.
        .target(
            name: "AudioRouteDaemon",
            dependencies: [
                "AudioRouteCore",
                "AudioRouteLinux",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "audiorouted",
            dependencies: [
                "AudioRouteDaemon",
                "AudioRouteLinux",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The client library: an app's AVAudioSession-like session on audiorouted. No Foundation.
        .target(
            name: "AudioSession",
            dependencies: [
                "AudioRouteCore",
                "AudioRouteLinux",
                "AudioRouteALSA",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // NotificationCenter bridging with iOS names and userInfo keys; the only client code that imports Foundation.
        .target(name: "AudioSessionNotifications", dependencies: ["AudioSession", "AudioRouteCore"]),
        // Test helper: one AudioSession in its own process, driven by commands on stdin (client tests).
        .executableTarget(name: "audiosession-probe", dependencies: ["AudioSession", "AudioRouteCore"]),
        // Test helper: saves state in a loop until killed (the crash-safety test kills it).
        .executableTarget(name: "audiorouted-state-writer", dependencies: ["AudioRouteDaemon"]),
        .executableTarget(
            name: "audioroute",
            dependencies: [
                "AudioRouteCore",
                "AudioRouteLinux",
                "AudioRouteALSA",
                "AudioSession",
                "CPosixSpawn",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "audioroute-bench",
            dependencies: ["AudioRouteCore"]
        ),
        // BlueZ watcher latency and idle wake-ups against the dbusmock bench (docs/benchmarks.md).
        .executableTarget(
            name: "audioroute-bluez-bench",
            dependencies: ["AudioRouteCore", "AudioRouteLinux"]
        ),
        // Release-mode benchmark of the player's output engine: CPU per second of audio, reroute gap (docs/benchmarks.md).
        .executableTarget(
            name: "player-bench",
            dependencies: ["AudioRouteCore", "AudioRouteLinux", "AudioRouteALSA"]
        ),
        // Release-mode benchmark of the udev watcher under umockdev (docs/benchmarks.md).
        .executableTarget(
            name: "udev-bench",
            dependencies: ["AudioRouteCore", "AudioRouteLinux"]
        ),
        // The harness pieces the test targets share: temporary directories, child
        // processes, systemd's notify socket, a private dbus-daemon. Tests only.
        .target(name: "AudioRouteTestSupport", dependencies: ["CPosixSpawn"], path: "Tests/Support"),
        .testTarget(
            name: "AudioRouteCoreTests",
            dependencies: [
                "AudioRouteCore",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "AudioRouteLinuxTests",
            dependencies: [
                "AudioRouteCore", "AudioRouteLinux", "AudioRouteALSA", "audioroute", "CALSA", "AudioRouteTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "AudioRouteALSATests",
            dependencies: ["AudioRouteALSA", "AudioRouteCore", "AudioRouteLinux", "AudioRouteTestSupport"]
        ),
        .testTarget(
            name: "audiorouteTests",
            dependencies: ["AudioRouteCore", "CPosixSpawn"]
        ),
        .testTarget(
            name: "AudioSessionTests",
            dependencies: ["AudioSession", "AudioSessionNotifications", "AudioRouteCore", "AudioRouteLinux", "AudioRouteALSA", "AudioRouteTestSupport"]
        ),
        .testTarget(
            name: "AudioRouteDaemonTests",
            dependencies: [
                "AudioRouteDaemon", "AudioRouteTestSupport",
                "AudioRouteLinux", "AudioRouteALSA",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
