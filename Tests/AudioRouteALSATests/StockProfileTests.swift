// alsa-ucm-conf's stock profiles, end to end on machines' own cards (docs/ucm.md): the real
// helper opens each card through the stock top-level ucm.conf, the daemon's own code turns its
// hello into ports (UCMCard, UdevPortState), and each route the daemon would ask for runs the
// profile's sequences on the fake card, whose control writes are replayed: the route's output is
// on after its request, and no two outputs of one PCM (a stream reaches every output of its PCM
// that is on) are ever on together.
import AudioRouteALSA
import AudioRouteALSAInfo
import AudioRouteCore
import AudioRouteSystem
import Testing

@testable import AudioRouteWatchers

/// One machine: its card as the kernel describes it, and the ports its hardware has.
struct StockMachine: CustomStringConvertible, Sendable {
    var name: String
    /// `audioroute_fakecard` files, relative to Tests/Fixtures.
    var cardFiles: [String] = []
    /// Cards of public alsa-info reports (Tests/Fixtures/alsa-info), rendered as fake cards
    /// (`FakeCardConfiguration.render`): their identity and every control the report saved.
    var reportCards: [ReportCard] = []
    /// The card id (`hw:<id>`).
    var card: String
    /// The uid base udev gives the card.
    var base: String
    /// Jack controls plugged when the helper starts.
    var plugged: [String] = []
    /// The ports the daemon must make, "type direction PCM", sorted: from the hardware's facts.
    var ports: [String]
    /// The verb the card's outputs are checked under.
    var verb = "HiFi"
    /// The outputs (their uids' last part: `speaker`, `headphones`) whose enable and disable
    /// sequences set some control apart, as the profile's text has them; nil: at least two.
    var switched: [String]?
    /// Outputs whose sequences set the same control as each other but for its index (HDMI1-3's
    /// `IEC958 Playback Switch`,0-2): the fake card's writes log names no index, so they cannot
    /// be told apart there, and each has a PCM of its own. Checked to set the same, then left out.
    var byIndexOnly: [String] = []
    /// The profile's verb cannot be set on this card (a control its sequences write is not the
    /// hardware's): what the failure says. The ports are checked, no route.
    var verbFails: String?

    var description: String { name }
}

extension StockMachine {
    /// The sof-essx8336 profile's ports on its PCMs (0: the codec; 5, 6: HDMI).
    static let essx8336Ports = [
        "HDMI output dmix:CARD=sofessx8336,DEV=5", "HDMI output dmix:CARD=sofessx8336,DEV=6", "builtInMic input dsnoop:CARD=sofessx8336,DEV=0",
        "builtInSpeaker output dmix:CARD=sofessx8336,DEV=0", "headphones output dmix:CARD=sofessx8336,DEV=0",
        "headsetMic input dsnoop:CARD=sofessx8336,DEV=0",
    ]
}

extension StockMachine {
    /// sof-hda-dsp with the codec's analog internal mic beside the PCH DMICs: two built-in mics.
    static let sofHDADSPInternalMic = StockMachine(
        name: "sof-hda-dsp with an analog internal mic (reconstructed)",
        cardFiles: ["ucm2/cards/sofhdadsp-card.conf", "ucm2/cards/sofhdadsp-internal-mic.conf"], card: "sofhdadsp",
        base: "pci-0000:00:1f.3-platform-skl_hda_dsp_generic", plugged: ["Headphone Jack", "Mic Jack"],
        ports: [
            "HDMI output dmix:CARD=sofhdadsp,DEV=3", "HDMI output dmix:CARD=sofhdadsp,DEV=4", "HDMI output dmix:CARD=sofhdadsp,DEV=5",
            "builtInMic input dsnoop:CARD=sofhdadsp,DEV=0", "builtInSpeaker output dmix:CARD=sofhdadsp,DEV=0",
            "headphones output dmix:CARD=sofhdadsp,DEV=0", "headsetMic input dsnoop:CARD=sofhdadsp,DEV=0",
        ],
        switched: ["headphones", "speaker"], byIndexOnly: ["hdmi-3", "hdmi-4", "hdmi-5"])
}

