// The session's answers about its route's hardware, read in process from the devices the route
// file names (SessionHardware.swift): libasound's null PCM, which takes any rate, period and
// channel count (so what is installed is what was asked) and gives the channel maps its `chmap`
// field lists; the fake card (Sources/AudioRouteFakeCard) for the volume and gain controls. No
// daemon is needed: nothing here is a D-Bus call.
import AudioRouteALSA
import AudioRouteCore
import AudioRouteSystem
@testable import AudioSession
import Glibc
import Testing

private let devices = """
    pcm.bench_out { type null chmap [ "MONO" "FL,FR" "FL,FR,FC,LFE,RL,RR" ] }
    pcm.bench_in { type null chmap [ "MONO" "FL,FR" ] }
    """

/// A session (on a bus with no daemon) reading `route` over `devices`.
private func session(_ dir: String, route: String, extra: [String] = []) throws -> AudioSession {
    try writeText(dir + "/devices.conf", devices)
    try writeText(dir + "/route.conf", route)
    let session = AudioSession(bus: .address("unix:path=\(dir)/no-bus"), appName: "hardware-test")
    return session
}

private func route(output: String, input: String, outputCard: String? = nil, inputCard: String? = nil) -> String {
    var text = """
        pcm.!audioroute_route { type plug slave.pcm "\(output)" }
        pcm.!audioroute_route_capture { type plug slave.pcm "\(input)" }

        """
    if let outputCard { text += "ctl.!audioroute { type hw card \"\(outputCard)\" }\n" }
    if let inputCard { text += "ctl.!audioroute_capture { type hw card \"\(inputCard)\" }\n" }
    return text
}

/// The plugin's variables the format preferences set in this process.
private let formatVariables = ["AUDIOROUTE_PREFERRED_SAMPLE_RATE", "AUDIOROUTE_PREFERRED_OUTPUT_CHANNELS", "AUDIOROUTE_PREFERRED_INPUT_CHANNELS"]

private func clearFormatVariables() {
    for name in formatVariables { try? Environment.set(name, to: nil) }
}

