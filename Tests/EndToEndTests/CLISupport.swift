import Foundation
import Synchronization
import Testing

extension Harness {
    /// What a command showed on a pseudo-terminal, and how it ended.
    struct Screen {
        var text: String
        var status: Int32
    }

    /// Runs `tresor arguments` on a pseudo-terminal (its standard input, output and error, and
    /// its controlling terminal), answering each prompt: once the screen shows `expect` after
    /// the previous answer, types `send` and Enter.
    /// - Parameters:
    ///   - input: standard input instead of the terminal (the terminal stays the controlling one).
    ///   - environment: added to the harness's environment.
    func onTerminal(
        _ arguments: [String], answers: [(expect: String, send: String)] = [], input: String? = nil,
        environment extra: [String: String] = [:], timeout: TimeInterval = 30
    ) throws -> Screen {
        let result = try run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", Self.terminalDriver],
                             input: try Self.terminalSpec(arguments, answers: answers, input: input, timeout: timeout),
                             environment: environment.merging(extra) { $1 }, timeout: timeout + 10)
        return try Self.screen(of: result, arguments, timeout: timeout)
    }

    /// Forks the command its JSON spec (standard input) names on a new pseudo-terminal — its
    /// session's controlling terminal, the command in its foreground — and answers its prompts;
    /// prints the screen and the exit status as JSON.
    static let terminalDriver = """
        import json, os, pty, sys, time
        spec = json.loads(sys.stdin.read())
        pid, fd = pty.fork()
        if pid == 0:
            if spec.get("input") is not None:
                r, w = os.pipe()
                os.write(w, spec["input"].encode()); os.close(w)
                os.dup2(r, 0)
            os.execv(spec["argv"][0], spec["argv"])
        screen = b""
        seen = 0
        deadline = time.time() + spec["timeout"]
        def more():
            global screen
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            screen += chunk
            return True
        for expect, send in spec["answers"]:
            while expect.encode() not in screen[seen:] and time.time() < deadline:
                if not more(): break
            seen = len(screen)
            time.sleep(0.15)
            os.write(fd, send.encode() + b"\\n")
        while time.time() < deadline and more():
            pass
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"screen": screen.decode(errors="replace"), "status": os.waitstatus_to_exitcode(status)}))
        """

    /// ``terminalDriver``'s input: `tresor arguments`, the answers, and standard input if any.
    static func terminalSpec(
        _ arguments: [String], answers: [(expect: String, send: String)], input: String?, timeout: TimeInterval
    ) throws -> String {
        struct Spec: Encodable { var argv: [String]; var answers: [[String]]; var input: String?; var timeout: Double }
        let spec = Spec(argv: [binaries.appendingPathComponent("tresor").path] + arguments,
                        answers: answers.map { [$0.expect, $0.send] }, input: input, timeout: timeout)
        return String(decoding: try JSONEncoder().encode(spec), as: UTF8.self)
    }

    /// The screen ``terminalDriver`` reported.
    static func screen(of result: Result, _ arguments: [String], timeout: TimeInterval) throws -> Screen {
        struct Answer: Decodable { var screen: String; var status: Int32 }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(result.stdout.utf8)) else {
            throw HarnessError.timedOut("tresor \(arguments.joined(separator: " ")) on a terminal: \(result.stderr)", after: timeout)
        }
        return Screen(text: answer.screen, status: answer.status)
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
