// Test helper: one AudioSession in its own process, driven by commands on
// standard input, reporting replies and notifications as JSON lines on standard
// output. Lets end-to-end tests run several apps against one daemon.
//
//   audiosession-probe BUS-ADDRESS APP
//   stdin:  category C [MODE] [opt,opt] | activate | deactivate [notify] | override speaker|none
//           | prefer UID|none | route | hint | close
//   stdout: {"reply":"category"} | {"error":"invalidOption","message":...}
//           | {"notification":"interruption","type":"began","reason":"default","shouldResume":false} ...

import AudioRouteCore
import AudioRouteSystem
import AudioSession
import Dispatch

func emit(_ members: [JSON.Member]) {
    StandardStream.output.write(JSON.object(members).text + "\n")
}

func describe(_ error: AudioSessionError) -> [JSON.Member] {
    let code: String
    switch error {
    case .invalidOption: code = "invalidOption"
    case .invalidOverride: code = "invalidOverride"
    case .unknownName: code = "unknownName"
    case .unknownPort: code = "unknownPort"
    case .notAnInput: code = "notAnInput"
    case .unknownDataSource: code = "unknownDataSource"
    case .notOwner: code = "notOwner"
    case .notSaved: code = "notSaved"
    case .invalidArguments: code = "invalidArguments"
    case .limitsExceeded: code = "limitsExceeded"
    case .accessDenied: code = "accessDenied"
    case .daemonUnavailable: code = "daemonUnavailable"
    case .remote: code = "remote"
    case .badReply: code = "badReply"
    }
    return [.init("error", .string(code)), .init("message", .string(error.description))]
}

func report(_ notification: AudioSessionNotification) {
    var members: [JSON.Member] = []
    switch notification {
    case .routeChange(let info):
        members = [
            .init("notification", "routeChange"), .init("reason", .string(info.reason.rawValue)),
            .init("previous", info.previousRoute.route.json), .init("current", info.currentRoute.route.json),
        ]
    case .interruption(let info):
        members = [
            .init("notification", "interruption"), .init("type", .string(info.type.rawValue)),
            .init("reason", info.reason.map { .string($0.rawValue) } ?? .null), .init("shouldResume", .bool(info.options.contains(.shouldResume))),
        ]
    case .portsChanged(let kind, let port): members = [.init("notification", "portsChanged"), .init("change", .string(kind.rawValue)), .init("uid", .string(port.uid))]
    case .allPortsChanged(let kind, let port):
        members = [
            .init("notification", "allPortsChanged"), .init("change", .string(kind.rawValue)), .init("uid", .string(port.uid)),
            .init("availability", port.availability.map { .string($0.rawValue) } ?? .null),
        ]
    case .silentModeChanged(let on): members = [.init("notification", "silentModeChanged"), .init("on", .bool(on))]
    case .screenLockChanged(let locked): members = [.init("notification", "screenLockChanged"), .init("locked", .bool(locked))]
    case .ducked: members = [.init("notification", "ducked")]
    case .unducked: members = [.init("notification", "unducked")]
    case .silenced: members = [.init("notification", "silenced")]
    case .unsilenced: members = [.init("notification", "unsilenced")]
    case .silenceSecondaryAudioHint(let type): members = [.init("notification", "silenceSecondaryAudioHint"), .init("type", .string(type.rawValue))]
    case .mediaServicesWereLost: members = [.init("notification", "mediaServicesWereLost")]
    case .mediaServicesWereReset: members = [.init("notification", "mediaServicesWereReset")]
    case .sessionActivity(let activity):
        members = [.init("notification", "sessionActivity"), .init("session", .string(activity.path)), .init("change", .string(activity.change.rawValue))]
    }
    emit(members)
}

/// Standard input's lines, read on a thread of their own.
func inputLines() -> AsyncStream<String> {
    AsyncStream { continuation in
        DispatchQueue.global().async {
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = (try? chunk.withUnsafeMutableBytes { buffer in try StandardStream.input.withDescriptor { (input) throws(Errno) in try input.read(into: buffer) } }) ?? 0
                if n == 0 { break }
                pending += chunk[0..<n]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            continuation.finish()
        }
    }
}

