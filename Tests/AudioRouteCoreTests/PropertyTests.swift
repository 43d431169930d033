// Properties of the resolver and the tower over random port sets, session
// requests and request sequences (PropertyBased). A failure prints the input and
// a seed to reproduce it with `.fixedSeed(...)`.
@testable import AudioRouteCore
import PropertyBased
import Testing

// MARK: Generators

/// A random port set: devices of every kind, some with several ports, random
/// directions where the type allows them, sometimes a raised or lowered
/// priority, and sequences that may tie across devices (the resolver must
/// still be total).
func randomPorts(using rng: inout some RandomNumberGenerator) -> [Port] {
    var ports: [Port] = []
    for device in 0..<Int.random(in: 0...7, using: &rng) {
        var types: [(PortType, PortDirection?)] = []
        switch Int.random(in: 0..<8, using: &rng) {
        case 0:
            if Bool.random(using: &rng) { types.append((.builtInSpeaker, nil)) }
            if Bool.random(using: &rng) { types.append((.builtInReceiver, nil)) }
            if Bool.random(using: &rng) { types.append((.builtInMic, nil)) }
        case 1:
            types.append((.headphones, nil))
            if Bool.random(using: &rng) { types.append((.headsetMic, nil)) }
        case 2:
            if Bool.random(using: &rng) {
                types.append((.usbAudio, .duplex))
            } else {
                types.append((.usbAudio, .output))
                types.append((.usbAudio, .input))
            }
        case 3:
            if Bool.random(using: &rng) { types.append((.bluetoothA2DP, nil)) }
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: types.append((.bluetoothHFP, .duplex))
            case 1: types += [(.bluetoothHFP, .output), (.bluetoothHFP, .input)]
            default: break
            }
            if Int.random(in: 0..<4, using: &rng) == 0 { types.append((.bluetoothLE, .duplex)) }
        case 4:
            types.append((Bool.random(using: &rng) ? .HDMI : .displayPort, nil))
        case 5:
            types.append((.lineOut, nil))
            if Bool.random(using: &rng) { types.append((.lineIn, nil)) }
        default:
            let type = PortType.allCases.randomElement(using: &rng)!
            types.append((type, type.allowedDirections.randomElement(using: &rng)))
        }
        // A device's ports share its connection sequence (the tower numbers per
        // device) and, like the udev rules set them, one priority when raised or
        // lowered. Sequences of different devices may tie.
        let sequence = UInt64.random(in: 1...12, using: &rng)
        let priority: Int? = Int.random(in: 0..<4, using: &rng) == 0 ? Int.random(in: -20...200, using: &rng) : nil
        for (index, (type, direction)) in types.enumerated() {
            ports.append(
                Port(
                    uid: "d\(device).\(index).\(type.rawValue)", type: type, device: "d\(device)", direction: direction,
                    priority: priority, sequence: sequence))
        }
    }
    return ports
}

/// A valid request: any category and mode, options drawn from those the category accepts.
func randomRequest(for ports: [Port], using rng: inout some RandomNumberGenerator) -> RouteRequest {
    let category = Category.allCases.randomElement(using: &rng)!
    let mode = Mode.allCases.randomElement(using: &rng)!
    var options: CategoryOptions = []
    for (_, option) in CategoryOptions.named where (try? SessionConfiguration(category: category, options: option)) != nil {
        if Int.random(in: 0..<3, using: &rng) == 0 { options.formUnion(option) }
    }
    var preferred: String?
    let inputs = ports.filter(\.direction.isInput).map(\.uid)
    switch Int.random(in: 0..<5, using: &rng) {
    case 0: preferred = "missing"
    case 1, 2: preferred = inputs.randomElement(using: &rng)
    default: preferred = nil
    }
    // Every option was checked alone; together they are valid too.
    let configuration = try! SessionConfiguration(category: category, mode: mode, options: options)
    return RouteRequest(configuration: configuration, override: Int.random(in: 0..<3, using: &rng) == 0 ? .speaker : .none, preferredInput: preferred)
}

struct ResolverCase: Sendable, CustomStringConvertible {
    var ports: [Port]
    var request: RouteRequest
    /// A permutation of the ports, for the order property.
    var shuffled: [Port]

    var description: String {
        let c = request.configuration
        let list = ports.map { "\($0.uid)[\($0.direction.rawValue) p\($0.priority) s\($0.sequence)]" }.joined(separator: ", ")
        return "\(c.category.rawValue)/\(c.mode.rawValue) \(c.options.names) override \(request.override.rawValue) prefer \(request.preferredInput ?? "-"); ports: \(list)"
    }
}

