// The real libasound output path with no hardware: `file` PCMs (test-bench.md).
// Route A then route B: opening `audioroute` writes into A's file, then B's.
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import AudioRouteALSA
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Two file PCMs standing in for two devices.
private func benchConfiguration(_ dir: String) -> String {
    """
    pcm.!routetest_a { type file slave.pcm "null" file "\(dir)/a.raw" format "raw" }
    pcm.!routetest_b { type file slave.pcm "null" file "\(dir)/b.raw" format "raw" }
    pcm.!routetest_mic { type file slave.pcm "null" file "\(dir)/mic.raw" format "raw" }

    """
}

private let deviceA = Port(uid: "usb-a", type: .usbAudio, device: "usb-a", direction: .output, alsa: "routetest_a")
private let deviceB = Port(uid: "usb-b", type: .usbAudio, device: "usb-b", direction: .output, alsa: "routetest_b")

/// Opens `audioroute` from the system configuration plus the bench and the
/// generated file, and plays `frames` (S16_LE stereo 48 kHz) through it.
private func play(_ frames: [UInt8], dir: String, config path: String) throws {
    var configuration = try ALSAConfiguration.system()
    try configuration.load(file: dir + "/bench.conf")
    try configuration.load(file: path)
    var pcm = try PCM(name: AlsaRouteConfig.outputPCM, configuration: configuration)
    try pcm.configure(format: .s16LE, channels: 2, rate: 48000)
    #expect(try pcm.write(frames) == frames.count / 4)
    try pcm.drain()
}

private func fileBytes(_ path: String) -> [UInt8]? { try? AtomicFile.read(path) }

@Suite struct AlsaFilePCMTests {
    @Test func audiorouteFollowsTheRouteFromAToB() throws {
        try withSyncTemporaryDirectory { dir in
            try writeFile(dir + "/bench.conf", benchConfiguration(dir))
            let writer = AlsaRouteConfigWriter(runtimeDirectory: dir + "/run")
            var tower = Tower()
            _ = try tower.addPorts([deviceA])
            #expect(tower.route.outputs == ["usb-a"])
            try writer.write(AlsaRouteConfig(route: tower.route, ports: tower.ports))

            let first = pattern(4800 * 4, seed: 1)
            try play(first, dir: dir, config: writer.path)
            #expect(fileBytes(dir + "/a.raw") == first)
            #expect(fileBytes(dir + "/b.raw") == nil)

            // B arrives later: last in wins, the route moves, the file is rewritten.
            let outcome = try tower.addPorts([deviceB])
            #expect(outcome.change?.current.outputs == ["usb-b"])
            try writer.write(AlsaRouteConfig(route: tower.route, ports: tower.ports))

            let second = pattern(960 * 4, seed: 2)
            try play(second, dir: dir, config: writer.path)
            #expect(fileBytes(dir + "/b.raw") == second)
            #expect(fileBytes(dir + "/a.raw") == first, "A's file is untouched once the route left it")
        }
    }

    /// The player's path (the plugin's mover, as `AudioPlayer` opens the route): a multiRoute
    /// route's two outputs each get every frame.
    @Test func theRouteFollowerPlaysToEveryOutputOfAMultiRouteRoute() throws {
        try withSyncTemporaryDirectory { dir in
            try writeFile(dir + "/bench.conf", benchConfiguration(dir))
            let writer = AlsaRouteConfigWriter(runtimeDirectory: dir + "/run")
            try writer.write(AlsaRouteConfig(outputs: [deviceA, deviceB], input: nil))
            let frames = pattern(4800 * 4, seed: 3)
            do {
                var pcm = try PCM(followingRoute: writer.path, routePCM: AlsaRouteConfig.outputPCM, configurationFiles: [dir + "/bench.conf"])
                try pcm.configure(format: .s16LE, channels: 2, rate: 48000)
                #expect(try pcm.write(frames) == frames.count / 4)
                try pcm.drain()
            }
            #expect(fileBytes(dir + "/a.raw") == frames)
            #expect(fileBytes(dir + "/b.raw") == frames)
        }
    }