func perform(_ words: [String], _ session: AudioSession) async throws(AudioSessionError) -> [JSON.Member] {
    switch words.first {
    case "category":
        guard words.count >= 2, let category = Category(rawValue: words[1]) else { throw .unknownName("category") }
        let mode = words.count >= 3 ? Mode(rawValue: words[2]) ?? .default : .default
        var options: CategoryOptions = []
        if words.count >= 4 { for name in words[3].split(separator: ",") { options.formUnion(CategoryOptions(name: String(name)) ?? []) } }
        try await session.setCategory(category, mode: mode, options: options)
    case "activate": try await session.setActive(true)
    case "deactivate": try await session.setActive(false, options: words.contains("notify") ? .notifyOthersOnDeactivation : [])
    case "override": try await session.overrideOutputAudioPort(words.count > 1 && words[1] == "speaker" ? .speaker : .none)
    case "prefer": try await session.setPreferredInput(uid: words.count > 1 && words[1] != "none" ? words[1] : nil)
    case "route":
        return [.init("reply", "route"), .init("route", try await session.currentRoute.route.json)]
    case "hint":
        return [
            .init("reply", "hint"), .init("secondaryAudioShouldBeSilencedHint", .bool(try await session.secondaryAudioShouldBeSilencedHint)),
            .init("isOtherAudioPlaying", .bool(try await session.isOtherAudioPlaying)), .init("active", .bool(try await session.isActive)),
        ]
    case "inputs":
        // availableInputs, each with its data sources (ids), the selected one and the preferred one.
        let inputs = try await session.availableInputs
        return [
            .init("reply", "inputs"),
            .init("inputs", .array(inputs.map { input in
                .object([
                    .init("uid", .string(input.uid)),
                    .init("dataSources", input.dataSources.map { .array($0.map { .string($0.dataSourceID) }) } ?? .null),
                    .init("names", input.dataSources.map { .array($0.map { .string($0.dataSourceName) }) } ?? .null),
                    .init("selected", input.selectedDataSource.map { .string($0.dataSourceID) } ?? .null),
                    .init("preferred", input.preferredDataSource.map { .string($0.dataSourceID) } ?? .null),
                    .init("location", input.dataSources?.first?.location.map(JSON.string) ?? .null),
                ])
            })),
        ]
    case "datasource":
        // datasource PORT ID|none: the port description's setPreferredDataSource, by ids.
        guard words.count == 3 else { throw .unknownName("datasource PORT ID|none") }
        try await session.setPreferredDataSource(id: words[2] == "none" ? nil : words[2], port: words[1])
    case "inputdatasource":
        // The session's inputDataSources / inputDataSource / outputDataSources.
        return [
            .init("reply", "inputdatasource"),
            .init("inputDataSources", try await session.inputDataSources.map { .array($0.map { .string($0.dataSourceID) }) } ?? .null),
            .init("inputDataSource", try await session.inputDataSource.map { .string($0.dataSourceID) } ?? .null),
            .init("outputDataSources", await session.outputDataSources.map { .array($0.map { .string($0.dataSourceID) }) } ?? .null),
        ]
    case "setinputdatasource":
        // setinputdatasource ID|none: setInputDataSource with the current input's data source of that id.
        guard words.count == 2 else { throw .unknownName("setinputdatasource ID|none") }
        let source = words[1] == "none" ? nil : try await session.inputDataSources?.first { $0.dataSourceID == words[1] }
            ?? DataSourceDescription(dataSourceID: words[1], dataSourceName: words[1])
        try await session.setInputDataSource(source)
    case "close": await session.close()
    default: throw .unknownName("command \(words.first ?? "")")
    }
    return [.init("reply", .string(words[0]))]
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    emit([.init("error", "usage"), .init("message", "audiosession-probe BUS-ADDRESS APP")])
    CurrentProcess.exit(2)
}
let session = AudioSession(bus: .address(arguments[1]), appName: arguments[2])
let notifications = await session.notifications
let reporter = Task { for await notification in notifications { report(notification) } }
do {
    try await session.connect()
    emit([.init("ready", .bool(await session.isDaemonRunning))])
} catch {
    emit(describe(error))
    CurrentProcess.exit(1)
}
for await line in inputLines() {
    let words = line.split(separator: " ").map(String.init)
    if words.isEmpty { continue }
    do { emit(try await perform(words, session)) } catch { emit(describe(error)) }
}
await session.close()
reporter.cancel()
