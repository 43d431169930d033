import ArgumentParser
import AudioRouteCore
import AudioRouteSystem

/// `audioroute simulate [FILE|-]`: runs a scenario (spec §8) and prints one JSON
/// line per step.
struct Simulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a route scenario and print one JSON line per step.",
        discussion: """
            The scenario is a JSON document with "ports", "sessions" and "steps" \
            (see docs/simulation.md). Line 0 is the state before any step; line N \
            the state after step N. A malformed scenario exits with status 65 (EX_DATAERR) \
            and a message naming the JSON path of the fault, and prints nothing; a file that \
            cannot be read, 66 (EX_NOINPUT).
            """
    )

    @Argument(help: "The scenario file, or - for standard input.", completion: .file(extensions: ["json"]))
    var file: String = "-"

    func run() throws {
        let bytes: [UInt8]
        do throws(Errno) {
            bytes = try file == "-" ? StandardStream.input.readToEnd() : AtomicFile.read(file)
        } catch {
            Terminal.error("cannot read \(file == "-" ? "standard input" : file): \(error.code)")
            throw ExitCode(file == "-" ? ExitStatus.ioError : ExitStatus.noInput)
        }
        let scenario: Scenario
        do {
            scenario = try Scenario.parse(bytes)
        } catch {
            Terminal.error(error.description)
            throw ExitCode(ExitStatus.dataError)
        }
        var out = OutputBuffer()
        do {
            let warnings = try Simulator.run(scenario, emitUTF8: { out.append($0) })
            out.flush()
            for warning in warnings { Terminal.warning("steps[\(warning.step - 1)]: \(warning.message)") }
        } catch {
            Terminal.error(error.description)
            throw ExitCode(ExitStatus.dataError)
        }
    }
}
