// Release-mode benchmark of the resolver and the simulator (issue 2).
//   swift run -c release audioroute-bench              all benchmarks
//   swift run -c release audioroute-bench resolve      resolution over 4, 16, 64 ports
//   swift run -c release audioroute-bench simulate     a generated 10,000-step scenario
//   audioroute-bench allocs PORTS N                    N resolutions only (count mallocs with valgrind)
//   audioroute-bench scenario FILE                     write the 10,000-step scenario to FILE
import AudioRouteCore
import AudioRouteSystem

func now() -> UInt64 { MonotonicClock.nanoseconds() }

/// A realistic port set of `count` ports: the built-ins of a phone, a wired
/// headset, then USB, Bluetooth and HDMI devices in turn.
func ports(_ count: Int) -> [Port] {
    var result = [
        Port(uid: "speaker", type: .builtInSpeaker, device: "internal", sequence: 1),
        Port(uid: "earpiece", type: .builtInReceiver, device: "internal", sequence: 2),
        Port(uid: "mic", type: .builtInMic, device: "internal", sequence: 3),
        Port(uid: "jack-hp", type: .headphones, device: "jack", sequence: 4),
    ]
    var index = 0
    while result.count < count {
        let sequence = UInt64(result.count + 1)
        switch index % 4 {
        case 0: result.append(Port(uid: "usb-\(index)", type: .usbAudio, device: "usb-\(index)", direction: .output, sequence: sequence))
        case 1: result.append(Port(uid: "bt-a2dp-\(index)", type: .bluetoothA2DP, device: "bt-\(index)", sequence: sequence))
        case 2: result.append(Port(uid: "bt-hfp-\(index)", type: .bluetoothHFP, device: "bt-\(index - 1)", sequence: sequence))
        default: result.append(Port(uid: "hdmi-\(index)", type: .HDMI, device: "gpu-\(index)", sequence: sequence))
        }
        index += 1
    }
    return Array(result.prefix(count))
}

let call = RouteRequest(configuration: try! SessionConfiguration(category: .playAndRecord, mode: .voiceChat, options: [.allowBluetoothA2DP]))

@inline(never)
func resolveMany(_ request: RouteRequest, _ ports: [Port], _ count: Int) -> Int {
    var sink = 0
    for _ in 0..<count {
        let resolution = resolveRoute(request, ports: ports)
        sink &+= (resolution.output ?? -1) &+ (resolution.input ?? -1)
    }
    return sink
}

func percentile(_ sorted: [Double], _ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }

func format(_ value: Double) -> String {
    let rounded = (value * 1000).rounded() / 1000
    return String(rounded)
}

func benchResolve() {
    print("resolve (playAndRecord/voiceChat, allowBluetoothA2DP); ns per resolution over 301 batches")
    print("ports  median_ns  p99_ns  min_ns")
    for count in [4, 16, 64] {
        let set = ports(count)
        let batch = 2000
        var sink = resolveMany(call, set, batch * 10)  // warm up
        var samples: [Double] = []
        for _ in 0..<301 {
            let start = now()
            sink &+= resolveMany(call, set, batch)
            samples.append(Double(now() - start) / Double(batch))
        }
        samples.sort()
        print("\(count)     \(format(percentile(samples, 0.5)))  \(format(percentile(samples, 0.99)))  \(format(samples[0]))   (sink \(sink & 1))")
    }
}

/// A 10,000-step scenario: devices arriving and leaving, sessions activating,
/// categories changing, overrides, a navigation app ducking.
func scenario(steps: Int) -> String {
    var out = #"{"ports": [{"uid": "speaker", "type": "builtInSpeaker", "device": "internal"}, {"uid": "earpiece", "type": "builtInReceiver", "device": "internal"}, {"uid": "mic", "type": "builtInMic", "device": "internal"}], "#
    out += #""sessions": [{"id": "music", "category": "playback"}, {"id": "nav", "category": "playback", "options": ["duckOthers"]}, {"id": "call", "category": "playAndRecord", "mode": "voiceChat"}], "steps": ["#
    let cycle = [
        #"{"activate": "music"}"#,
        #"{"add": [{"uid": "hp", "type": "headphones", "device": "jack"}, {"uid": "hsmic", "type": "headsetMic", "device": "jack"}]}"#,
        #"{"activate": "nav"}"#,
        #"{"add": [{"uid": "bt-a2dp", "type": "bluetoothA2DP", "device": "bt"}, {"uid": "bt-hfp", "type": "bluetoothHFP", "device": "bt"}]}"#,
        #"{"deactivate": {"session": "nav", "notifyOthers": true}}"#,
        #"{"activate": "call"}"#,
        #"{"override": {"session": "call", "port": "speaker"}}"#,
        #"{"remove": ["bt-a2dp", "bt-hfp"]}"#,
        #"{"deactivate": {"session": "call", "notifyOthers": true}}"#,
        #"{"remove": ["hp", "hsmic"]}"#,
    ]
    for index in 0..<steps {
        if index > 0 { out += ", " }
        out += cycle[index % cycle.count]
    }
    return out + "]}"
}

func benchSimulate() {
    let document = Array(scenario(steps: 10_000).utf8)
    print("simulate: a 10,000-step scenario (\(document.count) bytes), parse + run + render every line, 15 runs")
    var parse: [Double] = []
    var total: [Double] = []
    var bytes = 0
    for _ in 0..<15 {
        let start = now()
        let parsed = try! Scenario.parse(document)
        let parsedAt = now()
        bytes = 0
        _ = try! Simulator.run(parsed, emitUTF8: { line in bytes &+= line.count + 1 })
        let end = now()
        parse.append(Double(parsedAt - start) / 1e6)
        total.append(Double(end - start) / 1e6)
    }
    parse.sort()
    total.sort()
    print("parse median \(format(percentile(parse, 0.5))) ms; total median \(format(percentile(total, 0.5))) ms, max \(format(total.last!)) ms; output \(bytes) bytes")
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "resolve": benchResolve()
case "simulate": benchSimulate()
case "allocs":
    let count = Int(arguments.dropFirst().first ?? "16") ?? 16
    let n = Int(arguments.dropFirst(2).first ?? "0") ?? 0
    let set = ports(count)
    print(resolveMany(call, set, n) & 1)
case "scenario":
    guard let path = arguments.dropFirst().first else { fatalError("usage: audioroute-bench scenario FILE") }
    let text = scenario(steps: 10_000)
    do {
        let file = try FileDescriptor.open(path, [.writeOnly, .create, .truncate], mode: 0o644)
        try file.writeAll(Array(text.utf8))
    } catch {
        fatalError("cannot write \(path): \(error)")
    }
default:
    benchResolve()
    benchSimulate()
}
