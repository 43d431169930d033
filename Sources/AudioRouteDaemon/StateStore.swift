// The state file: where it lives, how it is written so that no crash loses
// it, and what happens when it cannot be read.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteDBus
import AudioRouteWatchers
import Logging

/// Reads and writes `<directory>/state.json`.
public struct StateStore: Sendable {
    /// The state directory (created 0700 on the first save).
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// The state file.
    public var path: String { directory + "/state.json" }

    /// What `load` found.
    public enum LoadOutcome: Sendable, Hashable, CustomStringConvertible {
        /// No state file: a first start.
        case fresh
        case loaded
        /// The file could not be used; it was renamed to `movedTo` (nil if even that failed).
        case movedAside(movedTo: String?, reason: String)

        public var description: String {
            switch self {
            case .fresh: return "fresh"
            case .loaded: return "loaded"
            case .movedAside(let movedTo, let reason): return "moved aside to \(movedTo ?? "nowhere"): \(reason)"
            }
        }
    }

    /// The saved state, or defaults. A file that cannot be read or parsed, or
    /// holds a value beyond the state's limits (`DaemonState.maxFileBytes` and the
    /// others), is moved aside to `state.json.corrupt-<UTC timestamp>` with a
    /// warning naming the fault, so that the daemon starts anyway and the user's
    /// data can still be recovered by hand. So is anything that is not a regular
    /// file (a symbolic link, even to a valid file, a FIFO, a directory, a device):
    /// it is refused without being read, and nothing blocks
    /// (`AtomicFile.readRegularFile`). Never throws: a daemon must start with a
    /// broken state file.
    public func load(logger: Logger) -> (DaemonState, LoadOutcome) {
        let reason: String
        do throws(FileReadError) {
            let bytes = try AtomicFile.readRegularFile(path, limit: DaemonState.maxFileBytes)
            do throws(JSONSyntaxError) {
                let json = try JSON.parse(bytes)
                do throws(StateFileError) {
                    return (try DaemonState(json: json), .loaded)
                } catch {
                    reason = error.description
                }
            } catch {
                reason = "not JSON: \(error)"
            }
        } catch {
            if case .system(let failure) = error, failure.code == .noSuchFileOrDirectory { return (DaemonState(), .fresh) }
            reason = error.description
        }
        let aside = moveAside()
        if let aside {
            logger.warning("state file unusable, moved aside; starting with defaults", metadata: ["path": "\(path)", "reason": "\(reason)", "movedTo": "\(aside)"])
        } else {
            logger.error("state file unusable and cannot be moved aside; starting with defaults", metadata: ["path": "\(path)", "reason": "\(reason)"])
        }
        return (DaemonState(), .movedAside(movedTo: aside, reason: reason))
    }

    /// Saves `state` atomically and durably (AtomicFile.write: temporary file,
    /// fsync, rename, fsync of the directory). After it returns, a crash or
    /// power loss at any moment leaves this state or a later one.
    ///
    /// What is written is `state.bounded()`, which `load` accepts: the oldest
    /// sequences may be forgotten. Settings beyond `DaemonState.settingsProblem`'s
    /// limits (which RouteService never accepts) fail with EFBIG rather than
    /// write a file that `load` would refuse.
    public func save(_ state: DaemonState) throws(Errno) {
        let bytes = state.bounded().fileBytes
        guard bytes.count <= DaemonState.maxFileBytes else { throw Errno(.fileTooLarge, "save", path: path) }
        try AtomicFile.createDirectory(directory, mode: 0o700)
        try AtomicFile.write(bytes, to: path, mode: 0o600)
    }

    private func moveAside() -> String? {
        let stamp = UTCTime.now().basicISO8601
        for attempt in 0..<100 {
            let target = path + ".corrupt-" + stamp + (attempt == 0 ? "" : "-\(attempt)")
            // link + unlink rather than rename: never replaces an earlier corrupt file.
            do throws(Errno) {
                try FileNames.link(path, to: target)
                try? FileNames.unlink(path)
                return target
            } catch where error.code == .fileExists {
                continue
            } catch {
                // link can fail where rename works (a directory in the way, a filesystem without links).
                guard (try? FileStatus(path: target, followLinks: false)) == nil else { return nil }
                return (try? FileNames.rename(path, to: target)) != nil ? target : nil
            }
        }
        return nil
    }
}

extension StateStore {
    /// The default state directory: `$XDG_STATE_HOME/audioroute`, else
    /// `$HOME/.local/state/audioroute`; `/var/lib/audioroute` for a system
    /// instance. Nil when neither variable is set for a user instance.
    public static func defaultDirectory(system: Bool, environment: [String: String]) -> String? {
        if system { return "/var/lib/audioroute" }
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/audioroute" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.local/state/audioroute" }
        return nil
    }
}
