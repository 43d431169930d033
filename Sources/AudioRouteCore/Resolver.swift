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
    /// Rule 3: the best eligible external output (priority, last in, type, uid).
    case bestOutput
    /// Rule 4: the input of the chosen output's device (mic and earphones move together).
    case inputFollowsOutput
    /// Rule 4: otherwise the best eligible external input.
    case bestInput
    /// Rule 5: receiver, speaker or built-in mic.
    case builtInFallback
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
    public func isEligibleOutput(_ port: Port) -> Bool {
        guard category.hasOutput, port.direction.isOutput else { return false }
        switch port.type {
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
    public func isEligibleInput(_ port: Port) -> Bool {
        guard category.hasInput, port.direction.isInput else { return false }
        switch port.type {
        case .bluetoothHFP, .bluetoothLE: return options.contains(.allowBluetooth)
        default: return true
        }
    }

    /// The best of the ports matching `include`: highest priority, then highest
    /// sequence (last in wins), then table order, then uid. A total order, so the
    /// answer does not depend on the order ports are listed in.
    public func best(where include: (Port) -> Bool) -> Int? {
        var best: Int?
        for index in ports.indices where include(ports[index]) {
            if let current = best {
                if Self.outranks(ports[index], ports[current]) { best = index }
            } else {
                best = index
            }
        }
        return best
    }

    /// Whether `a` ranks above `b` (spec §5 rule 3).
    public static func outranks(_ a: Port, _ b: Port) -> Bool {
        if a.priority != b.priority { return a.priority > b.priority }
        if a.sequence != b.sequence { return a.sequence > b.sequence }
        if a.type.tableOrder != b.type.tableOrder { return a.type.tableOrder < b.type.tableOrder }
        return a.uid < b.uid
    }

    /// An HFP input only goes with its own device's HFP output; in a category
    /// with no output (record) it stands alone.
    func inputKeepsHFPTogether(_ port: Port, output: Int?) -> Bool {
        guard port.type == .bluetoothHFP, category.hasOutput else { return true }
        guard let output else { return false }
        return ports[output].type == .bluetoothHFP && ports[output].device == port.device
    }
}

/// The rules in the order they are tried.
public let routeRules: [RouteRule] = [
    RouteRule(name: .speakerOverride) { context, resolution in
        guard context.override == .speaker, context.category == .playAndRecord else { return }
        if !resolution.outputDecided, let speaker = context.best(where: { $0.type == .builtInSpeaker && $0.direction.isOutput }) {
            resolution.decideOutput(speaker, by: .speakerOverride)
        }
        if !resolution.inputDecided, let mic = context.best(where: { $0.type == .builtInMic && $0.direction.isInput }) {
            resolution.decideInput(mic, by: .speakerOverride)
        }
    },
    RouteRule(name: .preferredInput) { context, resolution in
        guard !resolution.inputDecided, let uid = context.preferredInput,
            let index = context.ports.firstIndex(where: { $0.uid == uid }),
            context.isEligibleInput(context.ports[index])
        else { return }
        let port = context.ports[index]
        if port.type == .bluetoothHFP && context.category.hasOutput {
            // The HFP link is duplex: the output must move to the same device.
            guard !resolution.outputDecided,
                let output = context.best(where: {
                    $0.type == .bluetoothHFP && $0.device == port.device && context.isEligibleOutput($0)
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
            let port = context.ports[index]
            switch port.type {
            case .usbAudio, .lineOut, .headphones, .HDMI, .displayPort:
                if context.isEligibleOutput(port) { chosen.append(index) }
            default: break
            }
        }
        guard !chosen.isEmpty else { return }
        chosen.sort { RouteContext.outranks(context.ports[$0], context.ports[$1]) }
        resolution.decideOutput(chosen[0], by: .multiRoute)
        resolution.extraOutputs = Array(chosen.dropFirst())
    },
    RouteRule(name: .bestOutput) { context, resolution in
        guard !resolution.outputDecided, context.category.hasOutput, context.category != .multiRoute else { return }
        // A non-HFP input already chosen (a preferred built-in mic) keeps HFP outputs out.
        let hfpAllowed = resolution.input.map { context.ports[$0].type == .bluetoothHFP } ?? true
        guard
            let best = context.best(where: {
                context.isEligibleOutput($0) && (hfpAllowed || $0.type != .bluetoothHFP)
            }), !context.ports[best].type.isBuiltIn
        else { return }
        var chosen = best
        let port = context.ports[best]
        if port.type == .bluetoothA2DP && hfpAllowed,
            let hfp = context.best(where: { $0.type == .bluetoothHFP && $0.device == port.device && context.isEligibleOutput($0) })
        {
            // One device with both profiles eligible: HFP, the session needs a duplex link.
            chosen = hfp
        }
        resolution.decideOutput(chosen, by: .bestOutput)
    },
    RouteRule(name: .inputFollowsOutput) { context, resolution in
        guard !resolution.inputDecided, context.category.hasInput, let output = resolution.output else { return }
        let device = context.ports[output].device
        guard
            let input = context.best(where: {
                $0.device == device && context.isEligibleInput($0) && context.inputKeepsHFPTogether($0, output: output)
            })
        else { return }
        resolution.decideInput(input, by: .inputFollowsOutput)
    },
    RouteRule(name: .bestInput) { context, resolution in
        guard !resolution.inputDecided, context.category.hasInput else { return }
        let output = resolution.output
        guard
            let best = context.best(where: {
                context.isEligibleInput($0) && context.inputKeepsHFPTogether($0, output: output)
            }), !context.ports[best].type.isBuiltIn
        else { return }
        resolution.decideInput(best, by: .bestInput)
    },
    RouteRule(name: .builtInFallback) { context, resolution in
        if !resolution.outputDecided && context.category.hasOutput {
            let speaker = context.best(where: { $0.type == .builtInSpeaker && $0.direction.isOutput })
            var chosen = speaker
            // defaultToSpeaker on a machine with no speaker still gets the receiver:
            // it is eligible, so the side must not be left empty (rule 7).
            if context.category == .playAndRecord && (!context.options.contains(.defaultToSpeaker) || speaker == nil),
                let receiver = context.best(where: { $0.type == .builtInReceiver && $0.direction.isOutput })
            {
                chosen = receiver
            }
            if let chosen { resolution.decideOutput(chosen, by: .builtInFallback) }
        }
        if !resolution.inputDecided && context.category.hasInput,
            let mic = context.best(where: { $0.type == .builtInMic && $0.direction.isInput })
        {
            resolution.decideInput(mic, by: .builtInFallback)
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
