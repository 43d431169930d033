// Spec §5: the route resolver, a pure function of the controlling session's
// request and the available ports. Selection is an ordered list of small named
// rules; for each side (output, input) the first rule that decides wins.
// Applying the choice (opening ALSA devices, announcing) is someone else's job.

/// What the controlling session asks of the route.
public struct RouteRequest: Sendable, Hashable {
    public var configuration: SessionConfiguration
    public var override: OutputOverride
    public var preferredInput: String?

    public init(configuration: SessionConfiguration = .initial, override: OutputOverride = .none, preferredInput: String? = nil) {
        self.configuration = configuration
        self.override = override
        self.preferredInput = preferredInput
    }
}

/// The rules of spec §5, in the order they are tried. `explain` reports them.
public enum RouteRuleName: String, Sendable, Hashable, Codable, CaseIterable {
    /// Rule 1: output override `speaker` in playAndRecord.
    case speakerOverride
    /// Rule 2: an available, eligible preferred input.
    case preferredInput
    /// Rule 6: multiRoute plays to every eligible wired/USB/HDMI output.
    case multiRoute
    /// Rule 3: the best eligible external output (priority, last in, type, uid);
    /// on a device with both profiles eligible, HFP stands for the device.
    case bestOutput
    /// Rule 4: the input of the chosen output's device (mic and earphones move together).
    case inputFollowsOutput
    /// Rule 4: otherwise the best eligible external input.
    case bestInput
    /// Rule 5: receiver, speaker or built-in mic.
    case builtInFallback
    /// External ports given a negative priority: only where no built-in port exists.
    case belowBuiltIns
    /// Rule 7: nothing eligible for a side the category needs.
    case noSuitableRoute
    /// The category does not use this side.
    case notUsedByCategory
}

/// The resolver's answer, as indices into the port list it was given.
/// Holds no heap storage except in multiRoute, so resolving does not allocate.
public struct Resolution: Sendable, Hashable {
    /// The primary output, if any.
    public var output: Int?
    /// Further outputs, in rank order (multiRoute only).
    public var extraOutputs: [Int] = []
    public var input: Int?
    /// The rule that decided each side.
    public var outputRule: RouteRuleName = .notUsedByCategory
    public var inputRule: RouteRuleName = .notUsedByCategory
    var outputDecided = false
    var inputDecided = false

    /// Whether a side the category needs has no port (spec §5 rule 7).
    public var lacksSuitableRoute: Bool { outputRule == .noSuitableRoute || inputRule == .noSuitableRoute }

    /// The route, by uid.
    public func route(in ports: [Port]) -> Route {
        var outputs: [String] = []
        if let output {
            outputs.reserveCapacity(1 + extraOutputs.count)
            outputs.append(ports[output].uid)
            for index in extraOutputs { outputs.append(ports[index].uid) }
        }
        return Route(inputs: input.map { [ports[$0].uid] } ?? [], outputs: outputs)
    }
}

/// A named selection step. It may decide the output side, the input side or both,
/// and leaves alone a side an earlier rule decided.
public struct RouteRule: Sendable {
    public let name: RouteRuleName
    let apply: @Sendable (_ context: RouteContext, _ resolution: inout Resolution) -> Void
}

/// The facts every rule reads.
public struct RouteContext: Sendable {
    public let ports: [Port]
    public let category: Category
    public let options: CategoryOptions
    public let override: OutputOverride
    public let preferredInput: String?

    init(ports: [Port], request: RouteRequest) {
        self.ports = ports
        self.category = request.configuration.category
        self.options = request.configuration.effectiveOptions
        self.override = request.override
        self.preferredInput = request.preferredInput
    }

    /// Spec §5 output eligibility.
    public func isEligibleOutput(_ port: Port) -> Bool { isEligibleOutput(port.type, port.direction) }

    @inline(__always)
    func isEligibleOutput(_ type: PortType, _ direction: PortDirection) -> Bool {
        guard category.hasOutput, direction.isOutput else { return false }
        switch type {
        case .builtInReceiver: return category == .playAndRecord
        case .bluetoothHFP: return options.contains(.allowBluetooth)
        case .bluetoothA2DP: return a2dpEligible
        // LE Audio carries both media and calls: eligible where A2DP is, or with allowBluetooth.
        case .bluetoothLE: return a2dpEligible || options.contains(.allowBluetooth)
        default: return true
        }
    }

    private var a2dpEligible: Bool {
        switch category {
        case .ambient, .soloAmbient, .playback: return true
        case .playAndRecord: return options.contains(.allowBluetoothA2DP)
        default: return false
        }
    }

    /// Spec §5 input eligibility.
    public func isEligibleInput(_ port: Port) -> Bool { isEligibleInput(port.type, port.direction) }

