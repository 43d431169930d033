// The real-kernel benches' own tests (bench/tests, Python's unittest, stdlib only) run with the
// suite: the guest's sources, and the bench's analysis and checkers on recorded guest logs and
// synthesized signals, without QEMU.
import Testing

@Suite struct BenchTests {
    @Test func theBenchsOwnTestsPass() throws {
        let tests = Subprocess.packageRoot + "/bench/tests"
        // No __pycache__ left in the tree by a test run.
        let result = try ChildProcess("/usr/bin/python3", ["-m", "unittest", "discover", "-s", tests],
                                      environment: ["PYTHONDONTWRITEBYTECODE": "1"]).collect()
        #expect(result.status == 0, "python3 -m unittest discover -s bench/tests exited \(result.status):\n\(result.stderr.suffix(4000))")
        // unittest reports how many ran: a discovery that found nothing passes, and must not here.
        #expect(result.stderr.contains("Ran ") && !result.stderr.contains("Ran 0 tests"), "\(result.stderr.suffix(2000))")
    }
}