let resolverCases = Generator<ResolverCase, Shrink.None<ResolverCase>> { rng in
    let ports = randomPorts(using: &rng)
    let request = randomRequest(for: ports, using: &rng)
    return ResolverCase(ports: ports, request: request, shuffled: ports.shuffled(using: &rng))
}

/// The uid pool the tower properties draw from: a phone, a wired headset, a USB
/// headset, a Bluetooth headset with both profiles, HDMI, line out and LE Audio.
let portPool: [Port] = [
    port("spk", .builtInSpeaker, device: "internal"), port("rcv", .builtInReceiver, device: "internal"),
    port("mic", .builtInMic, device: "internal"), port("hp", .headphones, device: "jack"), port("hsmic", .headsetMic, device: "jack"),
    port("usb", .usbAudio, device: "usb", direction: .duplex), port("a2dp", .bluetoothA2DP, device: "bt"),
    port("hfp", .bluetoothHFP, device: "bt", direction: .duplex), port("hdmi", .HDMI, device: "gpu"), port("line", .lineOut, device: "line"),
    port("le", .bluetoothLE, device: "le", direction: .duplex), port("linein", .lineIn, device: "line"),
]
let sessionPool = ["a", "b", "c"]

/// A random step. Many are refused on purpose: unknown sessions and ports,
/// duplicates, options the category refuses, the speaker override outside
/// playAndRecord, outputs given as preferred inputs.
func randomStep(using rng: inout some RandomNumberGenerator) -> Scenario.Step {
    func session() -> String { Int.random(in: 0..<8, using: &rng) == 0 ? "ghost" : sessionPool.randomElement(using: &rng)! }
    func somePort() -> Port {
        var chosen = portPool.randomElement(using: &rng)!
        if Int.random(in: 0..<4, using: &rng) == 0 { chosen.priority = Int.random(in: -20...200, using: &rng) }
        chosen.alsa = ["hw:0", "hw:1", nil].randomElement(using: &rng)!
        return chosen
    }
    switch Int.random(in: 0..<15, using: &rng) {
    case 0, 1: return .add((0..<Int.random(in: 1...2, using: &rng)).map { _ in somePort() })
    case 2, 3: return .remove((0..<Int.random(in: 1...2, using: &rng)).map { _ in Bool.random(using: &rng) ? portPool.randomElement(using: &rng)!.uid : "nope" })
    case 4:
        var options: CategoryOptions = []
        for (_, option) in CategoryOptions.named where Int.random(in: 0..<5, using: &rng) == 0 { options.formUnion(option) }
        return .setCategory(
            session: session(), category: Category.allCases.randomElement(using: &rng)!, mode: Mode.allCases.randomElement(using: &rng)!,
            options: options)
    case 5, 6: return .activate(session: session())
    case 7: return .deactivate(session: session(), notifyOthers: Bool.random(using: &rng))
    case 8: return .override(session: session(), port: OutputOverride.allCases.randomElement(using: &rng)!)
    case 9: return .preferInput(session: session(), uid: Int.random(in: 0..<4, using: &rng) == 0 ? nil : portPool.randomElement(using: &rng)!.uid)
    case 10: return .setPriority(uid: portPool.randomElement(using: &rng)!.uid, priority: Int.random(in: -20...200, using: &rng))
    case 11: return .update(somePort())
    case 12: return Bool.random(using: &rng) ? .close(session: session()) : .open(Session(id: session()))
    case 13: return Bool.random(using: &rng) ? .silentMode(Bool.random(using: &rng)) : .screenLocked(Bool.random(using: &rng))
    default: return .wake
    }
}

struct TowerRun: Sendable, CustomStringConvertible {
    var scenario: Scenario
    var description: String {
        "ports \(scenario.ports.map(\.uid)), sessions \(scenario.sessions.map { "\($0.id):\($0.configuration.category.rawValue)" }), steps \(scenario.steps)"
    }
}

let towerRuns = Generator<TowerRun, Shrink.None<TowerRun>> { rng in
    let ports = portPool.filter { _ in Bool.random(using: &rng) }
    var sessions: [Session] = []
    for id in sessionPool {
        let request = randomRequest(for: [], using: &rng)
        sessions.append(Session(id: id, configuration: request.configuration))
    }
    let steps = (0..<Int.random(in: 1...30, using: &rng)).map { _ in randomStep(using: &rng) }
    return TowerRun(scenario: Scenario(ports: ports, sessions: sessions, steps: steps))
}

// MARK: Resolver properties