    @Test func theRuntimeDirectoryIsPrivateAndNoTemporaryFileRemains() throws {
        try withSyncTemporaryDirectory { dir in
            let writer = AlsaRouteConfigWriter(runtimeDirectory: dir + "/run/user")
            try writer.write(AlsaRouteConfig(output: deviceA, input: nil))
            try writer.write(AlsaRouteConfig(output: deviceB, input: nil))
            var info = stat()
            #expect(stat(writer.directory, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700)
            #expect(access(AtomicFile.temporaryPath(for: writer.path), F_OK) != 0)
            let text = String(decoding: try AtomicFile.read(writer.path), as: UTF8.self)
            #expect(text == AlsaRouteConfig(output: deviceB, input: nil).text)
        }
    }

    /// The directory is made when a write finds it missing, also after someone removed it
    /// while the daemon ran, with its private mode; the route then plays on the new device.
    @Test func aRemovedRuntimeDirectoryIsMadeAgainByTheNextWrite() throws {
        try withSyncTemporaryDirectory { dir in
            try writeFile(dir + "/bench.conf", benchConfiguration(dir))
            let writer = AlsaRouteConfigWriter(runtimeDirectory: dir + "/run")
            try writer.write(AlsaRouteConfig(output: deviceA, input: nil))
            #expect(unlink(writer.path) == 0)
            #expect(rmdir(writer.directory) == 0)
            try writer.write(AlsaRouteConfig(output: deviceB, input: nil))
            var info = stat()
            #expect(stat(writer.directory, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700)
            let second = pattern(4800 * 4, seed: 7)
            try play(second, dir: dir, config: writer.path)
            #expect(fileBytes(dir + "/b.raw") == second)
        }
    }

    @Test func openingAnUndefinedPCMIsATypedErrorWithLibasoundsText() throws {
        let configuration = try ALSAConfiguration()
        do {
            _ = try PCM(name: "audioroute_nowhere", configuration: configuration)
            Issue.record("opening an undefined PCM succeeded")
        } catch {
            #expect(error.code < 0)
            #expect(error.operation == "snd_pcm_open audioroute_nowhere")
            #expect(!error.message.isEmpty)
            #expect(error.description.hasPrefix("snd_pcm_open audioroute_nowhere: "))
        }
    }

    @Test func aMalformedConfigurationIsATypedError() throws {
        var configuration = try ALSAConfiguration()
        do {
            try configuration.load(text: "pcm.broken { type plug slave.pcm ")
            Issue.record("a truncated configuration loaded")
        } catch {
            #expect(error.operation == "snd_config_load")
            #expect(error.code < 0)
        }
    }

    /// The ~/.asoundrc lines of docs/alsa.md, used by aplay under a temporary
    /// HOME: `aplay -D audioroute` plays to whatever the route is now (the route file's
    /// `audioroute`: no plugin is installed in this test's configuration).
    @Test func theDocumentedAsoundrcLinesWorkWithAplay() throws {
        try withSyncTemporaryDirectory { dir in
            let docs = String(decoding: try AtomicFile.read(packageRoot + "/docs/alsa.md"), as: UTF8.self)
            let snippet = try asoundrcSnippet(docs)
            try writeFile(dir + "/.asoundrc", benchConfiguration(dir) + snippet)
            let runtime = dir + "/run"
            let environment = ["HOME": dir, "XDG_RUNTIME_DIR": runtime, "XDG_CONFIG_HOME": dir + "/config"]
            let frames = pattern(4000, seed: 3)
            try AtomicFile.write(frames, to: dir + "/in.raw")
            let aplay = ["-q", "-D", "audioroute", "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000", dir + "/in.raw"]

            // Before the daemon wrote anything, the include is skipped and ALSA still works.
            let missing = try run("/usr/bin/aplay", ["-q", "-D", "routetest_b", "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000", dir + "/in.raw"], environment: environment)
            #expect(missing.status == 0, "stderr: \(missing.stderr)")

            let writer = AlsaRouteConfigWriter(runtimeDirectory: runtime)
            for (port, file) in [(deviceA, "a.raw"), (deviceB, "mic.raw")] {
                var routed = port
                if file == "mic.raw" { routed.alsa = "routetest_mic" }
                try writer.write(AlsaRouteConfig(output: routed, input: nil))
                let result = try run("/usr/bin/aplay", aplay, environment: environment)
                #expect(result.status == 0, "stderr: \(result.stderr)")
                // aplay pads its last period with silence: the frames, then zeros.
                let written = fileBytes(dir + "/" + file) ?? []
                #expect(written.count >= frames.count)
                #expect(Array(written.prefix(frames.count)) == frames)
                #expect(written.dropFirst(frames.count).allSatisfy { $0 == 0 })
            }
        }
    }

