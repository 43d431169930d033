import AudioRouteCore
import Foundation
import Testing

@testable import AudioRouteWatchers

/// The watcher's control-device path through the real ioctls, against the emitter's emulated
/// control device (share/demo/emitter.py, "ControlDevice"): jack events, and a device or a codec
/// file that says something no kernel would.
@Suite(.serialized) struct UdevControlDeviceTests {
    static let xps = "laptop-dell-xps17-9700-sof-soundwire"
    static let base = "pci-0000:00:1f.3-platform-sof_sdw"

    /// Headphones plugged into the XPS 17 9700's headset jack (its `Headphone Jack` control,
    /// numid 29 in the record's alsactl dump): the port arrives on PCM 0, the card's "Jack Out",
    /// not on the speaker's PCM 2, and the route follows it; unplugged, it goes, and the route goes
    /// back to the monitor plugged into HDMI 3 (connected, above the built-in speaker).
    @Test func aJackControlsEventMovesTheRouteToTheJacksOwnPCM() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try bench.load(Self.xps)
        let monitor = try bench.monitor(category: "playback", initialLines: 4)
        try bench.send("ctljack /dev/snd/controlC0 29 1")
        let plugged = try monitor.waitForLines(6)
        let added = plugged.first { $0["event"]?.string == "portAdded" && $0["port"]?["uid"]?.string == "\(Self.base)/headphones" }
        #expect(added?["port"]?["alsa"]?.string == "dmix:CARD=sofsoundwire,DEV=0", "\(monitor.lines)")
        #expect(plugged.last?["current"]?["outputs"]?.strings == ["\(Self.base)/headphones"], "\(monitor.lines)")
        try bench.send("ctljack /dev/snd/controlC0 29 0")
        let unplugged = try monitor.waitForLines(8)
        #expect(unplugged.contains { $0["event"]?.string == "portRemoved" && $0["port"]?["uid"]?.string == "\(Self.base)/headphones" })
        #expect(unplugged.last?["current"]?["outputs"]?.strings == ["\(Self.base)/hdmi-7"], "\(monitor.lines)")
        #expect(try monitor.stop() == 0)
    }

    /// Writes `json` as an emulated control device's description into the testbed and
    /// registers it, then loads the XPS record's devices (without its own description).
    static func loadXPS(_ bench: UmockdevTestbed, card: [String: Any]) throws {
        var description = card
        description["control"] = "/dev/snd/controlC0"
        description["card"] = 0
        let path = bench.scratchDirectory + "/control.json"
        try JSONSerialization.data(withJSONObject: ["cards": [description]]).write(to: URL(fileURLWithPath: path))
        try bench.send("alsa \(path)")
        try bench.loadText(String(contentsOfFile: "\(UmockdevTestbed.fixtures)/\(xps).umockdev", encoding: .utf8))
    }

    /// A control device whose PCM_NEXT_DEVICE never moves on (a kernel answers with a larger
    /// number each time): the reader stops, says why once, and the card is classified without
    /// PCM names; its jack controls still count.
    @Test func aPCMListThatNeverEndsIsRefusedNotFollowed() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try Self.loadXPS(bench, card: [
            "info": ["id": "sofsoundwire", "driver": "sof-soundwire", "name": "sof-soundwire"],
            "pcms": [["device": 0, "stream": "playback", "id": "Jack Out (*)"]],
            "pcmNextDeviceAnswer": 0,
            "controls": [["numid": 29, "iface": "card", "name": "Headphone Jack", "type": "boolean", "access": "read", "values": [1]]],
        ])
        let result = try bench.run(["ports", "--direct", "--explain", "--json", "--log-level", "notice"], timeout: 20)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("cannot read the PCM names of /dev/snd/controlC0"), "\(result.stderr)")
        guard case .array(let cards) = try JSON.parse(result.stdout), let card = cards.first, case .array(let pcms)? = card["pcms"] else {
            Issue.record("no card: \(result.stdout)")
            return
        }
        #expect(pcms.allSatisfy { $0["id"] == .null }, "no PCM names: \(pcms)")
        #expect(card["info"]?["driver"]?.string == "sof-soundwire")
        guard case .array(let ports)? = card["ports"] else { return }
        #expect(ports.contains { $0["uid"]?.string == "\(Self.base)/headphones" })
    }

    /// An HDA card whose codec says nothing (the HP 15z-fc000's empty dump, alsa-devel 2023-06-10):
    /// its phantom jack controls, read through the control device, stand for its pins: a speaker,
    /// and no built-in mic, as no phantom jack names one.
    @Test func phantomJackControlsAreReadAndStandForThePins() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try Self.loadXPS(bench, card: [
            "info": ["id": "sofsoundwire", "driver": "HDA-Intel", "name": "HD-Audio Generic"],
            "pcms": [["device": 0, "stream": "playback", "id": "ALC236 Analog"], ["device": 0, "stream": "capture", "id": "ALC236 Analog"]],
            "controls": [
                ["numid": 1, "iface": "card", "name": "Mic Jack", "type": "boolean", "access": "read", "values": [0]],
                ["numid": 2, "iface": "card", "name": "Headphone Jack", "type": "boolean", "access": "read", "values": [0]],
                ["numid": 3, "iface": "card", "name": "Speaker Phantom Jack", "type": "boolean", "access": "read", "values": [1]],
            ],
        ])
        let result = try bench.run(["ports", "--direct", "--explain", "--json", "--log-level", "notice"], timeout: 20)
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let cards) = try JSON.parse(result.stdout), let card = cards.first, case .array(let ports)? = card["ports"] else {
            Issue.record("no card: \(result.stdout)")
            return
        }
        #expect(card["phantomJacks"] == .array([.string("Speaker Phantom Jack")]))
        #expect(ports.map { "\($0["type"]?.string ?? "") \($0["availability"]?.string ?? "")" } == [
            "builtInSpeaker present", "headphones unavailable", "headsetMic unavailable",
        ])
    }

    /// A codec file larger than any codec's (1 MiB): refused before it is read whole, said once,
    /// and the card is classified without pins (its speaker stays).
    @Test func aCodecFileTooLargeIsRefusedAndTheCardStillClassified() throws {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        let line = "Node 0x14 [Pin Complex] wcaps 0x40058d: Stereo Amp-Out\n  Pin Default 0x01014010: [Jack] Line Out at Ext Rear\n"
        let huge = String(repeating: line, count: (HDACodecProc.maxBytes / line.utf8.count) + 10)
        try Self.loadXPS(bench, card: [
            "pcms": [["device": 0, "stream": "playback", "id": "HDA Analog (*)"]],
            "proc": ["codec#0": huge],
        ])
        let result = try bench.run(["ports", "--direct", "--explain", "--json", "--log-level", "notice"], timeout: 20)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("larger than \(HDACodecProc.maxBytes) bytes"), "\(result.stderr)")
        guard case .array(let cards) = try JSON.parse(result.stdout), let card = cards.first else { return }
        #expect(card["hdaPins"] == .array([]))
        guard case .array(let ports)? = card["ports"] else { return }
        #expect(ports.contains { $0["uid"]?.string == "\(Self.base)/speaker" }, "\(ports)")
    }
}
