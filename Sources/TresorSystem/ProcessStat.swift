import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The fields of `/proc/<pid>/stat` Tresor reads: a process's state, its parent, its session and
/// terminal (a terminal is known by them), and its start time.
public struct ProcessStat {
    /// The state letter: `R`, `S`, … `Z` for a zombie, `X` for a dead process.
    var state: UInt8
    var parent: Int32
    var processGroup: Int32
    var session: Int32
    var terminal: UInt64
    /// The process group in the foreground of the controlling terminal now (-1 without one).
    var terminalForegroundGroup: Int32
    var startTime: UInt64

    /// Whether process `pid` has ended: it is gone, or a zombie its parent has not reaped yet.
    /// - Parameters:
    ///   - pid: the process.
    ///   - procRoot: where procfs is mounted.
    /// - Returns: true when no running process has that pid.
    public static func hasEnded(_ pid: Int32, procRoot: String = "/proc") -> Bool {
        guard let stat = ProcessStat(pid: pid, procRoot: procRoot) else { return true }
        return stat.state == UInt8(ascii: "Z") || stat.state == UInt8(ascii: "X")
    }

    init?(pid: Int32, procRoot: String) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let fd = open("\(procRoot)/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard count > 0 else { return nil }
        self.init(parsing: buffer[..<count])
    }

    /// Parses a `stat` line. The command name (field 2) is in parentheses and may itself
    /// hold spaces and parentheses, so the fields are counted after its *last* `)`.
    init?(parsing text: String) { self.init(parsing: Array(text.utf8)[...]) }

    /// Read as bytes, not as a `String`: every new Secret Service client has its stat and each
    /// of its ancestors' read.
    init?(parsing line: ArraySlice<UInt8>) {
        guard let close = line.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = line[(close + 1)...].split(separator: UInt8(ascii: " "))
        // After the name: state(3) ppid(4) pgrp(5) session(6) tty_nr(7) tpgid(8) … starttime(22).
        guard fields.count >= 20, let state = fields[0].first, let parent = Self.number(fields[1]).flatMap(Int32.init(exactly:)),
            let group = Self.number(fields[2]).flatMap(Int32.init(exactly:)), let session = Self.number(fields[3]).flatMap(Int32.init(exactly:)),
            let terminal = Self.number(fields[4]), let foreground = Self.number(fields[5]).flatMap(Int32.init(exactly:)),
            let start = Self.number(fields[19]).flatMap(UInt64.init(exactly:))
        else { return nil }
        self.state = state
        self.parent = parent
        self.processGroup = group
        self.session = session
        self.terminalForegroundGroup = foreground
        self.terminal = UInt64(bitPattern: terminal)
        self.startTime = start
    }

    /// A decimal field, signed; nil for anything else or past 64 bits.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        let negative = digits.first == UInt8(ascii: "-")
        let magnitude = negative ? digits.dropFirst() : digits
        guard !magnitude.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in magnitude {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, carry) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = next
        }
        return negative ? -value : value
    }
}