    /// A user's own name over the route, as docs/alsa.md shows it, over the system's
    /// configuration with BlueALSA's: `aplay -D audioroute_mono` plays the route's device
    /// (through the route file's `audioroute`, where no plugin defines it), mixed to mono.
    @Test func aUsersOwnNameOverTheRouteFollowsIt() throws {
        try withSyncTemporaryDirectory { dir in
            let docs = String(decoding: try AtomicFile.read(packageRoot + "/docs/alsa.md"), as: UTF8.self)
            let own = try asoundrcSnippet(docs, marker: "asoundrc-own")
            let system = try ALSAConfiguration.system()
            let hasBlueALSA = system.contains("pcm.bluealsa.@args")
            try #require(hasBlueALSA, "no BlueALSA pcm.bluealsa in the system's ALSA configuration: run scripts/bootstrap")
            try writeFile(dir + "/.asoundrc", benchConfiguration(dir) + asoundrcSnippet(docs) + own)
            let runtime = dir + "/run"
            let environment = ["HOME": dir, "XDG_RUNTIME_DIR": runtime, "XDG_CONFIG_HOME": dir + "/config"]
            try AlsaRouteConfigWriter(runtimeDirectory: runtime).write(AlsaRouteConfig(output: deviceA, input: nil))
            // Two frames (S16_LE stereo): each channel becomes the mean of both.
            try AtomicFile.write([0x00, 0x10, 0x00, 0x20, 0x00, 0x30, 0x00, 0x40], to: dir + "/in.raw")
            let result = try run(
                "/usr/bin/aplay", ["-q", "-D", "audioroute_mono", "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000", dir + "/in.raw"],
                environment: environment)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let written = fileBytes(dir + "/a.raw") ?? []
            #expect(Array(written.prefix(8)) == [0x00, 0x18, 0x00, 0x18, 0x00, 0x38, 0x00, 0x38])
            #expect(written.dropFirst(8).allSatisfy { $0 == 0 }, "aplay pads its last period with silence")
        }
    }

