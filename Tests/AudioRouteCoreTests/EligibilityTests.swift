// Spec §5 eligibility: which ports each category may use, for every port type,
// category and Bluetooth option.
@testable import AudioRouteCore
import Testing

private let outputCategories: Set<Category> = [.ambient, .soloAmbient, .playback, .playAndRecord, .multiRoute]
private let inputCategories: Set<Category> = [.record, .playAndRecord, .multiRoute]

/// Spec §5 output eligibility, written out independently of the resolver.
private func expectedOutput(_ type: PortType, _ category: Category, _ options: CategoryOptions) -> Bool {
    guard outputCategories.contains(category) else { return false }
    let a2dp = [.ambient, .soloAmbient, .playback].contains(category) || (category == .playAndRecord && options.contains(.allowBluetoothA2DP))
    switch type {
    case .builtInMic, .headsetMic, .lineIn: return false
    case .builtInReceiver: return category == .playAndRecord
    case .bluetoothHFP: return options.contains(.allowBluetooth)
    case .bluetoothA2DP: return a2dp
    // Not in the spec: LE Audio carries media and calls (the resolver's documented choice).
    case .bluetoothLE: return a2dp || options.contains(.allowBluetooth)
    default: return true
    }
}

/// Spec §5 input eligibility.
private func expectedInput(_ type: PortType, _ category: Category, _ options: CategoryOptions) -> Bool {
    guard inputCategories.contains(category) else { return false }
    switch type {
    case .builtInMic, .headsetMic, .lineIn, .usbAudio: return true
    case .bluetoothHFP, .bluetoothLE: return options.contains(.allowBluetooth)
    default: return false
    }
}

struct EligibilityCase: Sendable, CustomTestStringConvertible {
    var category: Category
    var options: CategoryOptions
    var type: PortType
    var testDescription: String { "\(type.rawValue) in \(category.rawValue) \(options.names)" }
}

/// Every category with every valid combination of the Bluetooth options, and every port type.
private let eligibilityCases: [EligibilityCase] = Category.allCases.flatMap { category in
    [CategoryOptions(), .allowBluetooth, .allowBluetoothA2DP, [.allowBluetooth, .allowBluetoothA2DP]]
        .filter { (try? SessionConfiguration(category: category, options: $0)) != nil }
        .flatMap { options in PortType.allCases.map { EligibilityCase(category: category, options: options, type: $0) } }
}

@Suite("Spec §5: eligibility")
struct EligibilityTests {
    @Test("every port type in every category and Bluetooth option set", arguments: eligibilityCases)
    func eligibility(_ c: EligibilityCase) throws {
        let candidate = port("p", c.type)
        let context = RouteContext(ports: [candidate], request: try request(c.category, options: c.options))
        #expect(context.isEligibleOutput(candidate) == expectedOutput(c.type, c.category, c.options))
        #expect(context.isEligibleInput(candidate) == expectedInput(c.type, c.category, c.options))
    }

    @Test("the matrix covers the options that matter")
    func matrixCoverage() {
        #expect(eligibilityCases.contains { $0.category == .playAndRecord && $0.options == [.allowBluetooth, .allowBluetoothA2DP] })
        #expect(eligibilityCases.contains { $0.category == .record && $0.options == .allowBluetooth })
        #expect(!eligibilityCases.contains { $0.category == .multiRoute && $0.options.contains(.allowBluetoothA2DP) })
    }

    @Test("a port's direction limits the side it can serve")
    func direction() throws {
        let context = RouteContext(ports: [], request: try request(.playAndRecord))
        #expect(context.isEligibleOutput(port("u", .usbAudio, direction: .output)))
        #expect(!context.isEligibleInput(port("u", .usbAudio, direction: .output)))
        #expect(context.isEligibleInput(port("u", .usbAudio, direction: .input)))
        #expect(!context.isEligibleOutput(port("u", .usbAudio, direction: .input)))
        #expect(context.isEligibleInput(port("u", .usbAudio, direction: .duplex)))
        #expect(context.isEligibleOutput(port("u", .usbAudio, direction: .duplex)))
    }

    // The same rules seen through whole routes.

    @Test("A2DP is the route in output-only categories", arguments: [Category.ambient, .soloAmbient, .playback])
    func a2dpInOutputOnly(category: Category) throws {
        let ports = phone + [port("a2dp", .bluetoothA2DP, sequence: 10)]
        #expect(resolve(try request(category), ports) == Route(outputs: ["a2dp"]))
    }

    @Test("A2DP in playAndRecord only with allowBluetoothA2DP, never in multiRoute")
    func a2dpElsewhere() throws {
        let ports = phone + [port("a2dp", .bluetoothA2DP, sequence: 10)]
        #expect(resolve(try request(.playAndRecord), ports) == Route(inputs: ["mic"], outputs: ["rcv"]))
        #expect(resolve(try request(.playAndRecord, options: .allowBluetoothA2DP), ports) == Route(inputs: ["mic"], outputs: ["a2dp"]))
        #expect(resolve(try request(.multiRoute), ports) == Route(inputs: ["mic"], outputs: ["spk"]))
    }

    @Test("HFP only with allowBluetooth", arguments: [Category.ambient, .soloAmbient, .playback, .playAndRecord, .multiRoute])
    func hfpNeedsAllowBluetooth(category: Category) throws {
        let ports = phone + [port("hfp", .bluetoothHFP, direction: .duplex, sequence: 10)]
        let route = resolve(try request(category), ports)
        #expect(!route.outputs.contains("hfp") && !route.inputs.contains("hfp"))
        if category == .playAndRecord {
            #expect(resolve(try request(category, options: .allowBluetooth), ports) == Route(inputs: ["hfp"], outputs: ["hfp"]))
        }
    }

    @Test("the receiver only in playAndRecord", arguments: Category.allCases)
    func receiverOnlyInPlayAndRecord(category: Category) throws {
        let route = resolve(try request(category), phone)
        #expect(route.outputs.contains("rcv") == (category == .playAndRecord))
    }

    @Test("no inputs for output-only categories, no outputs for record and audioProcessing", arguments: Category.allCases)
    func sidesPerCategory(category: Category) throws {
        let ports = phone + wiredHeadset(sequence: 10) + [port("usb", .usbAudio, direction: .duplex, sequence: 20)]
        let route = resolve(try request(category), ports)
        #expect(route.inputs.isEmpty == !inputCategories.contains(category))
        #expect(route.outputs.isEmpty == !outputCategories.contains(category))
    }
}