/// A card of a corpus report: the report's file name (without `.txt`) and the card's id.
struct ReportCard: Sendable {
    var report: String
    var card: String

    /// Writes the card's fake-card configuration into `directory`; its path.
    func render(into directory: String) throws -> String {
        let text = try readText(fixturesDirectory + "/alsa-info/\(report).txt")
        guard let hardware = try ALSAInfoReport.parse(text).hardware().first(where: { $0.record.attributes["id"] == card }) else {
            throw TestFailure("\(report): no card \(card)")
        }
        guard hardware.hasControls else { throw TestFailure("\(report): the report saved no control of \(card)") }
        let path = directory + "/\(report)-\(card).conf"
        try writeText(path, FakeCardConfiguration.render(hardware).text)
        return path
    }
}

extension StockMachine {
    static let all: [StockMachine] = [
        // Debian 12's own PinePhone profile (PinePhone/, reached through the conf.d/simple-card link):
        // one codec PCM for every device (the A64's AIF1), jacks for the headphones and the headset mic.
        StockMachine(
            name: "PinePhone", cardFiles: ["ucm2/phones/pinephone-card.conf", "ucm2/pinephone-controls.conf"], card: "PinePhone",
            base: "platform-sound", plugged: ["Headphone Jack", "Headset Microphone Jack"],
            ports: [
                "builtInMic input dsnoop:CARD=PinePhone,DEV=0", "builtInReceiver output dmix:CARD=PinePhone,DEV=0",
                "builtInSpeaker output dmix:CARD=PinePhone,DEV=0", "headphones output dmix:CARD=PinePhone,DEV=0",
                "headsetMic input dsnoop:CARD=PinePhone,DEV=0",
            ]),
        // Debian 12's Librem_5/ profile: the wm8962 on one PCM; Handset is the earpiece, Headset the
        // headset's mic, both jack ports on the one "Headphones Jack".
        StockMachine(
            name: "Librem 5", cardFiles: ["ucm2/phones/librem5-card.conf"], card: "L5", base: "platform-sound",
            plugged: ["Headphones Jack"],
            ports: [
                "builtInMic input dsnoop:CARD=L5,DEV=0", "builtInReceiver output dmix:CARD=L5,DEV=0", "builtInSpeaker output dmix:CARD=L5,DEV=0",
                "headphones output dmix:CARD=L5,DEV=0", "headsetMic input dsnoop:CARD=L5,DEV=0",
            ]),
        // sof-soundwire: the Dell XPS 17 9700's card as its public alsa-info report shows it (alsa-utils
        // issue 100: Components "cfg-spk:4 cfg-amp:2 hs:rt711 spk:rt1308 mic:rt715", every control).
        // The profile picks rt711 (Headphones on PCM 0, Headset on capture 1), rt1308 with two
        // amplifiers (Speaker, PCM 2), rt715 (Mic, capture 4) and HDMI1-3 (PCMs 5-7); Speaker and
        // Headphones switch their codecs' controls on and off, HDMI nothing.
        StockMachine(
            name: "sof-soundwire (Dell XPS 17 9700)",
            reportCards: [ReportCard(report: "laptop-dell-xps17-9700-sof-soundwire-usb-headset-wd19-dock", card: "sofsoundwire")],
            card: "sofsoundwire", base: "pci-0000:00:1f.3-platform-sof_sdw", plugged: ["Headphone Jack", "Headset Mic Jack"],
            ports: [
                "HDMI output dmix:CARD=sofsoundwire,DEV=5", "HDMI output dmix:CARD=sofsoundwire,DEV=6", "HDMI output dmix:CARD=sofsoundwire,DEV=7",
                "builtInMic input dsnoop:CARD=sofsoundwire,DEV=4", "builtInSpeaker output dmix:CARD=sofsoundwire,DEV=2",
                "headphones output dmix:CARD=sofsoundwire,DEV=0", "headsetMic input dsnoop:CARD=sofsoundwire,DEV=1",
            ],
            switched: ["headphones", "speaker"], byIndexOnly: ["hdmi-5", "hdmi-6", "hdmi-7"]),
        // hda-dsp (Skylake SST, HDA mode): the Acer Swift SF515-51T's card from its public report
        // (alsa-devel 2020-03-18, every control). Intel/hda-dsp: Speaker and Headphones on PCM 7,
        // each enable sequence turning the other's switch off (no disable sequences), Headset on
        // capture 7, the DMIC on 13, HDMI1 and HDMI2 on PCMs 10 and 11.
        StockMachine(
            name: "hda-dsp (Acer Swift SF515-51T)",
            reportCards: [ReportCard(report: "laptop-acer-swift-sf515-skylake-hda-dsp", card: "hdadsp")],
            card: "hdadsp", base: "platform-skl_hda_dsp_generic", plugged: ["Front Headphone Jack"],
            ports: [
                "HDMI output dmix:CARD=hdadsp,DEV=10", "HDMI output dmix:CARD=hdadsp,DEV=11", "builtInMic input dsnoop:CARD=hdadsp,DEV=13",
                "builtInSpeaker output dmix:CARD=hdadsp,DEV=7", "headphones output dmix:CARD=hdadsp,DEV=7", "headsetMic input dsnoop:CARD=hdadsp,DEV=7",
            ],
            switched: ["headphones", "speaker"]),
        // sof-essx8336 (a Gemini Lake laptop), reconstructed from the kernel's drivers
        // (ucm2/cards/sofessx8336-card.conf, no DMIC: the analog mic). Debian 12's profile
        // (alsa-ucm-conf 1.2.8) has Speaker, Headphones, Mic and Headset on PCM 0 and HDMI1-2 on 5
        // and 6. Its Headset device writes "Headset Switch", which the machine driver does not
        // have, and its verb's disdevall runs that device's disable sequence: the verb cannot be
        // set on the card at all (alsa-ucm-conf commit 226c9b7, in 1.2.10, writes "Headset Mic
        // Switch"). The ports come from the hello all the same.
        StockMachine(
            name: "sof-essx8336 (Gemini Lake, reconstructed)", cardFiles: ["ucm2/cards/sofessx8336-card.conf"], card: "sofessx8336",
            base: "pci-0000:00:0e.0-platform-sof-essx8336", plugged: ["Headphone Jack", "Headset Mic Jack"], ports: StockMachine.essx8336Ports,
            verbFails: "snd_use_case_set _verb HiFi: No such file or directory"),
        // The same card with that one control added (sofessx8336-headset-switch.conf, not the
        // hardware's), to run the rest of the profile: only Speaker switches anything, as its verb
        // turns "Headphone Switch" off and its Headphones device never turns it on (the same commit
        // added that sequence): on Debian 12's profile the headphones stay muted.
        StockMachine(
            name: "sof-essx8336 with \"Headset Switch\" added",
            cardFiles: ["ucm2/cards/sofessx8336-card.conf", "ucm2/cards/sofessx8336-headset-switch.conf"], card: "sofessx8336",
            base: "pci-0000:00:0e.0-platform-sof-essx8336", plugged: ["Headphone Jack", "Headset Mic Jack"], ports: StockMachine.essx8336Ports,
            switched: ["speaker"], byIndexOnly: ["hdmi-5", "hdmi-6"]),
        // bytcr-rt5640 (a Bay Trail tablet, stereo speakers, internal mic on IN1), reconstructed from
        // the kernel's drivers (ucm2/cards/bytcrrt5640-card.conf): the profile's Speaker,
        // Headphones, Mic (IN1) and Headset (IN2) on PCM 0; Speaker and Headphones each switch the
        // codec's amplifier and channel switches on and off.
        StockMachine(
            name: "bytcr-rt5640 (Bay Trail tablet, reconstructed)", cardFiles: ["ucm2/cards/bytcrrt5640-card.conf"], card: "bytcrrt5640",
            base: "platform-80860F28:00", plugged: ["Headphone Jack", "Headset Mic Jack"],
            ports: [
                "builtInMic input dsnoop:CARD=bytcrrt5640,DEV=0", "builtInSpeaker output dmix:CARD=bytcrrt5640,DEV=0",
                "headphones output dmix:CARD=bytcrrt5640,DEV=0", "headsetMic input dsnoop:CARD=bytcrrt5640,DEV=0",
            ],
            switched: ["headphones", "speaker"]),
        // An I2S SOF card: sof-glkda7219max (a Gemini Lake Chromebook), reconstructed
        // (ucm2/cards/sofglkda7219max-card.conf). The speaker amplifier has a PCM of its own (0),
        // the headset codec another (1: Headphones and the headset mic), the DMIC array 99,
        // HDMI1-3 5-7: the speaker is never on the headset codec's PCM. Speaker and Headphones
        // each switch their pin switches.
        StockMachine(
            name: "sof-glkda7219max (Gemini Lake Chromebook, reconstructed)", cardFiles: ["ucm2/cards/sofglkda7219max-card.conf"],
            card: "sofglkda7219max", base: "pci-0000:00:0e.0-platform-glk_da7219_mx98357a", plugged: ["Headphone Jack", "Headset Mic Jack"],
            ports: [
                "HDMI output dmix:CARD=sofglkda7219max,DEV=5", "HDMI output dmix:CARD=sofglkda7219max,DEV=6",
                "HDMI output dmix:CARD=sofglkda7219max,DEV=7", "builtInMic input dsnoop:CARD=sofglkda7219max,DEV=99",
                "builtInSpeaker output dmix:CARD=sofglkda7219max,DEV=0", "headphones output dmix:CARD=sofglkda7219max,DEV=1",
                "headsetMic input dsnoop:CARD=sofglkda7219max,DEV=1",
            ],
            switched: ["headphones", "speaker"], byIndexOnly: ["hdmi-5", "hdmi-6", "hdmi-7"]),
        // sof-hda-dsp (a Tiger Lake laptop: Realtek codec, two PCH DMICs), reconstructed
        // (ucm2/cards/sofhdadsp-card.conf): HDA/HiFi-analog.conf's Headphones and Speaker on PCM 0,
        // each switching its own playback switch, the headset jack's mic (Mic2, "Mic Jack") on
        // capture 0, the DMIC (Mic1) on capture 6, HDMI1-3 on PCMs 3-5.
        StockMachine(
            name: "sof-hda-dsp (Tiger Lake laptop, reconstructed)", cardFiles: ["ucm2/cards/sofhdadsp-card.conf"], card: "sofhdadsp",
            base: "pci-0000:00:1f.3-platform-skl_hda_dsp_generic", plugged: ["Headphone Jack", "Mic Jack"],
            ports: [
                "HDMI output dmix:CARD=sofhdadsp,DEV=3", "HDMI output dmix:CARD=sofhdadsp,DEV=4", "HDMI output dmix:CARD=sofhdadsp,DEV=5",
                "builtInMic input dsnoop:CARD=sofhdadsp,DEV=6", "builtInSpeaker output dmix:CARD=sofhdadsp,DEV=0",
                "headphones output dmix:CARD=sofhdadsp,DEV=0", "headsetMic input dsnoop:CARD=sofhdadsp,DEV=0",
            ],
            switched: ["headphones", "speaker"], byIndexOnly: ["hdmi-3", "hdmi-4", "hdmi-5"]),
        // The same laptop with an analog internal mic beside the DMICs (sofhdadsp-internal-mic.conf,
        // reconstructed): HiFi-analog.conf's jackless Mic3 "Internal Stereo Microphone" on capture 0
        // (CapturePriority 400) and the DMIC Mic1 on 6 (100) are one built-in mic, on Mic3's PCM.
        StockMachine.sofHDADSPInternalMic,
        // HDA-Intel with a stock profile: a Lenovo desktop's two Realtek codecs, whose kernel fixup
        // sets the long name "HDAudio-Lenovo-DualCodecs" (conf.d/HDA-Intel -> HDA/DualCodecs),
        // reconstructed (ucm2/cards/hdaintel-dualcodecs-card.conf). The rear codec's line out
        // (Line1, PCM 0), line in (Line2) and mic (Mic2) on capture 0; the front codec's headphones
        // and speaker on PCM 4, its mic (Mic1) on capture 4. The verb turns "Speaker Playback
        // Switch" on, the Speaker device's disable sequence turns it off and no enable sequence
        // turns it on again (alsa-ucm-conf 1.2.8 and upstream's HEAD alike): the speaker comes
        // back because the helper, as PulseAudio and PipeWire do, turns its PlaybackMixerElem
        // "Speaker"'s switch on when it enables the device.
        StockMachine(
            name: "HDA-Intel DualCodecs (Lenovo desktop, reconstructed)", cardFiles: ["ucm2/cards/hdaintel-dualcodecs-card.conf"], card: "PCH",
            base: "pci-0000:00:1f.3", plugged: ["Line Out Front Jack", "Front Headphone Jack", "Line Jack", "Rear Mic Jack", "Front Mic Jack"],
            ports: [
                "builtInSpeaker output dmix:CARD=PCH,DEV=4", "headphones output dmix:CARD=PCH,DEV=4", "headsetMic input dsnoop:CARD=PCH,DEV=0",
                "headsetMic input dsnoop:CARD=PCH,DEV=4", "lineIn input dsnoop:CARD=PCH,DEV=0", "lineOut output dmix:CARD=PCH,DEV=0",
            ],
            switched: ["headphones", "speaker"]),
    ]
}