@Suite("Properties: resolver")
struct ResolverProperties {
    @Test("the route only contains available, eligible ports, one per side (several outputs only in multiRoute)")
    func onlyEligiblePorts() async {
        await propertyCheck(count: 1000, input: resolverCases) { c in
            let route = resolve(c.request, c.ports)
            let context = RouteContext(ports: c.ports, request: c.request)
            let category = c.request.configuration.category
            for uid in route.outputs {
                let found = c.ports.first { $0.uid == uid }
                #expect(found.map(context.isEligibleOutput) == true, "output \(uid)")
            }
            for uid in route.inputs {
                let found = c.ports.first { $0.uid == uid }
                #expect(found.map(context.isEligibleInput) == true, "input \(uid)")
            }
            #expect(route.inputs.count <= 1)
            #expect(Set(route.outputs).count == route.outputs.count)
            if category != .multiRoute { #expect(route.outputs.count <= 1) }
            if !category.hasOutput { #expect(route.outputs.isEmpty) }
            if !category.hasInput { #expect(route.inputs.isEmpty) }
            // An HFP input never goes with another device's or profile's output.
            if category.hasOutput, let input = c.ports.first(where: { $0.uid == route.inputs.first }), input.type == .bluetoothHFP {
                let output = c.ports.first { $0.uid == route.outputs.first }
                #expect(output?.type == .bluetoothHFP && output?.device == input.device)
            }
        }
    }

    @Test("removing a port that is not in the route never changes the route")
    func removingUnusedPort() async {
        await propertyCheck(count: 1000, input: resolverCases) { c in
            let resolution = resolveRoute(c.request, ports: c.ports)
            let route = resolution.route(in: c.ports)
            for removed in c.ports where !route.outputs.contains(removed.uid) && !route.inputs.contains(removed.uid) {
                let rest = c.ports.filter { $0.uid != removed.uid }
                #expect(resolve(c.request, rest) == route, "after removing \(removed.uid)")
            }
        }
    }

    @Test("the resolution does not depend on the order of the port list")
    func orderIndependent() async {
        await propertyCheck(count: 1000, input: resolverCases) { c in
            let first = resolveRoute(c.request, ports: c.ports)
            let second = resolveRoute(c.request, ports: c.shuffled)
            #expect(first.route(in: c.ports) == second.route(in: c.shuffled))
            #expect(first.outputRule == second.outputRule)
            #expect(first.inputRule == second.inputRule)
        }
    }

    @Test("a category that needs a side gets one whenever one of its ports is there")
    func needsAreMet() async {
        await propertyCheck(count: 1000, input: resolverCases) { c in
            let resolution = resolveRoute(c.request, ports: c.ports)
            let context = RouteContext(ports: c.ports, request: c.request)
            let category = c.request.configuration.category
            // Any eligible output other than the receiver (built-in fallback only) and
            // HFP (kept out by a preferred non-HFP input) can be the route...
            let anyOutput = c.ports.contains {
                context.isEligibleOutput($0) && $0.type != .builtInReceiver && $0.type != .bluetoothHFP
            }
            if category.hasOutput && anyOutput { #expect(resolution.outputRule != .noSuitableRoute) }
            // ...and an eligible input other than a stray HFP input always can.
            let anyInput = c.ports.contains { context.isEligibleInput($0) && $0.type != .bluetoothHFP }
            if category.hasInput && anyInput { #expect(resolution.inputRule != .noSuitableRoute) }
        }
    }
}

/// The devices of a route's ports, outputs and inputs.
private func routeDevices(_ route: Route, _ ports: [Port]) -> Set<String> {
    Set((route.outputs + route.inputs).compactMap { uid in ports.first { $0.uid == uid }?.device })
}

/// The reason a successful step's route change must carry, where the spec fixes it.
private func expectedReason(_ step: Scenario.Step) -> RouteChangeReason? {
    switch step {
    case .add: return .newDeviceAvailable
    case .remove: return .oldDeviceUnavailable
    default: return nil
    }
}

// MARK: Tower properties

@Suite("Properties: tower")
struct TowerProperties {
    @Test("a refused request never changes the tower's state")
    func refusedChangesNothing() async {
        await propertyCheck(count: 300, input: towerRuns) { run in
            guard var simulator = try? Simulator(scenario: run.scenario) else {
                Issue.record("the generated scenario should load")
                return
            }
            for step in run.scenario.steps {
                let before = TowerSnapshot(simulator.tower)
                do {
                    _ = try simulator.apply(step)
                } catch {
                    #expect(TowerSnapshot(simulator.tower) == before, "refused \(step) with \(error)")
                }
            }
        }
    }

    @Test("the step generator produces every kind of refusal (the property above is not vacuous)")
    func refusalsAreGenerated() throws {
        var refused = Set<String>()
        var rng = SplitMix64(seed: 2026)
        for _ in 0..<50 {
            var simulator = try Simulator(scenario: Scenario(ports: portPool, sessions: sessionPool.map { Session(id: $0) }, steps: []))
            for _ in 0..<30 {
                do { _ = try simulator.apply(randomStep(using: &rng)) } catch { refused.insert(error.code) }
            }
        }
        #expect(refused == ["invalidOption", "invalidOverride", "unknownSession", "unknownPort", "duplicatePort", "duplicateSession", "notAnInput"])
    }

    /// Also issue 14's property: a port event that moves the route is a configuration change
    /// only if the route's devices, outputs and inputs, stay the same.
    @Test("a route change is announced exactly when the route differs, with the port event's reason")
    func changeIffRouteDiffers() async {
        await propertyCheck(count: 500, input: towerRuns) { run in
            guard var simulator = try? Simulator(scenario: run.scenario) else {
                Issue.record("the generated scenario should load")
                return
            }
            for step in run.scenario.steps {
                let before = simulator.tower.route
                let devicesBefore = routeDevices(before, simulator.tower.ports)
                guard let outcome = try? simulator.apply(step) else { continue }
                let after = simulator.tower.route
                if before != after {
                    #expect(outcome.change?.uids == RouteChange(reason: outcome.change?.reason ?? .unknown, previous: before, current: after), "\(step)")
                    // A port event names the reason, unless the route stays on the same
                    // devices (a profile switch): then it is a configuration change.
                    let sameDevices = !devicesBefore.isEmpty && devicesBefore == routeDevices(after, simulator.tower.ports)
                    if let reason = expectedReason(step) {
                        #expect(outcome.change?.reason == (sameDevices ? .routeConfigurationChange : reason), "\(step)")
                    } else if case .update = step {
                        let reason = outcome.change?.reason
                        if reason == .routeConfigurationChange { #expect(sameDevices, "\(step) moved \(before) to \(after)") }
                        // Moving to other devices names the arrival or departure (an update
                        // leaving a needed side empty says so instead, as other requests do).
                        if !sameDevices { #expect([.newDeviceAvailable, .oldDeviceUnavailable, .noSuitableRouteForCategory].contains(reason), "\(step)") }
                    }
                } else if let change = outcome.change {
                    // Same ports: only a configuration change of a route port is announced.
                    #expect(change.reason == .routeConfigurationChange, "\(step)")
                    if case .update = step {} else { Issue.record("a configuration change from \(step)") }
                }
                #expect(after == resolve(simulator.tower.controllingSession?.request ?? RouteRequest(), simulator.tower.ports))
            }
        }
    }

    @Test("the generated runs move the route by port events both within and across devices (the reason property is not vacuous)")
    func portEventMovesAreGenerated() throws {
        var seen = Set<String>()
        var rng = SplitMix64(seed: 14)
        for _ in 0..<2000 {
            // As towerRuns draws them: some of the pool's ports, sessions in random configurations.
            let ports = portPool.filter { _ in Bool.random(using: &rng) }
            let sessions = sessionPool.map { Session(id: $0, configuration: randomRequest(for: [], using: &rng).configuration) }
            var simulator = try Simulator(scenario: Scenario(ports: ports, sessions: sessions, steps: []))
            for _ in 0..<30 {
                let step = randomStep(using: &rng)
                let (before, ports) = (simulator.tower.route, simulator.tower.ports)
                guard let outcome = try? simulator.apply(step), simulator.tower.route != before, let reason = outcome.change?.reason else { continue }
                let same = routeDevices(before, ports) == routeDevices(simulator.tower.route, simulator.tower.ports)
                switch step {
                case .add: seen.insert("add \(same ? "same" : "other") \(reason.rawValue)")
                case .remove: seen.insert("remove \(same ? "same" : "other") \(reason.rawValue)")
                case .update: seen.insert("update \(same ? "same" : "other") \(reason.rawValue)")
                default: break
                }
            }
        }
        for expected in [
            "add same routeConfigurationChange", "add other newDeviceAvailable",
            "remove same routeConfigurationChange", "remove other oldDeviceUnavailable",
            "update same routeConfigurationChange", "update other newDeviceAvailable", "update other oldDeviceUnavailable",
        ] {
            #expect(seen.contains(expected), "never generated: \(expected); seen \(seen.sorted())")
        }
    }

    @Test("every successful arrival and removal is reported in portsChanged")
    func portsChanged() async {
        await propertyCheck(count: 300, input: towerRuns) { run in
            guard var simulator = try? Simulator(scenario: run.scenario) else { return }
            for step in run.scenario.steps {
                guard let outcome = try? simulator.apply(step) else { continue }
                switch step {
                case .add(let ports):
                    #expect(outcome.portChanges.map(\.kind) == ports.map { _ in .added })
                    #expect(outcome.portChanges.map(\.port.uid) == ports.map(\.uid))
                case .remove(let uids):
                    var unique: [String] = []
                    for uid in uids where !unique.contains(uid) { unique.append(uid) }
                    #expect(outcome.portChanges.map(\.kind) == unique.map { _ in .removed })
                    #expect(outcome.portChanges.map(\.port.uid) == unique)
                default: break
                }
            }
        }
    }

    @Test("removing ports outside the route moves nothing and interrupts nobody")
    func removingUnusedPorts() async {
        await propertyCheck(count: 300, input: towerRuns) { run in
            guard var simulator = try? Simulator(scenario: run.scenario) else { return }
            for step in run.scenario.steps {
                let tower = simulator.tower
                guard let outcome = try? simulator.apply(step), case .remove(let uids) = step else { continue }
                let removed = tower.ports.filter { uids.contains($0.uid) }
                guard !removed.contains(where: { tower.route.outputs.contains($0.uid) || tower.route.inputs.contains($0.uid) }) else {
                    continue
                }
                #expect(outcome.change == nil, "\(step)")
                #expect(simulator.tower.route == tower.route)
                #expect(!outcome.events.contains { if case .interruptionBegan = $0.kind { true } else { false } })
            }
        }
    }
}

// MARK: JSON

@Suite("Properties: JSON")
struct JSONProperties {
    static let strings = Generator<String, Shrink.None<String>> { rng in
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...20, using: &rng) {
            let ranges: [ClosedRange<UInt32>] = [0...0x7F, 0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFF, 0x10000...0x10FFFF]
            if let scalar = Unicode.Scalar(UInt32.random(in: ranges.randomElement(using: &rng)!, using: &rng)) { scalars.append(scalar) }
        }
        return String(scalars)
    }

    @Test("any string survives writing and reading back")
    func stringRoundTrip() async {
        await propertyCheck(count: 1000, input: Self.strings) { text in
            let value = JSON.object([JSON.Member(text, .array([.string(text), .integer(Int64(text.unicodeScalars.count))]))])
            let parsed = try JSON.parse(value.text)
            #expect(parsed == value)
        }
    }
}

/// A small deterministic generator for tests that must not depend on luck.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

// MARK: Robustness against bad input

/// A valid document, damaged at a few random places (bytes replaced, inserted or
/// dropped), or pure noise.
let damagedDocuments = Generator<[UInt8], Shrink.None<[UInt8]>> { rng in
    if Int.random(in: 0..<5, using: &rng) == 0 {
        return (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }
    var bytes = Array(specExampleDocument.utf8)
    let alphabet = Array(#"{}[]:,"\ -0123456789.eEtrufalsn"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xED, 0xA0, 0xFF]
    for _ in 0..<Int.random(in: 1...4, using: &rng) where !bytes.isEmpty {
        let index = Int.random(in: 0..<bytes.count, using: &rng)
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: bytes[index] = alphabet.randomElement(using: &rng)!
        case 1: bytes.insert(alphabet.randomElement(using: &rng)!, at: index)
        default: bytes.remove(at: index)
        }
    }
    return bytes
}

@Suite("Properties: bad input")
struct BadInputProperties {
    @Test("damaged JSON is parsed or refused with a positioned fault; what parses round-trips")
    func damagedJSON() async {
        await propertyCheck(count: 2000, input: damagedDocuments) { bytes in
            do {
                let value = try JSON.parse(bytes)
                let again = try JSON.parse(value.text)
                #expect(again == value)
            } catch let error as JSONSyntaxError {
                #expect(error.line >= 1 && error.column >= 1 && !error.message.isEmpty)
            }
        }
    }

    @Test("a damaged scenario is refused with a named fault, or runs to the end")
    func damagedScenario() async {
        await propertyCheck(count: 2000, input: damagedDocuments) { bytes in
            let scenario: Scenario
            do {
                scenario = try Scenario.parse(bytes)
            } catch let error as ScenarioError {
                #expect(!error.message.isEmpty)
                return
            }
            var lines = 0
            _ = try Simulator.run(scenario) { line in
                lines += 1
                #expect((try? JSON.parse(line)) != nil, "every line is JSON")
            }
            #expect(lines == scenario.steps.count + 1)
        }
    }
}
