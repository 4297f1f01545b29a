import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The CPU time the processes of the system used, from the kernel's own accounting of each process: a figure that a
/// change making the path cheaper moves even where the machine is noisy, unlike a latency. Beside it, how many times
/// their threads stopped running (context switches): each a wake-up that a message's path paid for.
struct ProcessCPU: Sendable {
    /// The processes of the path by the name the kernel knows them by: the services, PostgreSQL (the postmaster and
    /// its backends), RabbitMQ (Erlang's VM), and the gateway. Every process of a name counts, in containers too.
    static let names = [
        "accounts", "places", "matching", "chat", "notifications", "media", "postgres", "beam.smp", "nginx",
    ]

    /// CPU seconds by name: user and system time of each live process, and of the children it has reaped (so that a
    /// PostgreSQL backend that ended during the run still counts, in its postmaster).
    let seconds: [String: Double]
    /// Context switches by name, waiting (voluntary) and preempted alike, summed over the live threads of each live
    /// process: a thread or process that ended before the sample no longer counts.
    let switches: [String: Double]

    /// Reads every process's `/proc/<pid>/stat` now, counting the processes of `names` and of `also`; with
    /// `switches`, their threads' `/proc/<pid>/task/<tid>/status` too.
    static func sample(also: [String] = [], switches countsSwitches: Bool = false) -> ProcessCPU {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var seconds: [String: Double] = [:]
        var switches: [String: Double] = [:]
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { Int($0) != nil } ?? []
        for pid in pids {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
            else { continue }
            let name = String(stat[stat.index(after: open)..<close])
            guard names.contains(name) || also.contains(name) else { continue }
            // After the name: state, ppid, …; utime, stime, cutime and cstime are the 14th to 17th fields of the line.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 14 else { continue }
            let used = fields[11...14].compactMap { Double($0) }.reduce(0, +)
            seconds[name, default: 0] += used / ticks
            if countsSwitches {
                // NB: a `status` counts its own thread's switches only.
                let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
                for thread in threads {
                    guard
                        let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)
                    else { continue }
                    switches[name, default: 0] += Self.switches(inStatus: status)
                }
            }
        }
        return ProcessCPU(seconds: seconds, switches: switches)
    }

    /// The sum of a `/proc/<pid>/status`'s `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches`.
    static func switches(inStatus status: String) -> Double {
        status.split(separator: "\n").reduce(0) { sum, line in
            let parts = line.split(separator: ":")
            guard parts.count == 2, parts[0] == "voluntary_ctxt_switches" || parts[0] == "nonvoluntary_ctxt_switches",
                let count = Double(parts[1].trimmingCharacters(in: .whitespaces))
            else { return sum }
            return sum + count
        }
    }

    /// What each name used from `earlier` until this sample; names that used nothing are left out.
    func since(_ earlier: ProcessCPU) -> [String: Double] {
        Self.growth(of: seconds, since: earlier.seconds)
    }

    /// The context switches of each name from `earlier` until this sample (both taken with `switches`).
    func switchesSince(_ earlier: ProcessCPU) -> [String: Double] {
        Self.growth(of: switches, since: earlier.switches)
    }

    private static func growth(of counts: [String: Double], since earlier: [String: Double]) -> [String: Double] {
        counts.reduce(into: [:]) { grown, entry in
            let delta = entry.value - (earlier[entry.key] ?? 0)
            if delta > 0 { grown[entry.key] = delta }
        }
    }
}

/// The whole machine's CPU time, from the kernel's first line of `/proc/stat`, in seconds summed over the cores.
struct MachineCPU: Sendable {
    /// Time no process wanted (waiting for the disk included).
    var idle = 0.0
    /// Time the hypervisor gave to another machine while this one wanted to run.
    var stolen = 0.0
    var total = 0.0

    static func sample() -> MachineCPU {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return MachineCPU() }
        // user nice system idle iowait irq softirq steal (guest time is counted in user already)
        let ticks = line.split(separator: " ").dropFirst().prefix(8).compactMap { Double($0) }
        guard ticks.count == 8 else { return MachineCPU() }
        let perSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        return MachineCPU(
            idle: (ticks[3] + ticks[4]) / perSecond, stolen: ticks[7] / perSecond,
            total: ticks.reduce(0, +) / perSecond)
    }

    /// What the machine did from `earlier` until this sample.
    func since(_ earlier: MachineCPU) -> MachineCPU {
        MachineCPU(idle: idle - earlier.idle, stolen: stolen - earlier.stolen, total: total - earlier.total)
    }
}