    @inline(__always)
    func isEligibleInput(_ type: PortType, _ direction: PortDirection) -> Bool {
        guard category.hasInput, direction.isInput else { return false }
        switch type {
        case .bluetoothHFP, .bluetoothLE: return options.contains(.allowBluetooth)
        default: return true
        }
    }

    /// The best of the ports matching `include`: highest priority, then highest
    /// sequence (last in wins), then table order, then uid. A total order, so the
    /// answer does not depend on the order ports are listed in.
    public func best(where include: (Int) -> Bool) -> Int? {
        // Predicates take an index and read single fields: passing whole Port
        // values would copy them (four strings each) and dominate the cost.
        var best: Int?
        for index in ports.indices where include(index) {
            if let current = best {
                if outranks(index, current) { best = index }
            } else {
                best = index
            }
        }
        return best
    }

    @inline(__always)
    func outranks(_ a: Int, _ b: Int) -> Bool { Self.outranks(ports[a], ports[b]) }

    @inline(__always)
    func eligibleOutput(_ index: Int) -> Bool { isEligibleOutput(ports[index].type, ports[index].direction) }

    @inline(__always)
    func eligibleInput(_ index: Int) -> Bool { isEligibleInput(ports[index].type, ports[index].direction) }

    @inline(__always)
    func sameDevice(_ a: Int, _ b: Int) -> Bool { ports[a].device == ports[b].device }

    /// Ranked by bestOutput/bestInput: external ports whose priority is not below
    /// the built-ins'. Built-ins are only the fallback; they never compete.
    @inline(__always)
    func rankedExternally(_ index: Int) -> Bool { !ports[index].type.isBuiltIn && ports[index].priority >= 0 }

    /// Whether the port's own device also offers an eligible HFP output.
    func deviceHasEligibleHFPOutput(_ index: Int) -> Bool {
        ports.indices.contains { ports[$0].type == .bluetoothHFP && eligibleOutput($0) && sameDevice($0, index) }
    }

    /// Whether `a` ranks above `b` (spec §5 rule 3).
    @inline(__always)
    public static func outranks(_ a: Port, _ b: Port) -> Bool {
        if a.priority != b.priority { return a.priority > b.priority }
        if a.sequence != b.sequence { return a.sequence > b.sequence }
        if a.type.rankOrder != b.type.rankOrder { return a.type.rankOrder < b.type.rankOrder }
        // A device, not a profile, competes: which of its profiles stands for it must
        // not change a tie with another device (docs/decisions.md, "ties").
        if a.device != b.device { return a.device < b.device }
        return a.uid < b.uid
    }

    /// An HFP input only goes with its own device's HFP output; in a category
    /// with no output (record) it stands alone.
    func inputKeepsHFPTogether(_ input: Int, output: Int?) -> Bool {
        guard ports[input].type == .bluetoothHFP, category.hasOutput else { return true }
        guard let output else { return false }
        return ports[output].type == .bluetoothHFP && sameDevice(output, input)
    }
}

