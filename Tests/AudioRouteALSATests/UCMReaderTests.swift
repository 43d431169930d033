// UCM read through libasound (snd_use_case_*) from the configurations that
// alsa-ucm-conf installs in /usr/share/alsa/ucm2, unchanged, with no sound card
// (docs/ucm.md, "Opening the files without the hardware"): a fake control
// device (Tests/Fixtures/ucm2/fake-card-ctl.c, built here with cc) gives libasound
// the card identity that UCM substitutes, and Tests/Fixtures/ucm2/ucm.conf
// stands in for the top-level file so the card name finds PinePhone/ and Librem_5/.
import AudioRouteALSA
import AudioRouteCore
import Glibc
import Testing

/// The bench's directory, set up once per process.
private let ucmBench: Result<String, TestFailure> = {
    do {
        let dir = try makeTemporaryDirectory()
        let fixtures = Subprocess.packageRoot + "/Tests/Fixtures/ucm2"
        let plugin = dir + "/libasound_module_ctl_audioroute_fakecard.so"
        // The compiler as scripts/build-alsa-plugin picks it: cc, else the Swift toolchain's clang.
        let cc = try Subprocess.run(
            "/bin/sh",
            [
                "-c", "exec \"${CC:-$(command -v cc || command -v clang || echo cc)}\" -DPIC -shared -fPIC -o \"$0\" \"$1\" -lasound",
                plugin, fixtures + "/fake-card-ctl.c",
            ])
        guard cc.status == 0 else { return .failure(TestFailure("cc fake-card-ctl.c: \(cc.stderr)")) }
        // ucm2: every installed entry, linked, except the top-level file.
        let ucm2 = dir + "/ucm2"
        guard mkdir(ucm2, 0o755) == 0 else { return .failure(TestFailure("mkdir \(ucm2)")) }
        let installed = "/usr/share/alsa/ucm2"
        guard let stream = opendir(installed) else { return .failure(TestFailure("opendir \(installed)")) }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." || name == "ucm.conf" { continue }
            guard symlink(installed + "/" + name, ucm2 + "/" + name) == 0 else {
                return .failure(TestFailure("symlink \(name)"))
            }
        }
        try writeText(ucm2 + "/ucm.conf", try readText(fixtures + "/ucm.conf"))
        try writeText(dir + "/asound.conf", """
            ctl_type.audioroute_fakecard { lib "\(plugin)" }
            ctl.!hw { @args [ CARD ] @args.CARD { type string } type audioroute_fakecard id $CARD }
            audioroute_fakecard.sofhdadsp { driver "sof-hda-dsp" name "sof-hda-dsp" longname "LENOVO-20XX" }

            """)
        return .success(dir)
    } catch let error as TestFailure {
        return .failure(error)
    } catch {
        return .failure(TestFailure("\(error)"))
    }
}()

/// Runs `body` with the bench in libasound's environment, restored after:
/// libasound reads ALSA_CONFIG_PATH and ALSA_CONFIG_UCM2 from the environment
/// (process-wide), and child processes of other tests inherit it.
private func withUCMBench<T>(_ body: () throws -> T) throws -> T {
    let dir = try ucmBench.get()
    let names = ["ALSA_CONFIG_PATH", "ALSA_CONFIG_UCM2"]
    let saved: [(String, String?)] = names.map { name in (name, getenv(name).map { String(cString: $0) }) }
    setenv("ALSA_CONFIG_PATH", "/usr/share/alsa/alsa.conf:" + dir + "/asound.conf", 1)
    setenv("ALSA_CONFIG_UCM2", dir + "/ucm2", 1)
    defer {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
    return try body()
}

private func read(_ card: String) throws -> UCMConfiguration {
    try withUCMBench { try UCMReader.read(card: card) }
}

private func summary(_ ports: [UCMPort]) -> [String] {
    ports.map {
        let devices = $0.dataSources.map(\.device).joined(separator: "+")
        return "\($0.port.type.rawValue) \(devices) \($0.port.alsa ?? "-") \($0.jackControl ?? "-")"
    }
}

@Suite(.serialized) struct UCMReaderTests {
    @Test func pinePhone() throws {
        let config = try read("hw:PinePhone")
        #expect(config.verbs.map(\.name) == ["HiFi", "Voice Call"])
        for verb in config.verbs {
            #expect(verb.devices.map(\.name) == ["Speaker", "Earpiece", "DigitalMic", "HeadsetMic", "Headphone"])
            #expect(summary(UCMPortMapping.ports(card: "PinePhone", verb: verb)) == [
                "builtInSpeaker Speaker hw:PinePhone,0 -",
                "builtInReceiver Earpiece hw:PinePhone,0 -",
                "headsetMic HeadsetMic hw:PinePhone,0 Headset Microphone Jack",
                "headphones Headphone hw:PinePhone,0 Headphone Jack",
                "builtInMic DigitalMic hw:PinePhone,0 -",
            ])
        }
        // The call verb prefers the earpiece, HiFi the speaker (PlaybackPriority).
        let hifi = try #require(config.verb("HiFi")), call = try #require(config.verb("Voice Call"))
        #expect(hifi.devices[0].values["PlaybackPriority"] == "300")
        #expect(hifi.devices[1].values["PlaybackPriority"] == "100")
        #expect(call.devices[0].values["PlaybackPriority"] == "100")
        #expect(call.devices[1].values["PlaybackPriority"] == "300")
    }

    @Test func librem5() throws {
        let config = try read("hw:Librem_5")
        #expect(config.verbs.map(\.name) == ["HiFi"])
        let hifi = try #require(config.verb("HiFi"))
        #expect(summary(UCMPortMapping.ports(card: "Librem_5", verb: hifi)) == [
            "builtInReceiver Handset hw:Librem_5,0 -",
            "builtInSpeaker Speaker hw:Librem_5,0 -",
            "headphones Headphones hw:Librem_5,0 Headphones Jack",
            "headsetMic Headset hw:Librem_5,0 Headphones Jack",
            "builtInMic Mic hw:Librem_5,0 -",
        ])
    }

    /// conf.d/sof-hda-dsp/sof-hda-dsp.conf, found by the card's driver name as on
    /// a real laptop. Its devices depend on the card's controls (ControlExists)
    /// and components ("cfg-dmics:"); the fake card has neither, so only the
    /// unconditional ones appear: the headphone jack and its mic.
    @Test func sofLaptopWithoutControls() throws {
        let config = try read("hw:sofhdadsp")
        #expect(config.verbs.map(\.name) == ["HiFi"])
        let hifi = try #require(config.verb("HiFi"))
        #expect(summary(UCMPortMapping.ports(card: "sofhdadsp", verb: hifi)) == [
            "headphones Headphones hw:sofhdadsp Headphone Jack",
            "headsetMic Mic hw:sofhdadsp Mic Jack",
        ])
    }

    /// A card name without "hw:" is matched against the cards present (none
    /// here), and a fake card whose driver has no configuration finds none:
    /// both are errors, not empty configurations.
    @Test func noMatchingConfigurationIsAnError() throws {
        try withUCMBench {
            #expect(throws: ALSAError.self) { try UCMReader.read(card: "PinePhone") }
            #expect(throws: ALSAError.self) { try UCMReader.read(card: "hw:NoSuchCard") }
        }
    }
}