/// The helper on a machine's bench.
private final class MachineHelper {
    let bench: UCMMachineBench
    let machine: StockMachine
    let process: ChildProcess
    var output: LineReader
    /// Where the report cards were rendered, removed when the helper goes.
    let rendered: String

    init(_ machine: StockMachine) throws {
        self.machine = machine
        let directory = try makeTemporaryDirectory()
        rendered = directory
        do {
            let reportFiles = try machine.reportCards.map { try $0.render(into: directory) }
            bench = try UCMMachineBench(cardFiles: machine.cardFiles.map { fixturesDirectory + "/" + $0 } + reportFiles, states: [machine.card])
        } catch {
            removeTree(directory)
            throw error
        }
        for jack in machine.plugged { try bench.setJack(jack, plugged: true, card: machine.card) }
        process = try ChildProcess(Subprocess.product("audioroute-ucm"), [], environment: bench.environment, input: .pipe)
        output = LineReader(fd: process.stdout)
    }

    deinit {
        process.closeInput()
        if process.wait(seconds: 10) == nil { process.kill() }
        removeTree(rendered)
    }

    func send(_ line: JSON) throws -> UCMHelperLine {
        process.send(line.bytes + [UInt8(ascii: "\n")])
        guard let answer = output.next(seconds: 10) else { throw TestFailure("no answer to \(line.text)") }
        return try UCMHelperLine.parse(Array(answer.utf8))
    }

