import Foundation
import Synchronization
import Testing
import TresorDBus
import TresorTestSupport

@testable import TresorDesktopPrompt

/// Not a test: the measurement recorded in BENCHMARKS.md ("The desktop prompter"), run by hand
/// with `TRESOR_MEASURE_DESKTOP_PROMPT=1 swift test --skip-build --filter DesktopPromptTimings`.
/// It asserts only that each prompt was answered; the times are printed, never checked.
@Suite(
    .blocksItsThread, .serialized, .enabled(if: DesktopSession.canRun && ProcessInfo.processInfo.environment["TRESOR_MEASURE_DESKTOP_PROMPT"] == "1"))
struct DesktopPromptTimings {
    @Test func measure() throws {
        let desktop = try DesktopSession()
        let prompter = SystemPrompter(busAddress: desktop.busAddress)
        let text = SystemPrompterTests.text
        // Tresor's own work, without the prompter's answers: connect and check the prompter,
        // agree the exchange's key (a 1536-bit key pair and the shared secret).
        let begun = SecretExchangeVectorTests.vectors[0].begun
        var check: [Double] = [], exchange: [Double] = []
        for _ in 0..<30 {
            check.append(
                try milliseconds {
                    let connection = try DBusConnection(address: desktop.busAddress)
                    _ = try PrompterOwner(
                        on: connection, trusted: prompter.trustedExecutables, start: false, deadline: .now + .seconds(5),
                        holding: CheckedPrompterConnection())
                })
            exchange.append(try milliseconds { _ = try SecretExchange(begun: begun) })
        }
        // Whole prompts with the prompter running: request → prompter asked (PerformPrompt
        // answered), and request → its window visible on the display.
        var asked: [Double] = [], visible: [Double] = []
        for round in 0..<11 {
            let start = ContinuousClock.now
            let askedAt = Mutex<ContinuousClock.Instant?>(nil)
            let answer = Pending<ConfirmAnswer>()
            let cancellation = PromptCancellation()
            Thread.detachNewThread {
                answer.set(
                    Result {
                        try prompter.confirm(text, timeout: .seconds(30), cancellation: cancellation, asked: { askedAt.withLock { $0 = .now } })
                    }.mapError { $0 as? PrompterError ?? .protocolFailure("\($0)") })
            }
            try waitUntil("the window", seconds: 20) {
                !((try? desktop.run("/usr/bin/xdotool", ["search", "--onlyvisible", "--name", text.title])) ?? "").isEmpty
            }
            let shown = ContinuousClock.now
            usleep(300_000)
            try desktop.xdotool("key", "alt+a")
            #expect(try answer.wait() == .success(.allowedOnce))
            if round > 0, let askedAt = askedAt.withLock({ $0 }) {  // the first one warms the prompter up
                asked.append((askedAt - start).inMilliseconds)
                visible.append((shown - start).inMilliseconds)
            }
        }
        print(
            """
            desktop prompt timings (ms, median / max):
              prompter found and checked: \(summary(check))
              secret exchange agreed:     \(summary(exchange))
              request → prompter asked:   \(summary(asked))
              request → window visible:   \(summary(visible))
            """)
    }

    private func milliseconds(_ body: () throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        try body()
        return (ContinuousClock.now - start).inMilliseconds
    }

    private func summary(_ values: [Double]) -> String {
        let sorted = values.sorted()
        return String(format: "%.2f / %.2f (n=%d)", sorted[sorted.count / 2], sorted.last ?? 0, sorted.count)
    }
}

extension Duration {
    var inMilliseconds: Double { Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15 }
}