@Suite(.serialized) struct SessionHardwareTests {
    @Test func withoutPreferencesTheRouteIsReadAsItsDeviceOpensAt48kStereo() async throws {
        try await withTemporaryDirectory { dir in
            let session = try session(dir, route: route(output: "bench_out", input: "bench_in"))
            await session.setHardwareSource(routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"])
            #expect(await session.sampleRate == 48_000)
            #expect(await session.preferredSampleRate == 0)
            #expect(await session.ioBufferDuration == 0.025)
            #expect(await session.preferredIOBufferDuration == 0)
            #expect(await session.outputLatency == 0.1)
            #expect(await session.inputLatency == 0.1)
            #expect(await session.outputNumberOfChannels == 2)
            #expect(await session.inputNumberOfChannels == 2)
            #expect(await session.maximumOutputNumberOfChannels == 64)
            #expect(await session.recordPermission == .granted)
            #expect(await session.requestRecordPermission())
        }
    }

    @Test func preferencesReachTheDevice() async throws {
        try await withTemporaryDirectory { dir in
            let session = try session(dir, route: route(output: "bench_out", input: "bench_in"))
            await session.setHardwareSource(routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"])
            defer { clearFormatVariables() }  // the player's tests in this process would run at them
            try await session.setPreferredSampleRate(44_100)
            try await session.setPreferredIOBufferDuration(0.005)
            defer { Task { try? await session.setPreferredIOBufferDuration(0) } }
            try await session.setPreferredOutputNumberOfChannels(6)
            try await session.setPreferredInputNumberOfChannels(1)
            #expect(await session.preferredSampleRate == 44_100)
            #expect(await session.sampleRate == 44_100)
            // 5 ms at 44.1 kHz is 220.5 frames: libasound rounds to one side.
            let io = await session.ioBufferDuration
            #expect(abs(io - 0.005) < 0.00002)
            #expect(await session.outputNumberOfChannels == 6)
            #expect(await session.inputNumberOfChannels == 1)
            // The plugin's streams opened from now on read it (ar_io_sizes).
            #expect(Environment.variables["AUDIOROUTE_IO_BUFFER_DURATION"] == "5000")
            try await session.setPreferredIOBufferDuration(0)
            #expect(Environment.variables["AUDIOROUTE_IO_BUFFER_DURATION"] == nil)
            // Back to 25 ms, at the preferred 44.1 kHz: 1102.5 frames, rounded to one side.
            let cleared = await session.ioBufferDuration
            #expect(abs(cleared - 0.025) < 0.00002)
        }
    }

    /// The preferred rate and channel counts reach the plugin's streams (and the player's) through
    /// the process's environment, as the I/O buffer does; 0 clears them.
    @Test func theFormatPreferencesSetAndClearThePluginsVariables() async throws {
        try await withTemporaryDirectory { dir in
            let session = try session(dir, route: route(output: "bench_out", input: "bench_in"))
            await session.setHardwareSource(routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"])
            defer { clearFormatVariables() }
            try await session.setPreferredSampleRate(44_100.4)
            try await session.setPreferredOutputNumberOfChannels(6)
            try await session.setPreferredInputNumberOfChannels(1)
            #expect(formatVariables.map { Environment.variables[$0] } == ["44100", "6", "1"])
            // A refused value leaves the variable as it was.
            await #expect(throws: AudioSessionError.self) { try await session.setPreferredSampleRate(1_000_000) }
            #expect(Environment.variables["AUDIOROUTE_PREFERRED_SAMPLE_RATE"] == "44100")
            try await session.setPreferredSampleRate(0)
            try await session.setPreferredOutputNumberOfChannels(0)
            try await session.setPreferredInputNumberOfChannels(0)
            #expect(formatVariables.map { Environment.variables[$0] } == [nil, nil, nil])
        }
    }

    @Test func preferencesOutOfRangeAreRefusedAndLeaveTheOldOnes() async throws {
        try await withTemporaryDirectory { dir in
            let session = try session(dir, route: route(output: "bench_out", input: "null"))
            await session.setHardwareSource(routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"])
            defer { clearFormatVariables() }
            try await session.setPreferredSampleRate(32_000)
            for rate in [-1.0, 100, 1_000_000, .nan] {
                await #expect(throws: AudioSessionError.self) { try await session.setPreferredSampleRate(rate) }
            }
            #expect(await session.preferredSampleRate == 32_000)
            for duration in [-0.01, 0.0001, 0.5, .infinity] {
                await #expect(throws: AudioSessionError.self) { try await session.setPreferredIOBufferDuration(duration) }
            }
            await #expect(throws: AudioSessionError.self) { try await session.setPreferredOutputNumberOfChannels(65) }
            await #expect(throws: AudioSessionError.self) { try await session.setPreferredOutputNumberOfChannels(-1) }
            // The route has no input: no input channel can be asked for.
            await #expect(throws: AudioSessionError.self) { try await session.setPreferredInputNumberOfChannels(1) }
            #expect(await session.preferredOutputNumberOfChannels == 0)
        }
    }

    @Test func aSideWithoutADeviceAnswersWhatIOSAnswersWithoutIt() async throws {
        try await withTemporaryDirectory { dir in
            let session = try session(dir, route: route(output: "bench_out", input: "null"))
            await session.setHardwareSource(routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"])
            #expect(await session.inputNumberOfChannels == 0)
            #expect(await session.maximumInputNumberOfChannels == 0)
            #expect(await session.inputLatency == 0)
            #expect(await session.recordPermission == .undetermined)
            #expect(await session.isInputGainSettable == false)
            #expect(await session.outputNumberOfChannels == 2)
        }
    }

    @Test func noRouteFileMeansNothingToRead() async throws {
        let session = AudioSession(bus: .address("unix:path=/nonexistent/bus"), appName: "hardware-test")
        await session.setHardwareSource(routeFile: nil)
        #expect(await session.sampleRate == 0)
        #expect(await session.ioBufferDuration == 0)
        #expect(await session.outputLatency == 0)
        #expect(await session.outputNumberOfChannels == 0)
        #expect(await session.outputVolume == 1)
        #expect(await session.recordPermission == .undetermined)
    }

    @Test func aPortsChannelsAreNamedByItsDevicesChannelMap() async throws {
        try await withTemporaryDirectory { dir in
            let session = try session(dir, route: route(output: "bench_out", input: "null"))
            await session.setHardwareSource(routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"])
            let speaker = PortDescription(
                uid: "speaker", portType: .builtInSpeaker, portName: "Speaker", direction: .output, device: "card0",
                alsa: try ALSADevice(parsing: "bench_out"), priority: 0, sequence: 1)
            let channels = await session.channels(of: speaker)
            #expect(channels.map(\.channelName) == ["Speaker Front Left", "Speaker Front Right"])
            #expect(channels.map(\.channelNumber) == [1, 2])
            #expect(channels.allSatisfy { $0.owningPortUID == "speaker" })
            #expect(channels.map(\.position) == ["FL", "FR"])
            let none = PortDescription(uid: "x", portType: .lineOut, portName: "X", direction: .output, device: "d", priority: 0, sequence: 2)
            #expect(await session.channels(of: none).isEmpty)
        }
    }

    @Test func theVolumeAndGainAreTheCardsControls() async throws {
        try await withTemporaryDirectory { dir in
            try writeText(
                dir + "/card.conf",
                """
                audioroute_fakecard.Bench {
                    controls [
                        { name "Master Playback Volume" type integer min 0 max 100 count 2 value [ 50 50 ] }
                        { name "Master Playback Switch" type boolean count 2 value on }
                        { name "Capture Volume" type integer min 0 max 40 count 2 value [ 10 10 ] }
                    ]
                }
                """)
            let bench = try UCMMachineBench(cardFiles: [dir + "/card.conf"], states: ["Bench"])
            let session = try session(dir, route: route(output: "bench_out", input: "bench_in", outputCard: "Bench", inputCard: "Bench"))
            await session.setHardwareSource(
                routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf", bench.directory + "/bench/asound.conf"])
            // 50 of 0...100, and 10 of 0...40: the fake card's controls have no dB scale, so the raw steps.
            #expect(await session.outputVolume == 0.5)
            #expect(await session.inputGain == 0.25)
            #expect(await session.isInputGainSettable)
            _ = try bench.takeWrites("Bench")
            try await session.setInputGain(0.5)
            let writes = try bench.takeWrites("Bench")
            // libasound's simple mixer sets the channels one at a time: the last write is the state.
            #expect(writes.last == "Capture Volume=20,20")
            await #expect(throws: AudioSessionError.self) { try await session.setInputGain(1.5) }
        }
    }

    @Test func aRouteWithoutACardControlIsAtFullVolumeWithNoGain() async throws {
        try await withTemporaryDirectory { dir in
            let session = try session(dir, route: route(output: "bench_out", input: "bench_in"))
            await session.setHardwareSource(routeFile: dir + "/route.conf", configurationFiles: [dir + "/devices.conf"])
            #expect(await session.outputVolume == 1)
            #expect(await session.inputGain == 1)
            #expect(await !session.isInputGainSettable)
            await #expect(throws: AudioSessionError.self) { try await session.setInputGain(0.5) }
        }
    }

    @Test(arguments: [
        (Errno.Code.permissionDenied, RecordPermission.denied), (.notPermitted, .denied), (.deviceBusy, .granted),
        (.noSuchDevice, .undetermined), (.noSuchFileOrDirectory, .undetermined),
    ])
    func aTrialOpensErrorDecidesThePermission(_ code: Errno.Code, _ permission: RecordPermission) {
        #expect(RecordPermission(trialOpenError: -code.rawValue) == permission)
    }

    @Test func theCategoriesAndModesAreTheCoresAndThePreferenceIsReadable() async throws {
        let session = AudioSession(bus: .address("unix:path=/nonexistent/bus"), appName: "hardware-test")
        #expect(Set(session.availableCategories) == [.ambient, .soloAmbient, .playback, .record, .playAndRecord, .multiRoute, .audioProcessing])
        #expect(session.availableModes.contains(.voiceChat))
        #expect(session.availableModes.count == Mode.allCases.count)
        #expect(await session.prefersInterruptionOnRouteDisconnect)
    }
}

/// BlueALSA on a private bus, as far as its control plugin asks (GetManagedObjects): one A2DP
/// sink of 00:11:22:33:44:55 whose Volume is 0x4040 (64 of 0...127 on each channel, not muted);
/// `volume N` on its standard input sets it and says so in PropertiesChanged, as BlueALSA does.
private let blueALSAMock = #"""
    import sys
    import dbus, dbus.service
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib
    DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(sys.argv[1])
    name = dbus.service.BusName("org.bluealsa", bus)
    PCM = "/org/bluealsa/hci0/dev_00_11_22_33_44_55/a2dpsrc/sink"
    PROPERTIES = {"Device": dbus.ObjectPath("/org/bluez/hci0/dev_00_11_22_33_44_55"), "Sequence": dbus.UInt32(1),
                  "Transport": "A2DP-source", "Mode": "sink", "Format": dbus.UInt16(0x8210), "Channels": dbus.Byte(2),
                  "Sampling": dbus.UInt32(48000), "Codec": "SBC", "Delay": dbus.UInt16(0), "SoftVolume": True,
                  "Volume": dbus.UInt16(0x4040)}
    class Manager(dbus.service.Object):
        @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
        def GetManagedObjects(self):
            return {PCM: {"org.bluealsa.PCM1": PROPERTIES}}
    class Pcm(dbus.service.Object):
        @dbus.service.signal("org.freedesktop.DBus.Properties", signature="sa{sv}as")
        def PropertiesChanged(self, interface, changed, invalidated):
            pass
    Manager(bus, "/org/bluealsa")
    pcm = Pcm(bus, PCM)
    def line(source, condition):
        words = sys.stdin.readline().split()
        if words[:1] == ["volume"]:
            PROPERTIES["Volume"] = dbus.UInt16(int(words[1], 0))
            pcm.PropertiesChanged("org.bluealsa.PCM1", {"Volume": PROPERTIES["Volume"]}, [])
            print("changed", flush=True)
        return True
    GLib.io_add_watch(sys.stdin, GLib.IO_IN, line)
    print("ready", flush=True)
    GLib.MainLoop().run()
    """#

@Suite(.serialized) struct BlueALSAVolumeTests {
    /// BlueALSA's control plugin gives the A2DP volume 0...127 with a dB scale of -96...0 dB, 64
    /// at -9.75 dB (`amixer -D bluealsa:DEV=…,BAT=no sget A2DP` against the same mock). On the
    /// cube-root scale: (10^(-9.75/60) - 10^(-96/60)) / (1 - 10^(-96/60)) = 0.680.
    @Test func aBluetoothRoutesVolumeIsBlueALSAs() async throws {
        try await withTemporaryDirectory { dir in
            let bus = try PrivateBus()
            defer { bus.close() }
            let mock = try ScriptedProcess("/usr/bin/python3", ["-c", blueALSAMock, bus.address])
            defer { mock.kill() }
            guard mock.take(seconds: 20, { $0 == "ready" }) != nil else { throw TestFailure("the BlueALSA mock did not start") }
            let saved = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
            setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address, 1)
            defer { if let saved { setenv("DBUS_SYSTEM_BUS_ADDRESS", saved, 1) } else { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") } }
            try writeText(
                dir + "/route.conf",
                """
                pcm.!audioroute_route { type plug slave.pcm "bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp" }
                pcm.!audioroute_route_capture { type plug slave.pcm "null" }
                """)
            let session = AudioSession(bus: .address("unix:path=\(dir)/no-bus"), appName: "hardware-test")
            await session.setHardwareSource(routeFile: dir + "/route.conf")
            let volume = await session.outputVolume
            #expect(abs(volume - 0.680) < 0.001, "\(volume)")

            // The headset's volume goes to 32 (-19.91 dB as amixer shows it against this mock):
            // (10^(-19.91/60) - 10^(-96/60)) / (1 - 10^(-96/60)) = 0.452, observed without a read.
            let changes = await session.outputVolumeChanges
            let observer = Task { () -> Float? in
                for await value in changes { return value }
                return nil
            }
            // The watch reads its first value before it waits: give it the time to start.
            try await Task.sleep(for: .milliseconds(300))
            mock.send("volume 0x2020")
            guard mock.take(seconds: 10, { $0 == "changed" }) != nil else { throw TestFailure("the mock did not change the volume") }
            let timeout = Task {
                try await Task.sleep(for: .seconds(10))
                observer.cancel()
            }
            let changed = await observer.value
            timeout.cancel()
            let value = try #require(changed, "no change observed within 10 s")
            #expect(abs(value - 0.452) < 0.001, "\(value)")
        }
    }

    @Test func aBlueALSADevicesControlIsItsOwn() {
        #expect(RouteDevices.blueALSA("bluealsa:DEV=00:11:22:33:44:55,PROFILE=a2dp")! == ("bluealsa:DEV=00:11:22:33:44:55,BAT=no", "A2DP"))
        #expect(RouteDevices.blueALSA("bluealsa:DEV=00:11:22:33:44:55,PROFILE=sco")! == ("bluealsa:DEV=00:11:22:33:44:55,BAT=no", "SCO"))
        #expect(RouteDevices.blueALSA("dmix:CARD=PCH,DEV=0") == nil)
    }
}
