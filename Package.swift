// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "AudioRoute",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AudioRouteCore", targets: ["AudioRouteCore"]),
        .library(name: "AudioRouteLinux", targets: ["AudioRouteLinux"]),
        .executable(name: "audioroute", targets: ["audioroute"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
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
        // The only code that calls C: hardware watchers. No Foundation.
        .target(
            name: "AudioRouteLinux",
            dependencies: [
                "AudioRouteCore", "CUdev", "CSystemd", "CBluetooth",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "audioroute",
            dependencies: [
                "AudioRouteCore",
                "AudioRouteLinux",
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
        // Release-mode benchmark of the udev watcher under umockdev (docs/benchmarks.md).
        .executableTarget(
            name: "udev-bench",
            dependencies: ["AudioRouteCore", "AudioRouteLinux"]
        ),
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
                "AudioRouteCore", "AudioRouteLinux", "audioroute",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "audiorouteTests",
            dependencies: ["AudioRouteCore"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