    /// Sets the card to `state`; the writes it made.
    func set(_ state: UCMState) throws -> [String] {
        let answer = try send(state.request(card: "hw:" + machine.card))
        guard case .reply = answer else { throw TestFailure("\(state): \(answer)") }
        return try bench.takeWrites(machine.card)
    }
}

/// Control values as the fake card logs them: the last value written to each control.
private func values(_ writes: [String]) -> [String: String] {
    var result: [String: String] = [:]
    for write in writes {
        guard let equals = write.firstIndex(of: "=") else { continue }
        result[String(write[..<equals])] = String(write[write.index(after: equals)...])
    }
    return result
}

@Suite(.serialized) struct StockProfileTests {
    @Test(arguments: StockMachine.all)
    func theStockProfileGivesTheRightPortsAndRunsTheRightSequences(_ machine: StockMachine) throws {
        let helper = try MachineHelper(machine)
        guard case .hello(let hello) = try helper.send(.object([JSON.Member("open", .string("hw:" + machine.card))])) else {
            throw TestFailure("\(machine): no hello")
        }
        // The daemon's code: public uids, then the card's ports as UdevPortState makes them.
        let card = hello.withPublicUIDs(base: machine.base)
        let classification = UdevPortState.ucmClassification(card, jacks: [])
        let ports = classification.ports
        #expect(ports.map { "\($0.type.rawValue) \($0.direction.rawValue) \($0.alsa ?? "-")" }.sorted() == machine.ports, "\(machine)")
        #expect(Set(ports.map(\.uid)).count == ports.count, "\(machine): uids \(ports.map(\.uid))")
        #expect(ports.allSatisfy { $0.uid.hasPrefix(machine.base + "/") }, "\(machine): uids \(ports.map(\.uid))")

        if let failure = machine.verbFails {
            let answer = try helper.send(UCMState(verb: machine.verb).request(card: "hw:" + machine.card))
            guard case .reply = answer else {
                #expect("\(answer)".contains(failure), "\(machine): \(answer)")
                return
            }
            Issue.record("\(machine): the verb was set, where the profile was expected to fail: \(answer)")
            return
        }

        // Each output device's "on": the controls its enable and its disable sequences set apart;
        // for a device without a disable sequence (hda-dsp's Speaker and Headphones, each of which
        // turns the other off), those its enable sequence sets otherwise than another output's.
        let outputs = card.ports.filter { $0.port.direction.isOutput && ports.map(\.uid).contains($0.port.uid) }
        // Every write on the card, in order: the last value of each control.
        var state: [String: String] = [:]
        func record(_ writes: [String]) -> [String] {
            for write in writes { state.merge(values([write])) { _, new in new } }
            return writes
        }
        let verbState = values(record(try helper.set(UCMState(verb: machine.verb))))
        var sequences: [(uid: String, enable: [String: String], disable: [String: String])] = []
        for output in outputs {
            guard let device = output.devices[machine.verb]?.first else { continue }
            let enable = values(record(try helper.set(UCMState(verb: machine.verb, devices: [device]))))
            let disable = values(record(try helper.set(UCMState(verb: machine.verb))))
            sequences.append((output.port.uid, enable, disable))
        }
        var on: [String: [String: String]] = [:]
        for (uid, enable, disable) in sequences {
            on[uid] = enable.filter { key, value in
                if !disable.isEmpty { return disable[key] != nil && disable[key] != value }
                return sequences.contains { $0.uid != uid && $0.enable[key] != nil && $0.enable[key] != value }
            }
        }
        let indexed = Set(machine.byIndexOnly.map { machine.base + "/" + $0 })
        if let first = indexed.first {
            #expect(indexed.allSatisfy { on[$0] == on[first] && on[$0]?.isEmpty == false }, "\(machine): \(indexed.sorted()) do not set one control: \(on)")
        }
        let judged = on.filter { !$0.value.isEmpty && !indexed.contains($0.key) }
        if let switched = machine.switched {
            let roles = judged.keys.map { String($0.dropFirst(machine.base.count + 1)) }.sorted()
            #expect(roles == switched.sorted(), "\(machine): the outputs whose sequences switch something: \(on)")
        } else {
            #expect(judged.count >= 2, "\(machine): fewer than two outputs whose sequences switch something: \(on)")
        }

        // Each output in turn, as the daemon asks for it (with the card's built-in mic, if any),
        // and back to the first: after each request its output alone of its PCM's is on, and
        // replaying every write in order, never two of one PCM at once.
        let mic = ports.first { $0.type == .builtInMic }.map(\.uid)
        let pcm = Dictionary(ports.map { ($0.uid, $0.alsa?.description ?? "") }) { first, _ in first }
        func lit(_ state: [String: String], on alsa: String?) -> [String] {
            judged.filter { (alsa == nil || pcm[$0.key] == alsa) && $0.value.allSatisfy { state[$0.key] == $0.value } }.keys.sorted()
        }
        let disables = Dictionary(sequences.map { ($0.uid, $0.disable) }) { first, _ in first }
        for output in outputs + outputs.prefix(1) {
            let route = Route(inputs: mic.map { [$0] } ?? [], outputs: [output.port.uid])
            let target = card.target(route: route, configuration: nil)
            #expect(target.verb == machine.verb)
            for write in try helper.set(target) {
                state.merge(values([write])) { _, new in new }
                for alsa in Set(pcm.values) {
                    #expect(lit(state, on: alsa).count <= 1, "\(machine): \(lit(state, on: alsa)) on together after \(write), going to \(output.port.uid)")
                }
            }
            // An output whose sequences switch nothing (HDMI, headphones the codec mutes by its
            // jack) leaves every other one of its PCM off.
            let expected = judged[output.port.uid] != nil ? [output.port.uid] : []
            let now = lit(state, on: pcm[output.port.uid])
            #expect(now == expected, "\(machine): on after the route to \(output.port.uid): \(now) (all: \(lit(state, on: nil)))")
            // What the output's own disable sequence turned off, from what the verb set, is back
            // (a device whose disable sequence no enable sequence undoes stays muted once left).
            let stillOff = (disables[output.port.uid] ?? [:]).filter {
                state[$0.key] == $0.value && verbState[$0.key] != nil && verbState[$0.key] != $0.value
            }
            #expect(stillOff.isEmpty, "\(machine): after the route to \(output.port.uid), still off: \(stillOff)")
        }
    }

