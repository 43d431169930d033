// The ALSA files the project generates, loaded as libasound loads them for a user: over
// the system's configuration (alsa.conf and its conf.d, with BlueALSA's 20-bluealsa.conf)
// and over earlier definitions of the same names. Each must override (`pcm.!name`) what
// it redefines: merged into BlueALSA's `pcm.bluealsa`, the demo's did not even load
// (issue 14), and the PCMs must open and play where the text says.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteALSA
@testable import AudioRouteDemo
import Testing

/// A private copy of the system's ALSA configuration, which must hold BlueALSA's
/// `pcm.bluealsa` with its `@args` (/etc/alsa/conf.d/20-bluealsa.conf, installed by
/// scripts/bootstrap), as every BlueALSA user has it.
private func systemConfigurationWithBlueALSA() throws -> ALSAConfiguration {
    let configuration = try ALSAConfiguration.system()
    guard configuration.contains("pcm.bluealsa.@args") else {
        throw TestFailure("the system's ALSA configuration has no BlueALSA pcm.bluealsa (/etc/alsa/conf.d/20-bluealsa.conf): run scripts/bootstrap")
    }
    return configuration
}

/// Opens `name` from `configuration`, plays `frames` (S16_LE stereo 48 kHz) and drains.
private func play(_ frames: [UInt8], on name: String, configuration: borrowing ALSAConfiguration) throws {
    var pcm = try PCM(name: name, configuration: configuration)
    try pcm.configure(format: .s16LE, channels: 2, rate: 48000)
    #expect(try pcm.write(frames) == frames.count / 4, "\(name)")
    try pcm.drain()
}

@Suite struct GeneratedALSAConfigTests {
    /// The route file over the system's configuration and a user's older lines that define
    /// its names otherwise: its own definitions (`audioroute_route`, `audioroute_route_capture`)
    /// replace them whole. Merged, the plug got a `card` field and the capture side kept the
    /// old `@args`, and neither opened ("Unknown field card"). The public `audioroute`, defined
    /// before (by the ALSA plugin's configuration, or a user), is kept whole: not replaced, not
    /// merged into (issue 17).
    @Test func theRouteFileReplacesEarlierDefinitionsOfItsNamesAndKeepsThePublicOnes() throws {
        try withSyncTemporaryDirectory { dir in
            var configuration = try systemConfigurationWithBlueALSA()
            try configuration.load(text: """
                pcm.!routetest_out { type file slave.pcm "null" file "\(dir)/out.raw" format "raw" }
                pcm.!routetest_own { type file slave.pcm "null" file "\(dir)/own.raw" format "raw" }
                pcm.audioroute_route { type hw card 0 device 0 }
                pcm.audioroute_route_capture { @args [ CARD ] @args.CARD { type string default "0" } type hw card $CARD }
                pcm.audioroute { type plug slave.pcm "routetest_own" }

                """)
            let out = Port(uid: "usb-out", type: .usbAudio, device: "usb-out", direction: .output, alsa: "routetest_out")
            try configuration.load(text: AlsaRouteConfig(output: out, input: nil).text)

            let frames = pattern(4800 * 4, seed: 21)
            try play(frames, on: AlsaRouteConfig.outputPCM, configuration: configuration)
            #expect(try AtomicFile.read(dir + "/out.raw") == frames)
            // The input side is the null device: it opens for capture, under both names.
            _ = try PCM(name: AlsaRouteConfig.inputPCM, stream: .capture, configuration: configuration)
            _ = try PCM(name: AlsaRouteConfig.publicInputPCM, stream: .capture, configuration: configuration)
            // The earlier public name plays where it said.
            let own = pattern(960 * 4, seed: 22)
            try play(own, on: AlsaRouteConfig.publicOutputPCM, configuration: configuration)
            #expect(try AtomicFile.read(dir + "/own.raw") == own)
            #expect(try AtomicFile.read(dir + "/out.raw") == frames)
        }
    }

    /// The controls replace earlier definitions too: nothing of an older `ctl.audioroute`
    /// (a BlueALSA control's `device`) is left in the card's `hw` control.
    @Test func theRouteFilesControlsReplaceEarlierDefinitions() throws {
        var configuration = try systemConfigurationWithBlueALSA()
        try configuration.load(text: """
            ctl.audioroute { type bluealsa device "00:00:00:00:00:00" battery "yes" }
            ctl.audioroute_capture { @args [ DEV ] @args.DEV { type string default "x" } type bluealsa device $DEV }

            """)
        let headphones = Port(uid: "hp", type: .headphones, device: "pci", alsa: "dmix:CARD=PCH,DEV=0")
        let mic = Port(uid: "mic", type: .headsetMic, device: "pci", alsa: "dsnoop:CARD=PCH,DEV=0")
        try configuration.load(text: AlsaRouteConfig(output: headphones, input: mic).text)
        for name in [AlsaRouteConfig.publicOutputPCM, AlsaRouteConfig.publicInputPCM] {
            // (#expect cannot take a ~Copyable operand: the values are read first.)
            let type = configuration.string(at: "ctl.\(name).type")
            let card = configuration.string(at: "ctl.\(name).card")
            let leftovers = ["device", "battery", "@args"].filter { configuration.contains("ctl.\(name).\($0)") }
            #expect(type == "hw")
            #expect(card == "PCH")
            #expect(leftovers.isEmpty, "ctl.\(name) kept an earlier definition's \(leftovers)")
        }
    }

    /// The demo's configuration, as `audioroute demo` loads it, over the system's with
    /// BlueALSA's `pcm.bluealsa`: it loads, and every device and both Bluetooth profiles
    /// open and play into their own file. Merged into BlueALSA's, it failed to load
    /// ("default is not a string") and the demo stopped at once.
    @Test func theDemosConfigurationPlaysOverBlueALSAsOwn() throws {
        try withSyncTemporaryDirectory { dir in
            var configuration = try systemConfigurationWithBlueALSA()
            // FIFO mode writes `<name>.fifo` directly (no demo-sink child); with no FIFO
            // there, the file PCM makes a regular file.
            let devices = DemoDevices(dir: dir, executable: "/nonexistent", fifos: true)
            try configuration.load(text: devices.configuration)
            var opened: [(name: String, file: String)] = DemoDevices.names.map { ($0, $0) }
            opened += [("a2dp", "bluealsa_a2dp"), ("sco", "bluealsa_sco")].map { profile, file in
                ("bluealsa:DEV=\(DemoStory.btAddress),PROFILE=\(profile)", file)
            }
            for (offset, device) in opened.enumerated() {
                let frames = pattern(960 * 4, seed: UInt32(30 + offset))
                try play(frames, on: device.name, configuration: configuration)
                #expect(try AtomicFile.read("\(dir)/\(device.file).fifo") == frames, "\(device.name) played into \(device.file)")
            }
        }
    }
}
