import Foundation
import Synchronization
import Testing
import TresorTestSupport

extension Harness {
    /// What a command showed on a pseudo-terminal, and how it ended.
    typealias Screen = Terminal.Screen

    /// Runs `tresor arguments` on a pseudo-terminal (its standard input, output and error, and
    /// its controlling terminal; ``Terminal``), answering each prompt: once the screen shows `expect`
    /// after the previous answer, types `send` and Enter; then answers `prompts` whenever they end the screen.
    /// - Parameters:
    ///   - input: standard input instead of the terminal (the terminal stays the controlling one).
    ///   - environment: added to the harness's environment.
    func onTerminal(
        _ arguments: [String], answers: [(expect: String, send: String)] = [], prompts: [Terminal.Prompt] = [], input: String? = nil,
        environment extra: [String: String] = [:], timeout: TimeInterval = 30
    ) throws -> Screen {
        let request = try Terminal.request(
            [Self.binaries.appendingPathComponent("tresor").path] + arguments, answers: answers, prompts: prompts, input: input, timeout: timeout)
        let result = try run(
            Terminal.python, Terminal.driverArguments, input: request, environment: environment.merging(extra) { $1 }, timeout: timeout + 10)
        return try Terminal.screen(result)
    }

    /// An executable shell script `name` in a folder of the harness (put it first on `PATH`, or
    /// name it in `EDITOR`).
    func script(_ name: String, _ body: String) throws -> URL {
        let folder = root.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try Data(("#!/bin/sh\n" + body + "\n").utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        return url
    }

    /// The harness's environment with the scripts' folder first on `PATH`, and `extra`.
    func environment(withScripts extra: [String: String] = [:]) -> [String: String] {
        var environment = self.environment.merging(extra) { $1 }
        environment["PATH"] = root.appendingPathComponent("bin").path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        return environment
    }
}

/// Reads every process's command line (`/proc/<pid>/cmdline`, which every local user may
/// read) over and over on a thread of its own, as `ps` would, and keeps the ones that hold
/// one of the words it watches for — and how many `tresor` command lines it saw at all.
final class CommandLineWatcher: @unchecked Sendable {
    private let words: [String]
    private let state = Mutex((running: true, found: [String](), tresorSeen: Set<String>()))
    private let done = DispatchSemaphore(value: 0)

    init(watchingFor words: [String]) {
        self.words = words
        Thread.detachNewThread { [self] in
            while state.withLock({ $0.running }) { scanOnce() }
            done.signal()
        }
    }

    private func scanOnce() {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return }
        for entry in entries where entry.first?.isNumber == true {
            guard let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"), !raw.isEmpty else { continue }
            let line = String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            let hits = words.filter { line.contains($0) }
            let isTresor = line.contains("/tresor ") || line.hasSuffix("/tresor")
            if hits.isEmpty && !isTresor { continue }
            state.withLock {
                if !hits.isEmpty { $0.found.append(line) }
                if isTresor { $0.tresorSeen.insert("\(entry) \(line)") }
            }
        }
    }

    /// Stops watching; the command lines that held a watched word, and how many distinct
    /// `tresor` processes were seen.
    func stop() -> (found: [String], tresorProcesses: Int) {
        state.withLock { $0.running = false }
        done.wait()
        return state.withLock { ($0.found, $0.tresorSeen.count) }
    }
}
