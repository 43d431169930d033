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

    /// CARD_INFO and PCM_INFO say what the kernel's own proc files say of the same card
    /// (`/proc/asound/card<n>/id`, `pcm<m><p|c>/info`): the facts come from the kernel, not from us.
    @Test(.enabled(if: path != nil, "set AUDIOROUTE_REAL_CONTROL=/dev/snd/controlC<n>"))
    func cardInfoAndPCMNamesMatchTheKernelsProcFiles() throws {
        let path = try #require(Self.path)
        let device = try ALSAControlDevice(path: path)
        #expect(try device.protocolVersion() >> 16 == 2)
        let info = try device.cardInfo()
        let proc = "/proc/asound/card\(info.card)"
        let id = try String(contentsOfFile: proc + "/id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(info.id == id)
        let devices = try device.pcmDevices()
        #expect(!devices.isEmpty && devices == devices.sorted())
        for number in devices {
            for playback in [true, false] {
                let file = "\(proc)/pcm\(number)\(playback ? "p" : "c")/info"
                let pcm = try device.pcmInfo(device: number, playback: playback)
                guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                    #expect(pcm == nil, "\(file) is missing but PCM_INFO answered")
                    continue
                }
                let fields = Dictionary(text.split(separator: "\n").compactMap { line -> (String, String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
                }) { first, _ in first }
                #expect(pcm?.id == fields["id"] && pcm?.name == fields["name"], "\(file)")
            }
        }
    }

    @Test func aMissingControlDeviceIsAnErrnoNotACrash() {
        #expect(throws: Errno.self) { _ = try ALSAControlDevice(path: "/nonexistent/controlC99") }
        // A file that is not a control device refuses the ioctls (ENOTTY).
        if let device = try? ALSAControlDevice(path: "/dev/null") {
            #expect(throws: Errno.self) { try device.elementIDs() }
            #expect(throws: Errno.self) { try device.subscribe() }
            #expect(throws: Errno.self) { try device.cardInfo() }
            #expect(throws: Errno.self) { try device.pcmDevices() }
            #expect(throws: Errno.self) { try device.pcmInfo(device: 0, playback: true) }
        }
    }
}
