// Reading a WAV file from disk, for the tests: the reference the decoder and the engine are
// compared with, independent of libsndfile. The bytes are parsed by AudioRouteCore's pure WAVFile.
import AudioRouteCore
import AudioRouteSystem

/// Why a WAV file could not be loaded: the file itself, or its content.
public enum WAVFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No file at the path (ENOENT).
    case missing(path: String)
    /// The file exists but could not be read (permissions, a directory, I/O).
    case unreadable(Errno)
    /// The file was read but is not a WAV this player plays.
    case invalid(path: String, WAVError)

    public var description: String {
        switch self {
        case let .missing(path): "\(path): no such file"
        case let .unreadable(error): error.description
        case let .invalid(path, error): "\(path): \(error)"
        }
    }
}

extension WAVFile {
    /// Reads and parses the WAV file at `path`. The whole file is read into
    /// memory (as many bytes as are really there, whatever the header says).
    public init(contentsOf path: String) throws(WAVFileError) {
        let bytes: [UInt8]
        do {
            bytes = try AtomicFile.read(path)
        } catch {
            if error.code == .noSuchFileOrDirectory { throw .missing(path: path) }
            throw .unreadable(error)
        }
        do {
            try self.init(bytes: bytes)
        } catch {
            throw .invalid(path: path, error)
        }
    }
}
