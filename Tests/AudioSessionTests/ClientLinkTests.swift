// What an app that uses the client library loads: the ALSA plugin of a later issue is
// loaded into every ALSA client, so the client side must not drag the hardware
// watchers (libudev, libbluetooth) along. Read from the built binaries' dynamic sections.
import Testing

@Suite struct ClientLinkTests {
    /// The shared libraries `binary` names in its dynamic section (readelf -d).
    static func needed(_ binary: String) throws -> [String] {
        let child = try ChildProcess("/usr/bin/readelf", ["-d", binary])
        let text = CLI.readAll(child.stdout)
        let status = child.wait(seconds: 30)
        guard status == 0 else { throw TestFailure("readelf -d \(binary) exited \(String(describing: status))") }
        // "0x0000000000000001 (NEEDED)             Shared library: [libudev.so.1]"
        return text.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    static let watcherLibraries = ["libudev.so", "libbluetooth.so"]

    @Test func aClientLinksNeitherLibudevNorLibbluetooth() throws {
        // audiosession-probe: one AudioSession and nothing else (Tests/Helpers).
        let libraries = try Self.needed(productsDirectory + "/audiosession-probe")
        #expect(libraries.contains { $0.hasPrefix("libsystemd.so") }, "the client talks D-Bus through sd-bus: \(libraries)")
        // The player's time-stretch: the name the daemon's check below looks for.
        #expect(libraries.contains { $0.hasPrefix("libSoundTouch.so") }, "the player stretches through SoundTouch: \(libraries)")
        for library in Self.watcherLibraries {
            #expect(!libraries.contains { $0.hasPrefix(library) }, "a client links \(library): \(libraries)")
        }
    }

    /// The daemon reads jack controls through the control device's ioctls, not libasound
    /// (docs/decisions.md, "Jack controls through ioctls, not libasound").
    @Test func theDaemonDoesNotLinkLibasound() throws {
        let libraries = try Self.needed(productsDirectory + "/audiorouted")
        #expect(libraries.contains { $0.hasPrefix("libudev.so") }, "the reading works: \(libraries)")
        #expect(!libraries.contains { $0.hasPrefix("libasound.so") }, "\(libraries)")
        // Nor the player's decoder and time-stretch: only clients of the player load libsndfile
        // and SoundTouch.
        #expect(!libraries.contains { $0.hasPrefix("libsndfile.so") }, "\(libraries)")
        #expect(!libraries.contains { $0.hasPrefix("libSoundTouch.so") }, "\(libraries)")
    }

    @Test func theDaemonLinksTheWatchersLibraries() throws {
        // The same reading of the daemon finds them: the check above can see what it looks for.
        let libraries = try Self.needed(productsDirectory + "/audiorouted")
        for library in Self.watcherLibraries {
            #expect(libraries.contains { $0.hasPrefix(library) }, "\(libraries)")
        }
    }
}