/// The rules in the order they are tried.
public let routeRules: [RouteRule] = [
    RouteRule(name: .speakerOverride) { context, resolution in
        guard context.override == .speaker, context.category == .playAndRecord else { return }
        let ports = context.ports
        if !resolution.outputDecided,
            let speaker = context.best(where: { ports[$0].type == .builtInSpeaker && ports[$0].direction.isOutput })
        {
            resolution.decideOutput(speaker, by: .speakerOverride)
        }
        if !resolution.inputDecided, let mic = context.best(where: { ports[$0].type == .builtInMic && ports[$0].direction.isInput }) {
            resolution.decideInput(mic, by: .speakerOverride)
        }
    },
    RouteRule(name: .preferredInput) { context, resolution in
        guard !resolution.inputDecided, let uid = context.preferredInput,
            let index = context.ports.firstIndex(where: { $0.uid == uid }), context.eligibleInput(index)
        else { return }
        if context.ports[index].type == .bluetoothHFP && context.category.hasOutput {
            // The HFP link is duplex: the output must move to the same device.
            let ports = context.ports
            guard !resolution.outputDecided,
                let output = context.best(where: {
                    ports[$0].type == .bluetoothHFP && context.eligibleOutput($0) && context.sameDevice($0, index)
                })
            else { return }
            resolution.decideOutput(output, by: .preferredInput)
        }
        resolution.decideInput(index, by: .preferredInput)
    },
    RouteRule(name: .multiRoute) { context, resolution in
        guard context.category == .multiRoute, !resolution.outputDecided else { return }
        var chosen: [Int] = []
        for index in context.ports.indices {
            switch context.ports[index].type {
            case .usbAudio, .lineOut, .headphones, .HDMI, .displayPort:
                if context.eligibleOutput(index) { chosen.append(index) }
            default: break
            }
        }
        guard !chosen.isEmpty else { return }
        chosen.sort { context.outranks($0, $1) }
        resolution.decideOutput(chosen[0], by: .multiRoute)
        resolution.extraOutputs = Array(chosen.dropFirst())
    },
    RouteRule(name: .bestOutput) { context, resolution in
        guard !resolution.outputDecided, context.category.hasOutput, context.category != .multiRoute else { return }
        let ports = context.ports
        // A non-HFP input already chosen (a preferred built-in mic) keeps HFP outputs out.
        let hfpAllowed = resolution.input.map { ports[$0].type == .bluetoothHFP } ?? true
        // The best external port by rank alone. Whatever is filtered out is decided
        // from the port itself (and its own device), never from the winner, so a
        // port outside the route can never decide the route.
        let best = context.best(where: { index in
            guard context.rankedExternally(index), context.eligibleOutput(index) else { return false }
            switch ports[index].type {
            case .bluetoothHFP: return hfpAllowed
            // One device with both profiles eligible: HFP stands for the device (duplex link).
            case .bluetoothA2DP: return !(hfpAllowed && context.deviceHasEligibleHFPOutput(index))
            default: return true
            }
        })
        if let best { resolution.decideOutput(best, by: .bestOutput) }
    },
    RouteRule(name: .inputFollowsOutput) { context, resolution in
        guard !resolution.inputDecided, context.category.hasInput, let output = resolution.output else { return }
        guard
            let input = context.best(where: {
                context.eligibleInput($0) && context.sameDevice($0, output) && context.inputKeepsHFPTogether($0, output: output)
            })
        else { return }
        resolution.decideInput(input, by: .inputFollowsOutput)
    },
    RouteRule(name: .bestInput) { context, resolution in
        guard !resolution.inputDecided, context.category.hasInput else { return }
        let output = resolution.output
        guard
            let best = context.best(where: {
                context.rankedExternally($0) && context.eligibleInput($0) && context.inputKeepsHFPTogether($0, output: output)
            })
        else { return }
        resolution.decideInput(best, by: .bestInput)
    },
    RouteRule(name: .builtInFallback) { context, resolution in
        let ports = context.ports
        if !resolution.outputDecided && context.category.hasOutput {
            var chosen = context.best(where: { ports[$0].type == .builtInSpeaker && ports[$0].direction.isOutput })
            // defaultToSpeaker on a machine with no speaker still gets the receiver:
            // it is eligible, so the side must not be left empty (rule 7).
            if context.category == .playAndRecord && (!context.options.contains(.defaultToSpeaker) || chosen == nil),
                let receiver = context.best(where: { ports[$0].type == .builtInReceiver && ports[$0].direction.isOutput })
            {
                chosen = receiver
            }
            if let chosen { resolution.decideOutput(chosen, by: .builtInFallback) }
        }
        if !resolution.inputDecided && context.category.hasInput,
            let mic = context.best(where: { ports[$0].type == .builtInMic && ports[$0].direction.isInput })
        {
            resolution.decideInput(mic, by: .builtInFallback)
        }
    },
    RouteRule(name: .belowBuiltIns) { context, resolution in
        // External ports an integrator put below the built-ins (negative priority)
        // play only where the machine has no built-in port for the side.
        if !resolution.outputDecided && context.category.hasOutput && context.category != .multiRoute,
            let output = context.best(where: { !context.ports[$0].type.isBuiltIn && context.eligibleOutput($0) })
        {
            resolution.decideOutput(output, by: .belowBuiltIns)
        }
        let output = resolution.output
        if !resolution.inputDecided && context.category.hasInput,
            let input = context.best(where: {
                !context.ports[$0].type.isBuiltIn && context.eligibleInput($0) && context.inputKeepsHFPTogether($0, output: output)
            })
        {
            resolution.decideInput(input, by: .belowBuiltIns)
        }
    },
    RouteRule(name: .noSuitableRoute) { context, resolution in
        if !resolution.outputDecided && context.category.hasOutput { resolution.outputRule = .noSuitableRoute }
        if !resolution.inputDecided && context.category.hasInput { resolution.inputRule = .noSuitableRoute }
    },
]

extension Resolution {
    mutating func decideOutput(_ index: Int, by rule: RouteRuleName) {
        output = index
        outputRule = rule
        outputDecided = true
    }

    mutating func decideInput(_ index: Int, by rule: RouteRuleName) {
        input = index
        inputRule = rule
        inputDecided = true
    }
}

/// Resolves the route for `request` over `ports` (spec §5).
public func resolveRoute(_ request: RouteRequest, ports: [Port]) -> Resolution {
    let context = RouteContext(ports: ports, request: request)
    var resolution = Resolution()
    for rule in routeRules {
        rule.apply(context, &resolution)
        if resolution.outputDecided && resolution.inputDecided { break }
    }
    return resolution
}
