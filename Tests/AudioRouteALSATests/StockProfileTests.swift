// alsa-ucm-conf's stock profiles, end to end on machines' own cards (docs/ucm.md): the real
// helper opens each card through the stock top-level ucm.conf, the daemon's own code turns its
// hello into ports (UCMCard, UdevPortState), and each route the daemon would ask for runs the
// profile's sequences on the fake card, whose control writes are replayed: the route's output is
// on after its request, and no two outputs are ever on together.
import AudioRouteALSA
import AudioRouteCore
import Testing

@testable import AudioRouteWatchers

/// One machine: its card as the kernel describes it, and the ports its hardware has.
struct StockMachine: CustomStringConvertible, Sendable {
    var name: String
    /// `audioroute_fakecard` files, relative to Tests/Fixtures.
    var cardFiles: [String]
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

    var description: String { name }
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
    ]
}

/// The helper on a machine's bench.
private final class MachineHelper {
    let bench: UCMMachineBench
    let machine: StockMachine
    let process: ChildProcess
    var output: LineReader

    init(_ machine: StockMachine) throws {
        self.machine = machine
        bench = try UCMMachineBench(cardFiles: machine.cardFiles.map { fixturesDirectory + "/" + $0 }, states: [machine.card])
        for jack in machine.plugged { try bench.setJack(jack, plugged: true, card: machine.card) }
        process = try ChildProcess(Subprocess.product("audioroute-ucm"), [], environment: bench.environment, input: .pipe)
        output = LineReader(fd: process.stdout)
    }

    deinit {
        process.closeInput()
        if process.wait(seconds: 10) == nil { process.kill() }
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

        // Each output device's "on": the controls its enable and its disable sequences set apart.
        let outputs = card.ports.filter { $0.port.direction.isOutput && ports.map(\.uid).contains($0.port.uid) }
        _ = try helper.set(UCMState(verb: machine.verb))
        var on: [String: [String: String]] = [:]
        for output in outputs {
            guard let device = output.devices[machine.verb]?.first else { continue }
            let enable = values(try helper.set(UCMState(verb: machine.verb, devices: [device])))
            let disable = values(try helper.set(UCMState(verb: machine.verb)))
            on[output.port.uid] = enable.filter { disable[$0.key] != nil && disable[$0.key] != $0.value }
        }
        let judged = on.filter { !$0.value.isEmpty }
        #expect(judged.count >= 2, "\(machine): fewer than two outputs whose sequences switch something: \(on)")

        // Each output in turn, as the daemon asks for it (with the card's built-in mic, if any),
        // and back to the first: after each request its output alone is on, and replaying every
        // write in order, never two at once.
        let mic = ports.first { $0.type == .builtInMic }.map(\.uid)
        var state: [String: String] = [:]
        for output in outputs + outputs.prefix(1) {
            let route = Route(inputs: mic.map { [$0] } ?? [], outputs: [output.port.uid])
            let target = card.target(route: route, configuration: nil)
            #expect(target.verb == machine.verb)
            for write in try helper.set(target) {
                state.merge(values([write])) { _, new in new }
                let lit = judged.filter { $0.value.allSatisfy { state[$0.key] == $0.value } }.keys.sorted()
                #expect(lit.count <= 1, "\(machine): \(lit) on together after \(write), going to \(output.port.uid)")
            }
            let lit = judged.filter { $0.value.allSatisfy { state[$0.key] == $0.value } }.keys.sorted()
            if judged[output.port.uid] != nil {
                #expect(lit == [output.port.uid], "\(machine): on after the route to \(output.port.uid): \(lit)")
            }
        }
    }
}
