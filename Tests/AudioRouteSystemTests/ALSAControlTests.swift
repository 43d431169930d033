import Foundation
import Testing

import AudioRouteSystem

/// The control-device ioctls on a real kernel: a user-space boolean element added to a real
/// card, written, read back, and its change event read. Needs a sound card and write access to
/// its control device; opt-in (AUDIOROUTE_REAL_CONTROL=/dev/snd/controlC<n>), since it adds an
/// element to that card for a moment. The real-kernel bench runs it on its emulated HDA card.
@Suite struct ALSAControlTests {
    static let path = ProcessInfo.processInfo.environment["AUDIOROUTE_REAL_CONTROL"]

    @Test(.enabled(if: path != nil, "set AUDIOROUTE_REAL_CONTROL=/dev/snd/controlC<n>"))
    func userElementRoundTripsThroughTheKernel() throws {
        let path = try #require(Self.path)
        let writer = try ALSAControlDevice(path: path, writable: true)
        let reader = try ALSAControlDevice(path: path)
        try reader.subscribe()
        let name = "AudioRoute Test Headphone Jack"
        let numid = try writer.addBoolean(name: name)
        defer { try? writer.removeElement(numid: numid) }
        let ids = try reader.elementIDs()
        #expect(ids.contains { $0.numid == numid && $0.name == name && $0.interface == .card })
        let info = try reader.info(numid: numid)
        #expect(info.type == .boolean && info.access.contains([.read, .user]) && info.count == 1)
        #expect(try reader.booleanValues(numid: numid, count: 1) == [false])
        try writer.setBoolean(numid: numid, [true])
        #expect(try reader.booleanValues(numid: numid, count: 1) == [true])
        var events: [ALSAControlEvent] = []
        for _ in 0..<100 where !events.contains(where: { $0.id.numid == numid && $0.mask.contains(.value) }) {
            if case .events(let more) = reader.readEvents() { events += more } else { usleep(10_000) }
        }
        #expect(events.contains { $0.id.numid == numid && $0.mask.contains(.value) })
        try writer.removeElement(numid: numid)
        var removed = false
        for _ in 0..<100 where !removed {
            if case .events(let more) = reader.readEvents() { removed = more.contains { $0.id.numid == numid && $0.mask.isRemoval } } else { usleep(10_000) }
        }
        #expect(removed)
    }

    @Test func aMissingControlDeviceIsAnErrnoNotACrash() {
        #expect(throws: Errno.self) { _ = try ALSAControlDevice(path: "/nonexistent/controlC99") }
        // A file that is not a control device refuses the ioctls (ENOTTY).
        if let device = try? ALSAControlDevice(path: "/dev/null") {
            #expect(throws: Errno.self) { try device.elementIDs() }
            #expect(throws: Errno.self) { try device.subscribe() }
        }
    }
}