    /// Issue 17: a `pcm.audioroute` of the user's own, above or below the documented hook, wins
    /// over the route file's (`pcm.?audioroute`), as the ALSA plugin's does; the route stays
    /// reachable as `audioroute_route` (docs/alsa.md, "Your own definitions").
    @Test func aUsersOwnAudiorouteWinsOverTheRouteFile() throws {
        try withSyncTemporaryDirectory { dir in
            let docs = String(decoding: try AtomicFile.read(packageRoot + "/docs/alsa.md"), as: UTF8.self)
            let usersLine = "pcm.!audioroute { type file slave.pcm \"null\" file \"\(dir)/user.raw\" format \"raw\" }\n"
            let runtime = dir + "/run"
            let environment = ["HOME": dir, "XDG_RUNTIME_DIR": runtime, "XDG_CONFIG_HOME": dir + "/config"]
            try AlsaRouteConfigWriter(runtimeDirectory: runtime).write(AlsaRouteConfig(output: deviceA, input: nil))
            let frames = pattern(4000, seed: 4)
            try AtomicFile.write(frames, to: dir + "/in.raw")
            func aplay(_ device: String) throws -> (status: Int32, stderr: String) {
                try run("/usr/bin/aplay", ["-q", "-D", device, "-t", "raw", "-f", "S16_LE", "-c", "2", "-r", "48000", dir + "/in.raw"], environment: environment)
            }
            let hook = try asoundrcSnippet(docs)
            for asoundrc in [usersLine + hook, hook + usersLine] {
                try writeFile(dir + "/.asoundrc", benchConfiguration(dir) + asoundrc)
                for path in ["/a.raw", "/user.raw"] { unlink(dir + path) }
                let own = try aplay("audioroute")
                #expect(own.status == 0, "stderr: \(own.stderr)")
                // (Compared outside #expect, which would print both arrays.)
                let toUsers = Array((fileBytes(dir + "/user.raw") ?? []).prefix(frames.count)) == frames
                #expect(toUsers, "the user's own audioroute did not play")
                #expect(fileBytes(dir + "/a.raw") == nil, "the route file's audioroute replaced the user's")
                let route = try aplay(AlsaRouteConfig.outputPCM)
                #expect(route.status == 0, "stderr: \(route.stderr)")
                let toRoute = Array((fileBytes(dir + "/a.raw") ?? []).prefix(frames.count)) == frames
                #expect(toRoute, "audioroute_route did not play to the route")
            }
        }
    }

    /// Every ALSA definition in the documentation's fenced blocks (README.md, docs/*.md)
    /// overrides (`pcm.!name`), and each block defining one loads over the system's
    /// configuration: a reader copying one into ~/.asoundrc must not merge it into the system's.
    @Test func documentedALSADefinitionsOverride() throws {
        var checked = 0
        for file in ["README.md"] + markdownFiles(in: "docs") {
            let text = String(decoding: try AtomicFile.read(packageRoot + "/" + file), as: UTF8.self)
            for block in fencedBlocks(text) {
                var defines = false
                for line in block.split(separator: "\n") {
                    let definition = line.drop { $0 == " " || $0 == "\t" }
                    guard definition.hasPrefix("pcm.") || definition.hasPrefix("ctl.") else { continue }
                    defines = true
                    checked += 1
                    #expect(definition.dropFirst(4).hasPrefix("!"), "\(file): \(line)")
                }
                guard defines else { continue }
                var configuration = try ALSAConfiguration.system()
                do { try configuration.load(text: block) } catch { Issue.record("\(file): \(error):\n\(block)") }
            }
        }
        #expect(checked > 0, "the documentation defines no PCM at all: is docs/alsa.md's example gone?")
    }
}

/// The first fenced block after the `<!-- <marker> -->` line.
private func asoundrcSnippet(_ docs: String, marker name: String = "asoundrc") throws -> String {
    guard let marker = docs.firstRange(of: "<!-- \(name) -->") else { throw TestFailure("docs/alsa.md has no \(name) marker") }
    let rest = docs[marker.upperBound...]
    guard let open = rest.firstRange(of: "```\n") else { throw TestFailure("no fenced block") }
    let body = rest[open.upperBound...]
    guard let close = body.firstRange(of: "```") else { throw TestFailure("unterminated fenced block") }
    return String(body[..<close.lowerBound])
}

/// The `.md` files of a directory of the package, as paths relative to its root.
private func markdownFiles(in directory: String) -> [String] {
    guard let handle = opendir(packageRoot + "/" + directory) else { return [] }
    defer { closedir(handle) }
    var files: [String] = []
    while let entry = readdir(handle) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name.hasSuffix(".md") { files.append(directory + "/" + name) }
    }
    return files.sorted()
}

/// Every fenced block of a Markdown text.
private func fencedBlocks(_ text: String) -> [String] {
    var blocks: [String] = []
    var current: [Substring]?
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.hasPrefix("```") {
            if let block = current { blocks.append(block.joined(separator: "\n")) }
            current = current == nil ? [] : nil
        } else {
            current?.append(line)
        }
    }
    return blocks
}

private let packageRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}()
