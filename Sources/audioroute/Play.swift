import ArgumentParser
import AudioRouteCore
import AudioRouteIPC
import AudioRouteSystem
import AudioSession

/// `audioroute play FILE [--category C] [--mode M] [--options ...] [--device PCM] [--loops N] [--rate R] [--at T]`
struct Play: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play an audio file on the current route, following route changes, interruptions and ducking.",
        discussion: """
            Opens a session with the category (playback by default), activates it and plays FILE (a path \
            or a file:// URL; WAV, AIFF, CAF, FLAC, Ogg Vorbis, Opus, MP3 or another format libsndfile \
            reads, 1 to 8 channels, more than two mixed down to stereo) on \
            the ALSA PCM `audioroute_route` (the route's device, rewritten by audiorouted) or --device. \
            Unplugging the output pauses (as iOS players do); an interruption pauses and resumes only \
            if it was playing and the interruption ends with shouldResume; ducking lowers the volume. \
            --rate plays faster or slower keeping the pitch (SoundTouch), or with --varispeed pitch \
            included (the time shown is the file's). \
            --at starts the sound at a time on CLOCK_MONOTONIC, silence written first: two players \
            given the same time start together. \
            On a terminal one progress line is rewritten in place; otherwise a plain line is printed on \
            every change. Exit status: 0 when the file played to its end, 1 on a bad file, no daemon \
            or an output error, 130 on SIGINT and 143 on SIGTERM (the session is deactivated with \
            notifyOthersOnDeactivation first).
            """
    )

    @OptionGroup var daemon: BusOptions

    @Option(help: "The session's category.", completion: Completions.categories)
    var category: String = "playback"

    @Option(help: "The session's mode.", completion: Completions.modes)
    var mode: String = "default"

    @Option(name: .customLong("options"), help: "Category options, comma-separated (e.g. mixWithOthers,duckOthers).", completion: Completions.options)
    var categoryOptions: String = ""

    @Option(help: "The ALSA PCM to play to (default: audioroute_route, the current route).")
    var device: String = AlsaRouteConfig.outputPCM

    // Unconditional: "-1" is a value here, not an option.
    @Option(name: .customLong("loops"), parsing: .unconditional, help: "Times to play the file again (-1: forever).")
    var loops: Int = 0

    @Option(help: "Playback rate, 0.5 (half speed) to 2 (double speed); the pitch is kept (see --varispeed).")
    var rate: Double?

    @Flag(help: "With --rate: change speed and pitch together, like a tape (a resampler), instead of keeping the pitch.")
    var varispeed = false

    @Option(help: "Start so that the first frame is heard at this time, in seconds of CLOCK_MONOTONIC (the player's deviceCurrentTime; /proc/uptime's clock on a machine that has not slept).")
    var at: Double?

    @Argument(help: "The audio file to play (a path or a file:// URL).", completion: .file())
    var file: String

    func validate() throws {
        _ = try parsedOptions()
        // Rejected rather than clamped (as AudioPlayer.rate does): a typo should not play at another speed.
        if let at, !(at.isFinite && at > 0) {
            throw ValidationError("--at must be a time in seconds on CLOCK_MONOTONIC (got \(at))")
        }
        if let rate, !(0.5...2).contains(rate) {
            throw ValidationError("--rate must be between 0.5 and 2 (got \(rate))")
        }
    }

    func parsedOptions() throws -> CategoryOptions {
        try checkedSessionRequest(category: category, mode: mode, options: categoryOptions)
    }

    func run() async throws {
        LogOptions.bootstrap(level: .warning)
        // The file first: a bad file is reported without touching the daemon.
        let player: AudioPlayer
        do {
            // The route file of the daemon this command talks to: with --system, the system
            // instance's, not the user's (before, the player followed no route at all there).
            player = try AudioPlayer(
                contentsOf: file, device: device, routeFile: AudioPlayer.routeFile(for: daemon.bus))
        } catch {
            Terminal.error("\(error)")
            switch error {
            case .file(.missing), .file(.unreadable): throw ExitCode(ExitStatus.noInput)
            case .file: throw ExitCode(ExitStatus.dataError)
            default: throw ExitCode(1)
            }
        }
        player.numberOfLoops = loops
        if let rate {
            // Before play(), which prepares: enableRate is read there.
            player.enableRate = true
            player.keepsPitch = !varispeed
            player.rate = rate
        }
        let audio = daemon.session(app: "audioroute-play")
        let options = try parsedOptions()
        try await withDaemon(daemon) { () throws(AudioSessionError) in
            try await audio.setCategory(Category(rawValue: category)!, mode: Mode(rawValue: mode)!, options: options)
            try await audio.setActive(true)
        }
        let following = await player.follow(audio)
        let (outcomes, outcome) = AsyncStream.makeStream(of: Int32.self)
        let signals = SignalForward([.interrupt, .terminate]) { number in outcome.yield(128 + number) }
        let events = player.events
        let watcher = Task {
            for await event in events {
                switch event {
                case .finished(let successfully): outcome.yield(successfully ? 0 : 1)
                case .decodeError(let error): Terminal.error("\(error)")
                default: break
                }
            }
        }
        do {
            if let at { try player.play(atTime: at) } else { try player.play() }
        } catch {
            Terminal.error("\(error)")
            outcome.yield(1)
        }
        // After play(): the first line must show the state play() set, not the one before it.
        let progress = Task { await Self.showProgress(player, audio) }
        var status: Int32 = 1
        for await value in outcomes { status = value; break }
        signals.cancel()
        progress.cancel()
        watcher.cancel()
        following.cancel()
        player.stop()
        _ = await progress.value
        if StandardStream.output.isTerminal { StandardStream.output.write("\n") }
        do {
            try await audio.setActive(false, options: .notifyOthersOnDeactivation)
        } catch {
            if case .daemonUnavailable = error {} else { Terminal.warning("deactivating the session: \(error)") }
        }
        await audio.close()
        if status != 0 { throw ExitCode(status) }
    }

    /// The progress line: rewritten in place on a terminal, a plain line on every change otherwise.
    static func showProgress(_ player: AudioPlayer, _ audio: AudioSession) async {
        let tty = StandardStream.output.isTerminal
        var last = ""
        // At least one line, even when the file ended before the first tick.
        repeat {
            let route = ((try? await audio.currentRoute)?.outputs ?? []).map(\.portName).joined(separator: "+")
            let state = player.isPlaying ? "playing" : (player.isInterrupted ? "interrupted" : "paused")
            let ducked = player.isSilenced ? ", silenced" : (player.sessionGain < 1 ? ", ducked" : "")
            let line = "\(clock(player.currentTime))/\(clock(player.duration))  \(route.isEmpty ? "no output" : route)  \(state)\(ducked)"
            if tty {
                StandardStream.output.write("\r\(line)\u{1B}[K")
            } else {
                // Without a terminal, only changes (state, route) are printed, not the clock.
                let key = "\(route) \(state)\(ducked)"
                if key != last { StandardStream.output.write("\(line)\n"); last = key }
            }
            try? await Task.sleep(for: .milliseconds(250))
        } while !Task.isCancelled
    }

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.isFinite ? max(seconds, 0) : 0)
        let s = whole % 60
        return "\(whole / 60):\(s < 10 ? "0" : "")\(s)"
    }
}