    /// The laptop's two built-in mics are one port's data sources, by the profile's priority; the
    /// helper enables the one the controlling session prefers (the device's CaptureSwitch, which
    /// the helper turns on when it enables it, read back from the card's writes), and the route
    /// records from that one's PCM.
    @Test func twoBuiltInMicsAreDataSourcesAndThePreferredOneIsEnabled() throws {
        var machine = StockMachine.sofHDADSPInternalMic
        // Nothing in the headset jack: the route records from the built-in mic.
        machine.plugged = []
        let helper = try MachineHelper(machine)
        guard case .hello(let hello) = try helper.send(.object([JSON.Member("open", .string("hw:" + machine.card))])) else {
            throw TestFailure("\(machine): no hello")
        }
        let card = hello.withPublicUIDs(base: machine.base)
        let ports = UdevPortState.ucmClassification(card, jacks: []).ports
        let mic = try #require(ports.first { $0.type == .builtInMic })
        #expect(mic.dataSources.map { "\($0.id) \($0.name) \($0.alsa ?? "-")" } == [
            "Mic3 Internal Stereo Microphone dsnoop:CARD=sofhdadsp,DEV=0", "Mic1 Digital Microphone dsnoop:CARD=sofhdadsp,DEV=6",
        ])

        // The daemon's tower: a recording session controls the route.
        var tower = Tower()
        _ = try tower.addPorts(ports.filter(\.availability.isUsable))
        _ = try tower.openSession(Session(id: "rec", configuration: try SessionConfiguration(category: .record)))
        _ = try tower.setActive(true, session: "rec")
        #expect(tower.route.inputs == [mic.uid])
        func apply() throws -> (devices: [String], writes: [String: String]) {
            let target = card.target(route: tower.route, configuration: tower.controllingSession?.configuration, dataSources: tower.routeDataSources)
            return (target.devices, values(try helper.set(target)))
        }
        _ = try helper.set(UCMState(verb: "HiFi"))
        var applied = try apply()
        #expect(applied.devices == ["Mic3"])
        #expect(applied.writes["Capture Switch"] == "on,on", "\(applied.writes)")
        #expect(applied.writes["Dmic0 Capture Switch"] == nil, "\(applied.writes)")
        #expect(tower.routePort(mic.uid)?.alsa?.description == "dsnoop:CARD=sofhdadsp,DEV=0")

        _ = try tower.setPreferredDataSource("Mic1", port: mic.uid, session: "rec")
        applied = try apply()
        #expect(applied.devices == ["Mic1"])
        #expect(applied.writes["Dmic0 Capture Switch"] == "on,on", "\(applied.writes)")
        #expect(tower.routePort(mic.uid)?.alsa?.description == "dsnoop:CARD=sofhdadsp,DEV=6")

        _ = try tower.setPreferredDataSource(nil, port: mic.uid, session: "rec")
        applied = try apply()
        #expect(applied.devices == ["Mic3"])
        #expect(tower.routePort(mic.uid)?.alsa?.description == "dsnoop:CARD=sofhdadsp,DEV=0")
    }
}
