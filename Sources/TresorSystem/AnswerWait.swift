#if canImport(Glibc)
import Glibc
#endif

/// How a client waits for the daemon's answer on its socket: it polls the socket for a moment
/// before it sleeps in `recv`.
///
/// A thread asleep in `recv` is woken by the answer, and on a virtual machine that wake-up — the
/// scheduler, an interrupt to an idle CPU, the hypervisor — costs about as much as the daemon's
/// whole work for a keychain lookup (BENCHMARKS.md §1). Polling for up
/// to ``window`` takes the wake-up away when the answer comes quickly, and costs the client its
/// CPU meanwhile. When answers stop coming within the window — a slow request, a busy daemon,
/// clients contending for the CPUs — polling only burns that CPU, so each miss makes the client
/// sleep through the next answers instead: one after the first miss, twice as many after each
/// further miss in a row, up to ``longestPause``; an answer caught while polling starts it over.
/// With one CPU it never polls: the daemon could not answer meanwhile.
///
/// One per connection, used by one thread at a time (it is a value with the connection's state).
public struct AnswerWait: Sendable {
    /// How long a client polls, in nanoseconds: long enough to catch most answers of a keychain
    /// lookup, short enough to cost concurrent clients nothing (BENCHMARKS.md, "Measured design choices").
    public static let window: Int = 150_000
    /// The most answers waited for asleep after misses in a row.
    public static let longestPause = 64

    /// Answers still to be waited for asleep before polling again.
    private(set) var pause = 0
    /// The pause the next miss starts.
    private var nextPause = 1
    /// Answers that arrived while polling, and polls that ended asleep (for the tests).
    private(set) var caught = 0, missed = 0
    private let polls: Bool

    /// A wait for a process with `processors` CPUs online (by default this machine's).
    public init(processors: Int = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) {
        polls = processors > 1
    }

    /// Whether the next answer will be polled for.
    var pollsNext: Bool { polls && pause == 0 }

    /// Receives what has arrived on the connected socket `fd` into `buffer`, as `recv(fd, …, 0)`
    /// does: the number of bytes, 0 at the end of the stream, or -1 with `errno` set (never
    /// `EINTR`: an interrupted wait goes on).
    public mutating func receive(from fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if pollsNext {
            let deadline = Self.now() + Self.window
            repeat {
                let count = recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                if count >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    record(answeredWhilePolling: true)
                    return count
                }
            } while Self.now() < deadline
            record(answeredWhilePolling: false)
        } else if pause > 0 {
            pause -= 1
        }
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            return count
        }
    }

    /// Moves the backoff on after a poll: a catch starts it over, a miss starts the next, longer, pause.
    mutating func record(answeredWhilePolling caught: Bool) {
        if caught {
            self.caught += 1
            nextPause = 1
        } else {
            missed += 1
            pause = nextPause
            nextPause = min(nextPause * 2, Self.longestPause)
        }
    }

    private static func now() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }
}
