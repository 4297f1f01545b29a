import Foundation
import Testing

@testable import LoadGenerator

/// The context switches `load` reports beside CPU time, read from the kernel's status files.
@Suite struct ProcessCPUTests {
    @Test func aStatusFilesSwitchesAreItsVoluntaryAndPreemptedOnesSummed() {
        let status = """
            Name:\tchat
            State:\tS (sleeping)
            Threads:\t17
            voluntary_ctxt_switches:\t1200
            nonvoluntary_ctxt_switches:\t34
            """
        #expect(ProcessCPU.switches(inStatus: status) == 1234)
        #expect(ProcessCPU.switches(inStatus: "Name:\tnginx\nState:\tS (sleeping)\n") == 0)
    }

    @Test func aProcesssSwitchesAreCountedOverAllItsThreads() throws {
        let name = try String(contentsOfFile: "/proc/self/comm", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let before = ProcessCPU.sample(also: [name], switches: true)
        // NB: another thread waits, and so stops running, 200 times, and stays alive until it was counted.
        let waited = DispatchSemaphore(value: 0)
        let counted = DispatchSemaphore(value: 0)
        Thread {
            for _ in 0..<200 { usleep(100) }
            waited.signal()
            counted.wait()
        }.start()
        waited.wait()
        let after = ProcessCPU.sample(also: [name], switches: true)
        counted.signal()
        #expect(after.switchesSince(before)[name, default: 0] >= 200)
        #expect(ProcessCPU.sample(also: [name]).switches.isEmpty)
    }
}
